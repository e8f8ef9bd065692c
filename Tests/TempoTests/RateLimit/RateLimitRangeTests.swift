import TempoTesting
import Testing

@testable import Tempo

/// A rate limit at either end of the clock's range admits what it admits anywhere else: at
/// most `burst + permits × t / interval` in any span `t`, and its burst at once.
@Suite struct RateLimitRangeTests {
    /// `takeRatePermit` calls at one instant, `at`, after the key was first used at `start`:
    /// how many of `count` were admitted.
    static func admitted(
        _ limit: RateLimit, from start: Duration, at instant: Duration, count: Int = 100
    ) async -> Int {
        let clock = ManualClock(now: .init(offset: start))
        let registry = TempoRegistry(clock: clock)
        return await registry.withCurrent {
            var admitted = 0
            if (try? takeRatePermit(limit, identifier: "edge")) != nil { admitted += 1 }
            await clock.advance(to: .init(offset: instant))
            for _ in 0..<count where (try? takeRatePermit(limit, identifier: "edge")) != nil {
                admitted += 1
            }
            return admitted
        }
    }

    @Test func oneInstantAtTheTopOfTheRangeAdmitsOnlyTheBurst() async {
        let one = RateLimit(1, per: .seconds(1), burst: 1)
        let top = Duration.saturatedMax
        // The first call at max − 10 s, then 100 at the maximum: 10 s refilled one permit.
        #expect(await Self.admitted(one, from: top.subtracting(.seconds(10)), at: top) == 2)
        let three = RateLimit(3, per: .seconds(1), burst: 3)
        #expect(await Self.admitted(three, from: top, at: top) == 3)
        #expect(await Self.admitted(three, from: top.subtracting(.seconds(1)), at: top) == 4)
    }

    @Test func oneInstantAtTheBottomOfTheRangeAdmitsOnlyTheBurst() async {
        let three = RateLimit(3, per: .seconds(1), burst: 3)
        let bottom = Duration.saturatedMin
        #expect(await Self.admitted(three, from: bottom, at: bottom) == 3)
        #expect(await Self.admitted(three, from: bottom, at: bottom.adding(.seconds(1))) == 4)
    }

