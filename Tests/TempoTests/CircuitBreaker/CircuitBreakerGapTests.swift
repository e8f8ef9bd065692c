import TempoTesting
import Testing

@testable import Tempo

/// Second, independent checks of two rules each caught by one test before.
@Suite struct CircuitBreakerGapTests {
    static let two = CircuitBreakerPolicy(
        failureRatio: 0.5, window: .lastCalls(10), minimumCalls: 2)

    /// A cancelled call while closed is not a success either: it does not count toward the
    /// minimum, so one failure after it is one call of the two needed, and the breaker stays
    /// closed (counted as a success, it would make 1 of 2 and open it).
    @Test func aCancelledCallNeverCountsTowardTheMinimum() async {
        await onManualClock { _, registry in
            #expect(await breakerCall(Self.two, key: "k", .cancel) == "cancelled")
            #expect(await breakerCall(Self.two, key: "k", .fail) == "boom")
            #expect(breakerRow(registry, "k")?.state == .closed)
            #expect(breakerRow(registry, "k")?.calls == 1)
            #expect(breakerRow(registry, "k")?.failures == 1)
        }
    }

    /// A call admitted before a reset that succeeds after it does not count in the new breaker:
    /// its one failure stays one call, short of the minimum (counted, 1 of 2 would open it).
    @Test func aCallFromBeforeAResetDoesNotCountAsASuccessEither() async {
        await onManualClock { _, registry in
            let held = await gatedBreakerCall(Self.two, key: "k", registry: registry)
            resetCircuitBreaker(identifier: "k")
            #expect(await breakerCall(Self.two, key: "k", .fail) == "boom")
            held.gate.open(.succeed)
            #expect(await held.task.value == "ok")
            #expect(breakerRow(registry, "k")?.state == .closed)
            #expect(breakerRow(registry, "k")?.calls == 1)
        }
    }
}
