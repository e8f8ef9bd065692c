import Synchronization
import TempoTesting
import Testing

@testable import Tempo

/// A thread-safe log of what ran, for tests.
final class Log<Value: Sendable>: Sendable {
    private let values = Lock<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}

/// A registry on a fresh manual clock, made current for `body`.
func onManualClock(
    _ body: (ManualClock, TempoRegistry) async throws -> Void
) async rethrows {
    let clock = ManualClock()
    let registry = TempoRegistry(clock: clock)
    try await registry.withCurrent { try await body(clock, registry) }
}

/// A clock whose timers the test fires by hand, in any order, stale ones included.
final class ScriptedClock: Clock, DeterministicClock, Sendable {
    struct Timer {
        var deadline: Duration
        var fire: @Sendable (Duration) -> Duration?
        var cancelled: Bool
    }
    private let state = Lock<(now: Duration, timers: [Timer])>((.zero, []))

    var now: ManualClock.Instant { ManualClock.Instant(offset: offset) }
    var minimumResolution: Duration { .nanoseconds(1) }
    func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
        Issue.record("the engine must not sleep on a deterministic clock")
    }

    var offset: Duration { state.withLock { $0.now } }
    func set(_ now: Duration) { state.withLock { $0.now = now } }
    var timers: [Timer] { state.withLock { $0.timers } }

    /// Calls timer `index`'s callback at the current time, whatever its state.
    func fire(_ index: Int) -> Duration? {
        let (fire, now) = state.withLock { ($0.timers[index].fire, $0.now) }
        return fire(now)
    }

    /// Calls timer `index`'s callback as if it fired at `instant`, whatever the clock reads
    /// (a timer that fired at its instant, handled a moment later).
    func fire(_ index: Int, at instant: Duration) -> Duration? {
        let fire = state.withLock { $0.timers[index].fire }
        return fire(instant)
    }

    func scheduleTimer(at deadline: Duration, _ fire: @escaping @Sendable (Duration) -> Duration?)
        -> UInt64
    {
        state.withLock { state in
            state.timers.append(Timer(deadline: deadline, fire: fire, cancelled: false))
            return UInt64(state.timers.count - 1)
        }
    }
    func cancelTimer(_ id: UInt64) { state.withLock { $0.timers[Int(id)].cancelled = true } }
    func openSettleToken() -> UInt64 { 0 }
    func closeSettleToken(_ id: UInt64) {}
}

/// Waits until `condition` holds, polling it every 2 ms at most `limit / 2 ms` times; returns
/// whether it held. The limit counts polls, not seconds: on an idle machine `within: .seconds(2)`
/// gives up after about 2 s, and on a machine so busy that this task (and the work it waits
/// for) hardly gets a thread, it stretches with the load. So a working build does not fail for
/// want of CPU, and a broken one fails in seconds rather than stalling the suite.
func eventually(
    within limit: Duration = .seconds(2), _ condition: @Sendable () -> Bool
) async -> Bool {
    let interval = Duration.milliseconds(2)
    let polls = max(1, Int(limit / interval))
    for _ in 0..<polls {
        if condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return condition()
}