    /// At the top, the key's bucket still fills and the key leaves the registry.
    @Test func aKeyAtTheTopStillLeaves() async {
        let clock = ManualClock(now: .init(offset: Duration.saturatedMax.subtracting(.seconds(10))))
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            let limit = RateLimit(1, per: .seconds(1), burst: 1)
            #expect((try? takeRatePermit(limit, identifier: "edge")) != nil)
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .seconds(5))
            #expect(registry.liveKeyCount == 0)
        }
    }

    /// Waiters at the top: one whose permit is free at the last instant is admitted there; one
    /// whose permit would be free only past it gives up at its deadline (the last instant)
    /// and is told how far past it its permit lies. Nothing fires again and again.
    @Test func waitersAtTheTopAreAdmittedOrGiveUp() async {
        let top = Duration.saturatedMax
        let clock = ManualClock(now: .init(offset: top.subtracting(.seconds(1))))
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            let limit = RateLimit(1, per: .seconds(1), burst: 1)
            let ran = Log<String>()
            #expect((try? takeRatePermit(limit, identifier: "edge")) != nil)
            let second = Task {
                try await rateLimit(
                    limit, whenLimited: .wait(atMost: .seconds(5)),
                    identifier: "edge"
                ) { ran.append("second") }
            }
            #expect(await eventually { rateRow(registry, "edge")?.waiters == 1 })
            let third = Task {
                try await rateLimit(
                    limit, whenLimited: .wait(atMost: .seconds(5)),
                    identifier: "edge"
                ) { ran.append("third") }
            }
            #expect(await eventually { rateRow(registry, "edge")?.waiters == 2 })
            await clock.advance(to: .init(offset: top))
            #expect(await finishes { _ = await second.result })
            #expect(await finishes { _ = await third.result })
            #expect(ran.all == ["second"])
            await #expect(throws: RateLimitError.limited(retryAfter: .seconds(1))) {
                try await third.value
            }
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .seconds(1))
            #expect(registry.liveKeyCount == 1)
        }
    }

    // MARK: Settling at the ends (issue 39)

    /// The last instant, a few seconds before it, and the first instant.
    static let lastInstants: [Duration] = [
        .saturatedMax, Duration.saturatedMax.subtracting(.seconds(5)), .saturatedMin,
    ]

    /// One limit of 1 per second, burst 1 (token bucket or window): the permit is taken, a
    /// waiter of at most 5 s queues, then the clock is advanced by 10 s. The advance returns;
    /// the waiter is admitted a second later, or, at the last instant (where its permit never
    /// comes and its deadline is now), gives up at once. Then the key leaves, unless the clock
    /// is at the last instant, where it keeps the spent permit.
    @Test(arguments: lastInstants, [false, true])
    func aWaiterSettles(start: Duration, window: Bool) async {
        let clock = ManualClock(now: .init(offset: start))
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            let limit =
                window
                ? RateLimit.window(1, per: .seconds(1), margin: .zero)
                : RateLimit(1, per: .seconds(1), burst: 1)
            let log = Log<String>()
            #expect(take(limit, key: "edge") == nil)
            let waiter = Task {
                do {
                    try await rateLimit(
                        limit, whenLimited: .wait(atMost: .seconds(5)), identifier: "edge"
                    ) { log.append("admitted@\(registry.now.subtracting(start))") }
                } catch {
                    log.append("gave up")
                }
            }
            if start != .saturatedMax {
                #expect(await eventually { rateWaiters(registry, "edge") == 1 })
            }
            #expect(await finishes { await clock.advance(by: .seconds(10)) })
            #expect(await finishes { await waiter.value })
            #expect(log.all == [start == .saturatedMax ? "gave up" : "admitted@1.0 seconds"])
            // The bound: nothing more is free within a second of the last start.
            if start == .saturatedMax { #expect(take(limit, key: "edge") != nil) }
            #expect(await finishes { await clock.advance(by: .seconds(10)) })
            #expect(registry.liveKeyCount == (start == .saturatedMax ? 1 : 0))
        }
    }

    /// A hold of 3 s from a retry-after (token bucket or window): starts wait for its end,
    /// saturated to the last instant; there the hold is over at once. Advances return, and the
    /// key leaves, or, at the last instant, keeps its spent permit.
    @Test(arguments: lastInstants, [false, true])
    func aHoldSettles(start: Duration, window: Bool) async {
        let clock = ManualClock(now: .init(offset: start))
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            let limit =
                window
                ? RateLimit.window(5, per: .seconds(1), margin: .zero).holdingOnRetryAfter()
                : RateLimit(5, per: .seconds(1)).holdingOnRetryAfter()
            _ = try? await rateLimit(limit, identifier: "edge") {
                throw SlowDown(retryAfter: .seconds(3))
            }
            let log = Log<String>()
            if start != .saturatedMax {
                #expect(take(limit, key: "edge") == .limited(retryAfter: .seconds(3)))
                let waiter = Task {
                    try await rateLimit(limit, identifier: "edge") {
                        log.append("w@\(registry.now.subtracting(start))")
                    }
                }
                #expect(await eventually { rateWaiters(registry, "edge") == 1 })
                #expect(await finishes { await clock.advance(by: .seconds(2)) })
                #expect(log.all.isEmpty)
                #expect(await finishes { await clock.advance(by: .seconds(1)) })
                #expect(await finishes { _ = await waiter.result })
                #expect(log.all == ["w@3.0 seconds"])
            } else {
                // Time cannot pass: the hold ends where it starts, and one permit is free.
                #expect(take(limit, key: "edge") == nil)
                #expect(await finishes { await clock.advance(by: .seconds(10)) })
            }
            #expect(await finishes { await clock.advance(by: .seconds(10)) })
            #expect(registry.liveKeyCount == (start == .saturatedMax ? 1 : 0))
        }
    }
}
