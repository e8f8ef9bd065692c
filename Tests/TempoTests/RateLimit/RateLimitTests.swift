import Synchronization
import TempoTesting
import Testing

@testable import Tempo

// Every rule of the rate limiter on the manual clock: burst, refill, weights, the exact
// `retryAfter` of a rejection, first in first out among waiters, cancellation, the maximum
// wait, reset, the snapshot row, and the key leaving the registry when idle.

@Suite struct RateLimitTests {
    /// 3 permits per 300 ms: one every 100 ms, 3 at once.
    let limit = RateLimit(3, per: .milliseconds(300))

    @Test func aFullBucketAdmitsTheBurstThenOnePermitPerRefill() async {
        await onManualClock { clock, registry in
            for _ in 0..<3 { #expect(take(limit, key: "k") == nil) }
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(100)))
            await clock.advance(by: .milliseconds(60))
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(40)))
            await clock.advance(by: .milliseconds(40))
            #expect(take(limit, key: "k") == nil)
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(100)))
            // After a quiet 300 ms the bucket is full again: a full burst passes.
            await clock.advance(by: .milliseconds(400))
            for _ in 0..<3 { #expect(take(limit, key: "k") == nil) }
            #expect(take(limit, key: "k") != nil)
            #expect(registry.timersArmed <= 2)
        }
    }

    @Test func theRefillIsRoundedUpSoTheRateIsNeverExceeded() async {
        await onManualClock { clock, _ in
            // 3 per second: a permit every 333_333_333_333_333_334 attoseconds, not ...333.
            let third = Duration(attoseconds: 333_333_333_333_333_334)
            let limit = RateLimit(3, per: .seconds(1))
            for _ in 0..<3 { #expect(take(limit, key: "k") == nil) }
            #expect(take(limit, key: "k") == .limited(retryAfter: third))
            await clock.advance(by: .seconds(1))
            // Three refills take 2 attoseconds more than the second.
            #expect(take(limit, key: "k") == nil)
            #expect(take(limit, key: "k") == nil)
            #expect(
                take(limit, key: "k") == .limited(retryAfter: Duration(attoseconds: 2)))
        }
    }

    @Test func weightsTakeThatManyPermits() async {
        await onManualClock { clock, _ in
            let limit = RateLimit(5, per: .milliseconds(500))  // 100 ms a permit, burst 5
            #expect(take(limit, weight: 3, key: "k") == nil)
            // 2 left: a weight of 3 waits one refill, a weight of 2 passes.
            #expect(take(limit, weight: 3, key: "k") == .limited(retryAfter: .milliseconds(100)))
            #expect(take(limit, weight: 2, key: "k") == nil)
            #expect(take(limit, weight: 5, key: "k") == .limited(retryAfter: .milliseconds(500)))
            await clock.advance(by: .milliseconds(500))
            #expect(take(limit, weight: 5, key: "k") == nil)
        }
    }

    @Test func waitersAreAdmittedFirstInFirstOutAtTheirInstants() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let limit = RateLimit(1, per: .milliseconds(100))
            #expect(take(limit, key: "k") == nil)
            await startWaiter("a", limit, key: "k", registry: registry, log: log)
            await startWaiter("b", limit, key: "k", registry: registry, log: log)
            await startWaiter("c", limit, key: "k", registry: registry, log: log)
            // A call that does not wait is refused while others wait, counting the queue.
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(400)))
            await clock.advance(by: .milliseconds(250))
            // `advance` returns once the admitted waiters' operations have run.
            #expect(log.all == ["a@100", "b@200"])
            await clock.advance(by: .milliseconds(50))
            #expect(log.all == ["a@100", "b@200", "c@300"])
        }
    }

    @Test func aHeavyWaiterAtTheHeadIsNotOvertakenByLighterOnes() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            #expect(take(limit, weight: 3, key: "k") == nil)
            await startWaiter("heavy", limit, weight: 3, key: "k", registry: registry, log: log)
            await startWaiter("light", limit, key: "k", registry: registry, log: log)
            await clock.advance(by: .milliseconds(100))
            // One permit is free, but the head needs three: nobody passes.
            #expect(log.all.isEmpty)
            #expect(take(limit, key: "k") != nil)
            await clock.advance(by: .milliseconds(200))
            #expect(log.all == ["heavy@300"])
            await clock.advance(by: .milliseconds(100))
            #expect(log.all == ["heavy@300", "light@400"])
        }
    }

    @Test func aCancelledWaiterLeavesTheQueueAndTakesNothing() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let limit = RateLimit(1, per: .milliseconds(100))
            #expect(take(limit, key: "k") == nil)
            let a = await startWaiter("a", limit, key: "k", registry: registry, log: log)
            await startWaiter("b", limit, key: "k", registry: registry, log: log)
            await clock.advance(by: .milliseconds(50))
            a.cancel()
            await a.value
            #expect(log.all == ["a!CancellationError()"])
            #expect(rateWaiters(registry, "k") == 1)
            // b takes the permit a would have had, at 100, not 200.
            await clock.advance(by: .milliseconds(50))
            #expect(log.all == ["a!CancellationError()", "b@100"])
            await clock.advance(by: .milliseconds(100))
            #expect(take(limit, key: "k") == nil)
        }
    }

    @Test func cancellingAHeavyHeadAdmitsTheLighterWaitersItHeldUp() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            #expect(take(limit, weight: 3, key: "k") == nil)
            await clock.advance(by: .milliseconds(100))
            let heavy = await startWaiter(
                "heavy", limit, weight: 3, key: "k", registry: registry, log: log)
            await startWaiter("light", limit, key: "k", registry: registry, log: log)
            heavy.cancel()
            await heavy.value
            // The light waiter's permit was free: it is admitted by the cancellation, at 100.
            #expect(await eventually { log.count == 2 })
            #expect(Set(log.all) == ["heavy!CancellationError()", "light@100"])
            #expect(rateWaiters(registry, "k") == 0)
        }
    }

    @Test func aCallCancelledBeforeItWaitsThrowsAndTakesNothing() async {
        await onManualClock { _, registry in
            let limit = RateLimit(1, per: .seconds(1))
            let task = Task {
                await registry.withCurrent {
                    withUnsafeCurrentTask { $0?.cancel() }
                    do {
                        try await rateLimit(limit, identifier: "k")
                        return "admitted"
                    } catch {
                        return "\(error)"
                    }
                }
            }
            #expect(await task.value == "CancellationError()")
            #expect(take(limit, key: "k") == nil)
        }
    }

    @Test func aWaiterGivesUpAfterItsMaximumWaitWithTheWaitItWouldFaceThen() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let limit = RateLimit(1, per: .milliseconds(100))
            #expect(take(limit, key: "k") == nil)
            await startWaiter(
                "a", limit, policy: .wait(atMost: .milliseconds(40)), key: "k",
                registry: registry, log: log)
            // Admitted exactly at its deadline: admitted.
            await startWaiter(
                "b", limit, policy: .wait(atMost: .milliseconds(100)), key: "k",
                registry: registry, log: log)
            await clock.advance(by: .milliseconds(40))
            // A call made at 40 would wait behind b (admitted at 100) until 200: 160 ms. (The
            // error is thrown in the waiter's own task: `advance` does not wait for its catch.)
            #expect(await eventually { log.count == 1 })
            #expect(log.all == ["a!limited(retryAfter: 0.16 seconds)"])
            await clock.advance(by: .milliseconds(60))
            #expect(log.all == ["a!limited(retryAfter: 0.16 seconds)", "b@100"])
        }
    }

    @Test func rejectThrowsAtOnceAndZeroMaximumWaitIsReject() async throws {
        try await onManualClock { _, _ in
            let limit = RateLimit(1, per: .seconds(2))
            try await rateLimit(limit, whenLimited: .reject, identifier: "k")
            await #expect(throws: RateLimitError.limited(retryAfter: .seconds(2))) {
                try await rateLimit(limit, whenLimited: .reject, identifier: "k") { "ran" }
            }
            await #expect(throws: RateLimitError.limited(retryAfter: .seconds(2))) {
                try await rateLimit(limit, whenLimited: .wait(atMost: .zero), identifier: "k")
            }
            await #expect(throws: RateLimitError.limited(retryAfter: .seconds(2))) {
                try await rateLimit(
                    limit, whenLimited: .wait(atMost: .seconds(-5)), identifier: "k")
            }
        }
    }

    @Test func resetFillsTheBucketAndAdmitsTheWaiters() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let limit = RateLimit(2, per: .seconds(1))
            #expect(take(limit, weight: 2, key: "k") == nil)
            await startWaiter("a", limit, key: "k", registry: registry, log: log)
            await startWaiter("b", limit, key: "k", registry: registry, log: log)
            await startWaiter("c", limit, key: "k", registry: registry, log: log)
            await clock.advance(by: .milliseconds(10))
            resetRateLimit(identifier: "k")
            #expect(await eventually { log.count == 2 })
            #expect(Set(log.all) == ["a@10", "b@10"])
            #expect(rateWaiters(registry, "k") == 1)
            resetRateLimit(identifier: "nothing-here")
        }
    }

    @Test func theSnapshotShowsPermitsNextPermitAndWaitersAndIdleKeysLeave() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let limit = RateLimit(4, per: .milliseconds(400))  // 100 ms a permit
            #expect(take(limit, weight: 3, key: "k") == nil)
            #expect(rateRow(registry, "k")! == (1, .zero, 0))
            #expect(take(limit, key: "k") == nil)
            #expect(rateRow(registry, "k")! == (0, .milliseconds(100), 0))
            await startWaiter("a", limit, weight: 2, key: "k", registry: registry, log: log)
            await clock.advance(by: .milliseconds(150))
            #expect(rateRow(registry, "k")! == (1, .milliseconds(150), 1))
            #expect("\(registry.snapshot())".contains("1 permits free"))
            await clock.advance(by: .milliseconds(50))
            #expect(log.all == ["a@200"])
            #expect(rateRow(registry, "k")! == (0, .milliseconds(300), 0))
            // Full again at 600: the key leaves the registry.
            await clock.advance(by: .milliseconds(399))
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .milliseconds(1))
            #expect(registry.snapshot().isEmpty)
            #expect(registry.liveKeyCount == 0)
            #expect(clock.sleeperCount == 0)
        }
    }

    @Test func aKeyInSteadyUseLeavesAtMostOneWholeRefillAfterItsBucketIsFull() async {
        await onManualClock { clock, registry in
            let limit = RateLimit(4, per: .milliseconds(400))  // 100 ms a permit, burst 4
            // Nobody waits: the timer that removes the key is armed lazily, a whole refill of
            // the bucket (400 ms) after the call, not at the instant the bucket is full (100).
            #expect(take(limit, key: "k") == nil)
            await clock.advance(by: .milliseconds(50))
            #expect(take(limit, key: "k") == nil)  // full again at 200; the timer stays at 400
            await clock.advance(by: .milliseconds(150))
            #expect(rateRow(registry, "k")! == (4, .milliseconds(200), 0))
            await clock.advance(by: .milliseconds(199))
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .milliseconds(1))
            #expect(registry.liveKeyCount == 0)
            #expect(registry.timersArmed == 1)
        }
    }

    @Test func aKeyInSteadyUseArmsAtMostOneTimerPerWholeRefill() async {
        await onManualClock { clock, registry in
            let limit = RateLimit(10, per: .milliseconds(100))  // 10 ms a permit, burst 10
            // A call every 10 ms: the bucket is full again 10 ms after each call. A timer at
            // that instant would be one timer per call; the lazy one is one per 100 ms.
            for _ in 0..<1_000 {
                #expect(take(limit, key: "k") == nil)
                await clock.advance(by: .milliseconds(10))
            }
            #expect(registry.timersArmed == 100)
            await clock.advance(by: .milliseconds(100))
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func keysAreCallSitesOrIdentifiers() async {
        await onManualClock { _, registry in
            let limit = RateLimit(1, per: .seconds(1))
            var admitted = 0
            for _ in 0..<3 {
                if (try? takeRatePermit(limit)) != nil { admitted += 1 }
            }
            #expect(admitted == 1)
            #expect((try? takeRatePermit(limit)) != nil)  // another call site
            #expect(take(limit, key: "a") == nil)
            #expect(take(limit, key: "b") == nil)
            #expect(registry.snapshot().entries(.rateLimit).count == 4)
        }
    }
}
