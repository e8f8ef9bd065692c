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
