import Synchronization
import TempoTesting
import Testing

@testable import Tempo

/// The error the breaker tests' operations fail with.
struct BreakerFailure: Error, Equatable {}

/// The error a test marks as ignored with ``CircuitBreakerPolicy/isIgnored``.
struct BreakerIgnored: Error, Equatable {}

/// How a test operation ends.
enum BreakerStep: Sendable, Equatable {
    case succeed, fail, cancel
    /// Throws a rate limit's refusal, ignored by every breaker.
    case refuse
    /// Throws ``BreakerIgnored``, ignored by a policy that marks it.
    case ignore

    /// Ends the operation as this step says.
    func end() throws -> String {
        switch self {
        case .succeed: return "ok"
        case .fail: throw BreakerFailure()
        case .cancel: throw CancellationError()
        case .refuse: throw RateLimitError.limited(retryAfter: .seconds(1))
        case .ignore: throw BreakerIgnored()
        }
    }
}

/// One call through the breaker `key` that ends at once as `step` says (`cancel` throws
/// `CancellationError`); returns `ok`, `boom`, `cancelled`, `refused`, `ignored`, `open(…)`
/// or `invalid`.
@discardableResult
func breakerCall(
    _ policy: CircuitBreakerPolicy, key: String, _ step: BreakerStep, ran: Log<String>? = nil
) async -> String {
    do {
        return try await circuitBreaker(policy, identifier: key) {
            ran?.append(key)
            return try step.end()
        }
    } catch {
        return breakerOutcome(error)
    }
}

/// A short name for what a breaker call threw.
func breakerOutcome(_ error: any Error) -> String {
    switch error {
    case is BreakerFailure: return "boom"
    case is CancellationError: return "cancelled"
    case is RateLimitError: return "refused"
    case is ConcurrencyLimitError: return "busy"
    case is BreakerIgnored: return "ignored"
    case CircuitBreakerError.open(let after?): return "open(\(Int(after / .milliseconds(1)))ms)"
    case CircuitBreakerError.open(nil): return "open(?)"
    case CircuitBreakerError.invalidPolicy: return "invalid"
    default: return "\(error)"
    }
}

/// The breaker row of `key` in `registry`'s snapshot.
func breakerRow(_ registry: TempoRegistry, _ key: String) -> (
    state: CircuitBreakerState, failures: Int, calls: Int, reopensAt: Duration?
)? {
    for entry in registry.snapshot().entries(.circuitBreaker) where entry.key == key {
        if case .circuitBreaker(let state, let failures, let calls, let reopensAt) = entry.state {
            return (state, failures, calls, reopensAt)
        }
    }
    return nil
}

/// The state of `key`'s breaker in the snapshot (`nil`: none live).
func breakerState(_ registry: TempoRegistry, _ key: String) -> CircuitBreakerState? {
    breakerRow(registry, key)?.state
}

/// A gate an operation waits at until the test opens it with the way the operation ends.
final class BreakerGate: Sendable {
    private let state = Lock<
        (waiter: CheckedContinuation<BreakerStep, Never>?, step: BreakerStep?)
    >(
        (nil, nil))

    /// Waits until ``open(_:)``; returns its step.
    func wait() async -> BreakerStep {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> BreakerStep? in
                if let step = state.step { return step }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    var isWaiting: Bool { state.withLock { $0.waiter != nil } }

    func open(_ step: BreakerStep) {
        let waiter = state.withLock { state in
            state.step = step
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: step)
    }
}

/// A call through the breaker `key` in its own task (in `registry`) whose operation waits at a
/// gate; returns once the operation waits there (or the call was rejected), with the task,
/// whose value says how the call ended.
func gatedBreakerCall(
    _ policy: CircuitBreakerPolicy, key: String, registry: TempoRegistry
) async -> (gate: BreakerGate, task: Task<String, Never>) {
    let gate = BreakerGate()
    let entered = Log<Bool>()
    let task = Task {
        await registry.withCurrent {
            do {
                return try await circuitBreaker(policy, identifier: key) {
                    entered.append(true)
                    return try await gate.wait().end()
                }
            } catch {
                entered.append(false)
                return breakerOutcome(error)
            }
        }
    }
    let started = await eventually {
        entered.count > 0 && (gate.isWaiting || entered.all == [false])
    }
    #expect(started, "the gated call did not start")
    return (gate, task)
}

/// A log of state changes, as `old>new`, for ``CircuitBreakerPolicy/onStateChange``.
func breakerChangeLog(_ log: Log<String>)
    -> @Sendable (CircuitBreakerState, CircuitBreakerState) -> Void
{
    { old, new in log.append("\(old)>\(new)") }
}

/// Advances `clock` from one sleeper's deadline to the next until `task` has finished;
/// returns its value.
func driveBreakerClock<Value: Sendable>(
    _ clock: ManualClock, _ task: Task<Value, Never>, finished: Log<Bool>
) async -> Value {
    while finished.count == 0 {
        _ = await eventually { clock.sleeperCount > 0 || finished.count > 0 }
        await clock.runUntilIdle()
    }
    return await task.value
}
