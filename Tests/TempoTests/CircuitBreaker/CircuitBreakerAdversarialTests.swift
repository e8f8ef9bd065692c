import TempoTesting
import Testing

@testable import Tempo

// Settings a hostile user passes: a minimum of calls that a count window can never hold.

@Suite struct CircuitBreakerAdversarialTests {
    @Test func aMinimumAboveACountWindowIsTheWindowsCount() async {
        await onManualClock { _, registry in
            // The default minimum (10 calls) with a window of the last 5 calls: the window
            // never holds 10, so the breaker would never open.
            let small = CircuitBreakerPolicy(window: .lastCalls(5))
            for _ in 0..<4 { await breakerCall(small, key: "small", .fail) }
            #expect(breakerState(registry, "small") == .closed)
            await breakerCall(small, key: "small", .fail)
            #expect(breakerState(registry, "small") == .open)
            let strict = CircuitBreakerPolicy(
                failureRatio: 1, window: .lastCalls(3), minimumCalls: .max)
            for _ in 0..<3 { await breakerCall(strict, key: "strict", .fail) }
            #expect(breakerState(registry, "strict") == .open)
            // A time window has no count: its minimum stays as it is.
            let timed = CircuitBreakerPolicy(
                failureRatio: 1, window: .lastDuration(.seconds(10)), minimumCalls: 4)
            for _ in 0..<3 { await breakerCall(timed, key: "timed", .fail) }
            #expect(breakerState(registry, "timed") == .closed)
            await breakerCall(timed, key: "timed", .fail)
            #expect(breakerState(registry, "timed") == .open)
        }
    }
}
