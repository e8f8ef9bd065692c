import Tempo
import TempoTesting
import Testing

/// A concurrency-limit queue timeout that comes due during an advance has been thrown, and
/// caught, when the advance returns, by a caller on the actor the test advances from.
@Suite struct ConcurrencyLimitQueueTimeoutSettleTests {
    @Test @MainActor func theQueueTimeoutIsCaughtWhenTheAdvanceReturns() async {
        var missed = 0
        for _ in 0..<300 {
            let clock = ManualClock()
            let registry = TempoRegistry(clock: clock)
            var caught: (any Error)?
            await registry.withCurrent {
                let holder = Task {
                    try await concurrencyLimit(1, identifier: "c") {
                        try await clock.sleep(for: .seconds(10))
                    }
                }
                await clock.waitForSleepers(1)
                let waiter = Task { @MainActor in
                    do {
                        try await concurrencyLimit(1, queueTimeout: .seconds(1), identifier: "c") {}
                    } catch {
                        caught = error
                    }
                }
                _ = await awaitCounts(registry, "c", running: 1, queued: 1)
                await clock.advance(by: .seconds(1))
                if caught as? ConcurrencyLimitError != .queueTimedOut(.seconds(1)) { missed += 1 }
                await waiter.value
                holder.cancel()
                _ = await holder.result
            }
        }
        #expect(missed == 0)
    }
}
