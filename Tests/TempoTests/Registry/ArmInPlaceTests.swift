import TempoTesting
import Testing

@testable import Tempo

// A key's timer that already wakes at the instant asked for is kept, not armed again: the
// entries that ask for their wake-up on every call (a retry budget, a breaker's time window)
// arm one timer for any number of calls made at one instant.
@Suite struct ArmInPlaceTests {
    @Test func retriesCountedAtOneInstantArmOneTimer() async throws {
        try await onManualClock { clock, registry in
            let budget = RetryBudget(identifier: "budget")
            let before = registry.timersArmed
            for _ in 0..<5 {
                _ = try await retry(2, every: .zero, budget: budget) { 1 }
            }
            #expect(registry.timersArmed - before == 1)
            #expect(registry.liveKeyCount == 1)
        }
    }

    @Test func failuresInATimeWindowAtOneInstantArmOneTimer() async {
        struct Failed: Error {}
        await onManualClock { clock, registry in
            let policy = CircuitBreakerPolicy(
                window: .lastDuration(.seconds(10)), minimumCalls: 100)
            let before = registry.timersArmed
            for _ in 0..<5 {
                _ = try? await circuitBreaker(policy, identifier: "breaker") { throw Failed() }
            }
            #expect(registry.timersArmed - before == 1)
            await clock.advance(by: .seconds(11))
            #expect(registry.liveKeyCount == 0)
        }
    }
}
