import Synchronization
import TempoTesting
import Testing

@testable import Tempo

/// The rate-limit row of `key` in `registry`'s snapshot: permits free, next permit, waiters.
func rateRow(_ registry: TempoRegistry, _ key: String) -> (
    tokens: Int, next: Duration, waiters: Int
)? {
    for entry in registry.snapshot().entries(.rateLimit) where entry.key == key {
        if case .rateLimit(let tokens, let next, let waiters) = entry.state {
            return (tokens, next, waiters)
        }
    }
    return nil
}

/// How many calls wait at `key`.
func rateWaiters(_ registry: TempoRegistry, _ key: String) -> Int {
    rateRow(registry, key)?.waiters ?? 0
}

/// `label@milliseconds`, the registry's time.
func at(_ label: String, _ registry: TempoRegistry) -> String {
    "\(label)@\(Int(registry.now / .milliseconds(1)))"
}

/// A call that waits at `key` in a task of its own (in `registry`), logging `label@ms` when it
/// is admitted and `label!error` when it throws; returns once the call waits in the queue.
@discardableResult
func startWaiter(
    _ label: String, _ limit: RateLimit, weight: Int = 1, policy: RateLimitPolicy = .wait,
    key: String, registry: TempoRegistry, log: Log<String>
) async -> Task<Void, Never> {
    let before = rateWaiters(registry, key)
    let task = Task {
        await registry.withCurrent {
            do {
                try await rateLimit(limit, weight: weight, whenLimited: policy, identifier: key) {
                    log.append(at(label, registry))
                }
            } catch {
                log.append("\(label)!\(error)")
            }
        }
    }
    let queued = await eventually { rateWaiters(registry, key) == before + 1 }
    #expect(queued, "\(label) did not queue")
    return task
}

/// The error `takeRatePermit` throws, or `nil` when it admits.
func take(_ limit: RateLimit, weight: Int = 1, key: String) -> RateLimitError? {
    do {
        try takeRatePermit(limit, weight: weight, identifier: key)
        return nil
    } catch {
        return error
    }
}

/// An observer of `registry` writing its rate-limit events as the model checks compare them,
/// each with its instant in whole `tick`s from `origin`: "3: queued 4", "5: admitted 2",
/// "6: refused 3 waited 1". Compare them with ``inInstantOrder(_:)``: events of one instant
/// come from different tasks (a waiter reports its admission as its task resumes), so only
/// their instants order them.
func rateLimitEventLines(
    _ registry: TempoRegistry, tick: Duration, origin: Duration
) -> (TempoObserver, Log<String>) {
    let lines = Log<String>()
    let observer = registry.observe { event in
        func ticks(_ duration: Duration) -> Int { Int(duration / tick) }
        let at = ticks(event.at.subtracting(origin))
        switch event.decision {
        case .rateLimitQueued(let wait): lines.append("\(at): queued \(ticks(wait))")
        case .rateLimitAdmitted(let waited): lines.append("\(at): admitted \(ticks(waited))")
        case .rateLimitRefused(let after, let waited):
            lines.append("\(at): refused \(ticks(after)) waited \(ticks(waited))")
        default: lines.append("\(at): unexpected \(event)")
        }
    }
    return (observer, lines)
}

/// Event lines of ``rateLimitEventLines(_:tick:origin:)`` ordered by their instants, and those
/// of one instant by their text.
func inInstantOrder(_ lines: [String]) -> [String] {
    func instant(_ line: String) -> Int { Int(line.prefix { $0 != ":" }) ?? .min }
    return lines.enumerated().sorted {
        (instant($0.element), $0.element) < (instant($1.element), $1.element)
    }.map(\.element)
}

/// What the observer must report, in the form of ``rateLimitEventLines(_:tick:origin:)``, from
/// a rate-limit model's decisions (a token bucket's or a window's).
struct ModelRateEvents {
    private(set) var lines: [String] = []
    /// When each waiter the model queued joined the queue.
    private var queuedAt: [String: Int] = [:]

    /// A call refused at once at `now`, a permit free in `after`.
    mutating func refused(_ after: Int, at now: Int) {
        lines.append("\(now): refused \(after) waited 0")
    }

    /// Waiter `label` joined the queue at `now`, a permit expected in `estimate`.
    mutating func queued(_ label: String, estimate: Int, at now: Int) {
        queuedAt[label] = now
        lines.append("\(now): queued \(estimate)")
    }

    /// The model's events of one settling at `now`: admissions first, then waiters given up.
    mutating func record(_ events: [RateLimitModel.Event], at now: Int) {
        let admittedFirst =
            events.filter { if case .gaveUp = $0 { false } else { true } }
            + events.filter { if case .gaveUp = $0 { true } else { false } }
        for event in admittedFirst {
            switch event {
            case .admitted(let label, let at):
                if let since = queuedAt[label] { lines.append("\(at): admitted \(at - since)") }
            case .gaveUp(let label, let after):
                lines.append(
                    "\(now): refused \(after) waited \(now - (queuedAt[label] ?? now))")
            case .cancelled:
                break
            }
        }
    }
}
