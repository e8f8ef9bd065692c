import Synchronization
import TempoTesting
import Testing

@testable import Tempo

// Bad and extreme input (never a trap), the wrapping form's errors, and how the rate limiter
// composes with `retry` and `timeout`.

@Suite struct RateLimitEdgeTests {
    @Test func zeroAndNegativeIntervalsMeanNoLimit() async throws {
        try await onManualClock { _, registry in
            for interval in [Duration.zero, .seconds(-1), .saturatedMin] {
                let limit = RateLimit(1, per: interval)
                for _ in 0..<5 { #expect(take(limit, weight: .max, key: "k") == nil) }
                let value = try await rateLimit(limit, identifier: "k") { 1 }
                #expect(value == 1)
            }
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func zeroAndNegativeWeightsTakeNothing() async throws {
        try await onManualClock { _, registry in
            let limit = RateLimit(1, per: .seconds(1))
            for weight in [0, -1, Int.min] { #expect(take(limit, weight: weight, key: "k") == nil) }
            #expect(registry.liveKeyCount == 0)
            #expect(take(limit, key: "k") == nil)
            let value = try await rateLimit(limit, weight: 0, identifier: "k") { 2 }
            #expect(value == 2)
        }
    }

    @Test func zeroPermitsOrAWeightAboveTheBurstCanNeverBeAdmitted() async {
        await onManualClock { _, registry in
            #expect(
                take(RateLimit(0, per: .seconds(1)), key: "k")
                    == .cannotAdmit(weight: 1, burst: 0))
            #expect(
                take(RateLimit(-5, per: .seconds(1), burst: 9), key: "k")
                    == .cannotAdmit(weight: 1, burst: 0))
            #expect(
                take(RateLimit(10, per: .seconds(1)), weight: 11, key: "k")
                    == .cannotAdmit(weight: 11, burst: 10))
            await #expect(throws: RateLimitError.cannotAdmit(weight: 4, burst: 3)) {
                try await rateLimit(RateLimit(3, per: .seconds(1)), weight: 4, identifier: "k")
            }
            #expect(registry.liveKeyCount == 0)
            #expect(RateLimitError.cannotAdmit(weight: 4, burst: 3).retryAfter == nil)
        }
    }

    @Test func aBurstBelowOneIsOne() {
        #expect(RateLimit(5, per: .seconds(1), burst: 0).burst == 1)
        #expect(RateLimit(5, per: .seconds(1), burst: -3).burst == 1)
        #expect(RateLimit(5, per: .seconds(1)).burst == 5)
        #expect(RateLimit(-5, per: .seconds(1)).burst == 1)
    }

