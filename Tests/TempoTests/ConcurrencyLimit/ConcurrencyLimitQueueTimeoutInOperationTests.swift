import Tempo
import TempoTesting
import Testing

/// A wait that parks an operation's work token (a concurrency-limit queue timeout, a rate-limit
/// wait with a limit) inside an operation a timer launched: the advance that reaches the wait's
/// deadline fires it before it returns, so the operation has its error in hand. Each round runs
/// under `finishes`, so a lost wake-up fails fast instead of hanging.
@Suite struct ConcurrencyLimitQueueTimeoutInOperationTests {
    /// Runs `rounds` rounds of: a delay of 1 s by `actorType` launches `wait`, which must throw
    /// within the advance of 2 s. Returns how many rounds missed it (the error not caught, or
    /// the round not finished).
    private func missedRounds(
        _ rounds: Int, by actorType: ActorType,
        setUp: @escaping @Sendable (ManualClock) async -> Void = { _ in },
        _ wait: @escaping @Sendable () async throws -> Void
    ) async -> Int {
        var missed = 0
        for _ in 0..<rounds {
            let clock = ManualClock()
            let registry = TempoRegistry(clock: clock)
            let caught = Flag()
            let finished = await finishes {
                await registry.withCurrent {
                    await setUp(clock)
                    delay(.seconds(1), by: actorType) {
                        do { try await wait() } catch { caught.set() }
                    }
                    await clock.advance(by: .seconds(2))
                }
            }
            if !finished || !caught.isSet { missed += 1 }
            _ = await finishes {
                await registry.withCurrent { await clock.advance(by: .seconds(20)) }
            }
        }
        return missed
    }

    /// A slot held by a plain task for 10 s: the queued call's timeout of 1 s comes due.
    private static func holdSlot(_ clock: ManualClock) async {
        Task {
            try await concurrencyLimit(1, identifier: "c") {
                try await clock.sleep(for: .seconds(10))
            }
        }
        await clock.waitForSleepers(1)
    }

    private static func queueWithTimeout() async throws {
        try await concurrencyLimit(1, queueTimeout: .seconds(1), identifier: "c") {}
    }

    @Test func aQueueTimeoutInsideATaskContextOperationIsThrownWithinTheAdvance() async {
        let missed = await missedRounds(
            600, by: .taskContext, setUp: Self.holdSlot, Self.queueWithTimeout)
        #expect(missed == 0)
    }

    @Test func aQueueTimeoutInsideAMainActorOperationIsThrownWithinTheAdvance() async {
        let missed = await missedRounds(
            300, by: .mainActor, setUp: Self.holdSlot, Self.queueWithTimeout)
        #expect(missed == 0)
    }

    @Test func aQueueTimeoutInsideAnOwnedActorOperationIsThrownWithinTheAdvance() async {
        let missed = await missedRounds(
            300, by: .ownedActor, setUp: Self.holdSlot, Self.queueWithTimeout)
        #expect(missed == 0)
    }

    @Test func aRateLimitWaitInsideAnOperationGivesUpWithinTheAdvance() async {
        let limit = RateLimit(1, per: .seconds(10))
        let missed = await missedRounds(
            600, by: .taskContext,
            setUp: { _ in try? await rateLimit(limit, identifier: "r") },
            { try await rateLimit(limit, whenLimited: .wait(atMost: .seconds(1)), identifier: "r") }
        )
        #expect(missed == 0)
    }
}
