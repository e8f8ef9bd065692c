import TempoTesting
import Testing

@testable import Tempo

// A limiter that listens: an operation's error with a retry-after holds the key for every
// caller (waiters wait, refused calls are told that time); cancellation, errors without a
// retry-after, and limits that do not listen change nothing.

/// A service's "slow down": an error that carries a retry-after (or none).
struct SlowDown: Error, RetryAfterProviding, Equatable {
    var retryAfter: Duration?
}

@Suite struct RateLimitHoldTests {
    /// Runs one operation through `limit` at `key` that throws `error`.
    static func fail(_ limit: RateLimit, key: String, with error: any Error) async {
        _ = try? await rateLimit(limit, identifier: key) { throw error }
    }

    @Test func aRetryAfterHoldsAWindowLimitsKeyForEveryCaller() async {
        await onManualClock { clock, registry in
            let limit = RateLimit.window(5, per: .seconds(1), margin: .zero).holdingOnRetryAfter()
            #expect(limit.holdsOnRetryAfter)
            await Self.fail(limit, key: "k", with: SlowDown(retryAfter: .seconds(3)))
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(3)))
            #expect(rateRow(registry, "k")! == (0, .seconds(3), 0))
            let log = Log<String>()
            let a = await startWaiter("a", limit, key: "k", registry: registry, log: log)
            await clock.advance(by: .seconds(2))
            #expect(log.all.isEmpty)
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(1)))
            await clock.advance(by: .seconds(1))
            await a.value
            #expect(log.all == ["a@3000"])
            // After the hold: the window's own rule (a at 3000, 1 of 5 used).
            for _ in 0..<4 { #expect(take(limit, key: "k") == nil) }
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(1)))
            // Another key is apart.
            #expect(take(limit, key: "other") == nil)
        }
    }

    /// A waiter queued before the hold's end is not admitted during it, even when the window
    /// settles its queue meanwhile (here: another waiter's maximum wait runs out at 1 s).
    @Test func aWindowsQueuedWaiterWaitsOutTheHoldWhenTheQueueSettlesDuringIt() async {
        await onManualClock { clock, registry in
            let limit = RateLimit.window(5, per: .seconds(1), margin: .zero).holdingOnRetryAfter()
            await Self.fail(limit, key: "k", with: SlowDown(retryAfter: .seconds(3)))
            let log = Log<String>()
            let a = await startWaiter(
                "a", limit, policy: .wait(atMost: .seconds(10)), key: "k", registry: registry,
                log: log)
            let b = await startWaiter(
                "b", limit, policy: .wait(atMost: .seconds(1)), key: "k", registry: registry,
                log: log)
            await clock.advance(by: .seconds(1))
            await b.value
            #expect(log.all.count == 1)
            #expect(log.all.first?.hasPrefix("b!") == true, "\(log.all)")
            await clock.advance(by: .seconds(2))
            await a.value
            #expect(log.all.last == "a@3000", "\(log.all)")
        }
    }

    @Test func aRetryAfterHoldsATokenBucketsKeyThenOnePermitIsFree() async {
        await onManualClock { clock, _ in
            let limit = RateLimit(10, per: .seconds(1)).holdingOnRetryAfter()
            await Self.fail(limit, key: "k", with: SlowDown(retryAfter: .seconds(2)))
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(2)))
            await clock.advance(by: .seconds(2))
            #expect(take(limit, key: "k") == nil)
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(100)))
        }
    }

    /// A hold that ends before the bucket's own next permit changes nothing: a bucket of one
    /// permit per 10 s, just spent, told to wait 1 s, still admits at 10 s, not at 1 s (the
    /// rate would be broken otherwise).
    @Test func aHoldShorterThanTheBucketsOwnWaitChangesNothing() async {
        await onManualClock { clock, _ in
            let limit = RateLimit(1, per: .seconds(10)).holdingOnRetryAfter()
            await Self.fail(limit, key: "k", with: SlowDown(retryAfter: .seconds(1)))
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(10)))
            await clock.advance(by: .seconds(1))
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(9)))
            await clock.advance(by: .seconds(9))
            #expect(take(limit, key: "k") == nil)
        }
    }

    /// A limit that listens is not the same limit as one that does not.
    @Test func listeningIsPartOfALimitsEquality() {
        let deaf = RateLimit(10, per: .seconds(1))
        #expect(deaf != deaf.holdingOnRetryAfter())
        #expect(deaf.holdingOnRetryAfter() == RateLimit(10, per: .seconds(1)).holdingOnRetryAfter())
        #expect(deaf.holdingOnRetryAfter(false) == deaf)
        let window = RateLimit.window(10, per: .seconds(1))
        #expect(window != window.holdingOnRetryAfter())
        #expect(Set([deaf, deaf.holdingOnRetryAfter()]).count == 2)
    }

    @Test func aLaterHoldExtendsAnEarlierOneAndResetEndsIt() async {
        await onManualClock { clock, registry in
            let limit = RateLimit.window(5, per: .seconds(1)).holdingOnRetryAfter()
            await Self.fail(limit, key: "k", with: SlowDown(retryAfter: .seconds(3)))
            // A shorter hold (another caller's answer, come later) does not shorten it.
            registry.holdRateLimit(limit, .name("k"), for: .seconds(1))
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(3)))
            await clock.advance(by: .seconds(1))
            registry.holdRateLimit(limit, .name("k"), for: .seconds(4))
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(4)))
            resetRateLimit(identifier: "k")
            #expect(take(limit, key: "k") == nil)
        }
    }

    @Test func cancellationErrorsWithoutARetryAfterAndDeafLimitsChangeNothing() async {
        await onManualClock { _, registry in
            let listening = RateLimit.window(10, per: .seconds(1)).holdingOnRetryAfter()
            await Self.fail(listening, key: "a", with: CancellationError())
            await Self.fail(listening, key: "a", with: SlowDown(retryAfter: nil))
            await Self.fail(listening, key: "a", with: SlowDown(retryAfter: .zero))
            await Self.fail(listening, key: "a", with: Boom())
            await Self.fail(
                listening, key: "a", with: RateLimitError.limited(retryAfter: .seconds(9)))
            // Each failed call spent its start, and nothing more: 6 of 10 used.
            #expect(take(listening, key: "a") == nil)
            #expect(rateRow(registry, "a")!.tokens == 4)
            let deaf = RateLimit.window(5, per: .seconds(1))
            #expect(!deaf.holdsOnRetryAfter)
            await Self.fail(deaf, key: "b", with: SlowDown(retryAfter: .seconds(3)))
            #expect(take(deaf, key: "b") == nil)
            let deafBucket = RateLimit(5, per: .seconds(1))
            await Self.fail(deafBucket, key: "c", with: SlowDown(retryAfter: .seconds(3)))
            #expect(take(deafBucket, key: "c") == nil)
        }
    }

    @Test func aWaiterThatFailsWithARetryAfterHoldsTheKeyToo() async {
        await onManualClock { clock, registry in
            let limit = RateLimit.window(1, per: .seconds(1), margin: .zero).holdingOnRetryAfter()
            #expect(take(limit, key: "k") == nil)
            let task = Task {
                await registry.withCurrent {
                    try? await rateLimit(limit, identifier: "k") {
                        throw SlowDown(retryAfter: .seconds(5))
                    }
                }
            }
            #expect(await eventually { rateWaiters(registry, "k") == 1 })
            await clock.advance(by: .seconds(1))
            await task.value
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(5)))
            // The key stays while held, then leaves once the hold and its window are over.
            await clock.advance(by: .seconds(5))
            #expect(registry.liveKeyCount == 0)
        }
    }
}