    @Test func hugeValuesSaturateAndNeverTrap() async {
        await onManualClock { clock, registry in
            // A permit every attosecond (rounded up), a burst of Int.max: never waits.
            let fast = RateLimit(.max, per: .nanoseconds(1), burst: .max)
            for _ in 0..<100 { #expect(take(fast, weight: 1_000_000, key: "fast") == nil) }
            // One permit in Int64.max seconds: the second call waits that long.
            let slow = RateLimit(1, per: .seconds(Int64.max))
            #expect(take(slow, key: "slow") == nil)
            #expect(take(slow, key: "slow") == .limited(retryAfter: .seconds(Int64.max)))
            // The largest interval, the largest burst: the burst is capped (here to 1) so that
            // the bucket spans at most half of Duration's range.
            let widest = RateLimit(1, per: .saturatedMax, burst: .max)
            #expect(take(widest, weight: 2, key: "widest") == .cannotAdmit(weight: 2, burst: 1))
            #expect(take(widest, key: "widest") == nil)
            #expect(take(widest, key: "widest") == .limited(retryAfter: .saturatedMax))
            await clock.advance(by: .saturatedMax)
            _ = registry.snapshot().description
            resetRateLimit(identifier: "slow")
            #expect(take(slow, key: "slow") == nil)
        }
    }

    @Test func theWrappingFormRethrowsAndTheCallStillSpentItsPermit() async {
        await onManualClock { _, _ in
            let limit = RateLimit(1, per: .seconds(1))
            await #expect(throws: Boom()) {
                try await rateLimit(limit, identifier: "k") { throw Boom() }
            }
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(1)))
        }
    }

    @Test func anAdmittedWaiterRunsItsOperationBeforeAdvanceReturnsEvenWhenItSleeps() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let limit = RateLimit(1, per: .seconds(1))
            #expect(take(limit, key: "k") == nil)
            let task = Task {
                await registry.withCurrent {
                    try? await rateLimit(limit, identifier: "k") {
                        log.append(at("admitted", registry))
                        await sleep(.milliseconds(500))
                        log.append(at("slept", registry))
                    }
                }
            }
            #expect(await eventually { rateWaiters(registry, "k") == 1 })
            // The operation's sleep parks its work: the advance goes on and wakes it at 1.5 s.
            await clock.advance(by: .seconds(2))
            #expect(log.all == ["admitted@1000", "slept@1500"])
            await task.value
        }
    }

    @Test func retryAroundARejectingCallWaitsExactlyItsRetryAfter() async throws {
        try await onManualClock { clock, registry in
            let limit = RateLimit(2, per: .seconds(1))  // 500 ms a permit
            #expect(take(limit, weight: 2, key: "k") == nil)
            let task = Task {
                try await registry.withCurrent {
                    try await retry(3, every: .seconds(60)) {
                        try await rateLimit(limit, whenLimited: .reject, identifier: "k") {
                            at("ran", registry)
                        }
                    }
                }
            }
            // The rate limit's timer and the retry's wait of 500 ms (not 60 s).
            await clock.waitForSleepers(2)
            await clock.advance(by: .milliseconds(500))
            let value = try await task.value
            #expect(value == "ran@500")
        }
    }

    @Test func timeoutAroundAWaitingCallEndsTheWaitAndTakesNothing() async {
        await onManualClock { clock, registry in
            let limit = RateLimit(1, per: .seconds(1))
            #expect(take(limit, key: "k") == nil)
            let task = Task {
                try await registry.withCurrent {
                    try await timeout(.milliseconds(300)) {
                        try await rateLimit(limit, identifier: "k") { "ran" }
                    }
                }
            }
            #expect(await eventually { rateWaiters(registry, "k") == 1 })
            await clock.waitForSleepers(2)
            await clock.advance(by: .milliseconds(300))
            await #expect(throws: TimeoutError.timedOut(.milliseconds(300))) {
                try await task.value
            }
            #expect(rateWaiters(registry, "k") == 0)
            // The abandoned wait took nothing: the permit at 1 s is there.
            await clock.advance(by: .milliseconds(700))
            #expect(take(limit, key: "k") == nil)
        }
    }

    @Test func rateLimitAroundTimeoutLimitsOnlyTheOperationNotTheWait() async throws {
        try await onManualClock { clock, registry in
            let limit = RateLimit(1, per: .seconds(1))
            #expect(take(limit, key: "k") == nil)
            let task = Task {
                try await registry.withCurrent {
                    try await rateLimit(limit, identifier: "k") {
                        try await timeout(.milliseconds(300)) { at("ran", registry) }
                    }
                }
            }
            #expect(await eventually { rateWaiters(registry, "k") == 1 })
            // Waiting a whole second for the permit is no timeout: the limit starts after it.
            await clock.advance(by: .seconds(1))
            let value = try await task.value
            #expect(value == "ran@1000")
        }
    }

    @MainActor @Test func realClockTheOperationRunsInTheCallersIsolationAdmittedOrAfterWaiting()
        async throws
    {
        var count = 0  // main-actor state, touched without a hop
        let limit = RateLimit(1, per: .milliseconds(20), burst: 1)
        // A registry of its own, so the shared one stays as other suites expect it.
        try await TempoRegistry(clock: ContinuousClock()).withCurrent {
            for _ in 0..<2 {  // the first is admitted at once, the second waits about 20 ms
                try await rateLimit(limit, identifier: "main") {
                    MainActor.assertIsolated()
                    count += 1
                }
            }
        }
        #expect(count == 2)
    }
}
