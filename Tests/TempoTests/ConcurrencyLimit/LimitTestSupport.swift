import Tempo
import TempoTesting
import Testing

/// The running and waiting calls of the concurrency limit `key` in `registry`; `nil` when the key
/// is not live.
func limitCounts(_ registry: TempoRegistry, _ key: String) -> (running: Int, queued: Int)? {
    for entry in registry.snapshot().entries
    where entry.kind == .concurrencyLimit && entry.key == key {
        if case .concurrencyLimit(let running, let queued) = entry.state {
            return (running, queued)
        }
    }
    return nil
}

/// Waits until the key shows `running` and `queued` calls (both zero: the key is gone).
func awaitCounts(
    _ registry: TempoRegistry, _ key: String, running: Int, queued: Int
) async -> Bool {
    await eventually {
        guard let counts = limitCounts(registry, key) else { return running == 0 && queued == 0 }
        return counts == (running, queued)
    }
}

/// How many operations run at once, and the most that ever did.
final class InFlight: Sendable {
    private let state = Lock<(now: Int, peak: Int)>((0, 0))
    func enter() {
        state.withLock {
            $0.now += 1
            $0.peak = max($0.peak, $0.now)
        }
    }
    func leave() { state.withLock { $0.now -= 1 } }
    var peak: Int { state.withLock { $0.peak } }
    var now: Int { state.withLock { $0.now } }
}

/// A limited call with the identifier `key` whose operation logs its start and end (stamped with
/// the registry's time) and sleeps `seconds` on `clock` in between; its outcome is logged too.
func limitedCall(
    _ label: String, key: String = "api", limit: Int, queue: Int = .max,
    queueTimeout: Duration? = nil, seconds: Int = 1, clock: ManualClock, registry: TempoRegistry,
    log: Log<String>, inFlight: InFlight? = nil, fails: Bool = false
) -> Task<Void, any Error> {
    Task {
        try await concurrencyLimit(limit, queue: queue, queueTimeout: queueTimeout, identifier: key)
        {
            inFlight?.enter()
            defer { inFlight?.leave() }
            log.mark("start \(label)", registry)
            try await clock.sleep(for: .seconds(seconds))
            log.mark("end \(label)", registry)
            if fails { throw Boom() }
        }
    }
}

/// The error a task threw, `nil` when it returned.
func thrown(_ task: Task<Void, any Error>) async -> (any Error)? {
    do {
        try await task.value
        return nil
    } catch {
        return error
    }
}
