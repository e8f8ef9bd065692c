import TempoTesting
import Testing

@testable import Tempo

/// Every kind of keyed entry at either end of the clock's range behaves as it does near zero:
/// it fires on time, and leaves the registry when it is done.
@Suite struct RangeEndsTests {
    static let ends: [Duration] = [
        .zero,
        Duration.saturatedMin.adding(.seconds(100)),
        Duration.saturatedMax.subtracting(.seconds(100)),
    ]

    static func onClock(
        at start: Duration, _ body: (ManualClock, TempoRegistry) async throws -> Void
    ) async rethrows {
        let clock = ManualClock(now: .init(offset: start))
        let registry = TempoRegistry(clock: clock)
        try await registry.withCurrent { try await body(clock, registry) }
    }

    @Test(arguments: ends) func debounceAndThrottle(start: Duration) async {
        await Self.onClock(at: start) { clock, registry in
            let ran = Log<String>()
            debounce(.seconds(1), identifier: "d", by: .taskContext) { ran.append("d") }
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {
                ran.append("t1")
            }
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {
                ran.append("t2")
            }
            await clock.advance(by: .milliseconds(999))
            #expect(ran.all == ["t1"])
            await clock.advance(by: .milliseconds(1))
            #expect(Set(ran.all) == ["t1", "d", "t2"])
            await clock.advance(by: .seconds(1))
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test(arguments: ends) func delayAndRepeat(start: Duration) async {
        await Self.onClock(at: start) { clock, registry in
            let ran = Log<Duration>()
            delay(.seconds(1), by: .taskContext) { ran.append(.zero) }
            let loop = `repeat`(every: .seconds(1), times: 3, by: .taskContext) {
                ran.append(registry.now.subtracting(start))
            }
            await clock.advance(by: .seconds(5))
            await loop.value
            #expect(ran.all.sorted() == [.zero, .seconds(1), .seconds(2), .seconds(3)])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test(arguments: ends) func timeoutAndHedge(start: Duration) async throws {
        try await Self.onClock(at: start) { clock, registry async throws in
            let timed = Task {
                try await timeout(.seconds(1)) { try await clock.sleep(for: .seconds(10)) }
            }
            #expect(await eventually { clock.sleeperCount >= 2 })
            await clock.advance(by: .seconds(1))
            await #expect(throws: TimeoutError.timedOut(.seconds(1))) { try await timed.value }
            let hedged = Task {
                try await hedge(maxAttempts: 2, after: .seconds(1)) { attempt in
                    if attempt == 1 { try await clock.sleep(for: .seconds(10)) }
                    return attempt
                }
            }
            #expect(await eventually { clock.sleeperCount >= 2 })
            await clock.advance(by: .seconds(1))
            #expect(try await hedged.value == 2)
            #expect(await eventually { registry.liveKeyCount == 0 })
        }
    }

    /// Also 5 s before the last instant, where the holder wakes at it, and at the first
    /// instant. (At the last instant itself no call can hold a slot while the clock is
    /// advanced: every sleep on the clock is due at once there.)
    @Test(arguments: ends + [Duration.saturatedMax.subtracting(.seconds(5)), .saturatedMin])
    func concurrencyLimitQueueTimeout(start: Duration) async {
        await Self.onClock(at: start) { clock, registry in
            let release = Flag()
            let first = Task {
                try await concurrencyLimit(1, queueTimeout: .seconds(1), identifier: "c") {
                    try await clock.sleep(for: .seconds(5))
                    release.set()
                }
            }
            #expect(await eventually { clock.sleeperCount >= 1 })
            let second = Task {
                try await concurrencyLimit(1, queueTimeout: .seconds(1), identifier: "c") { 2 }
            }
            #expect(await eventually { clock.sleeperCount >= 2 })
            await clock.advance(by: .seconds(1))
            await #expect(throws: ConcurrencyLimitError.self) { try await second.value }
            await clock.advance(by: .seconds(4))
            try? await first.value
            #expect(release.isSet)
            #expect(registry.liveKeyCount == 0)
        }
    }

    // MARK: At the ends themselves

    /// The last instant itself, a few seconds before it (where the last deadlines saturate to
    /// it), and the first instant: every timed entry settles there, an advance returns, and the
    /// registry ends empty (issue 39).
    static let lastInstants: [Duration] = [
        .saturatedMax, Duration.saturatedMax.subtracting(.seconds(5)), .saturatedMin,
    ]

    /// Advances `clock` by `duration` in a task; `false` when the advance has not returned
    /// within about 2 s of real time (a timer firing again and again at one instant).
    static func advances(_ clock: ManualClock, by duration: Duration) async -> Bool {
        await finishes { await clock.advance(by: duration) }
    }

    @Test(arguments: lastInstants) func debounceAndThrottleSettle(start: Duration) async {
        await Self.onClock(at: start) { clock, registry in
            let ran = Log<String>()
            for name in ["d1", "d2"] {
                debounce(.seconds(1), identifier: "d", by: .taskContext) { ran.append(name) }
            }
            for name in ["t1", "t2", "t3"] {
                throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {
                    ran.append(name)
                }
            }
            #expect(await Self.advances(clock, by: .seconds(10)))
            // At the last instant time cannot pass: a debounced call is due at once, so the
            // second call finds the first due, and each throttle window closes as it opens.
            let expected =
                start == .saturatedMax ? ["d1", "d2", "t1", "t2", "t3"] : ["d2", "t1", "t3"]
            #expect(Set(ran.all) == Set(expected))
            #expect(ran.count == expected.count)
            #expect(registry.liveKeyCount == 0)
        }
    }

    /// A repeat's tick past the last instant never comes: the loop ends after the ticks the
    /// range holds, instead of running again and again at the last instant.
    @Test(arguments: lastInstants) func delayAndRepeatSettle(start: Duration) async {
        await Self.onClock(at: start) { clock, registry in
            let delayed = Log<Duration>()
            let ticks = Log<Duration>()
            delay(.seconds(1), by: .taskContext) { delayed.append(registry.now) }
            let loop = `repeat`(every: .seconds(1), by: .taskContext) {
                ticks.append(registry.now)
            }
            #expect(await Self.advances(clock, by: .seconds(10)))
            #expect(delayed.all == [min(start.adding(.seconds(1)), .saturatedMax)])
            switch start {
            case .saturatedMax:
                #expect(ticks.all == [.saturatedMax])
            case .saturatedMin:
                #expect(ticks.count == 10)
                loop.cancel()
            default:
                // max − 5 s: ticks at max − 4 s … max, then none.
                #expect(ticks.all == (1...5).map { start.adding(.seconds($0)) })
            }
            #expect(await finishes { await loop.value })
            #expect(registry.liveKeyCount == 0)
        }
    }

    /// A timeout elsewhere fires a second later. At the last instant its deadline and the
    /// operation's sleep are both due at once: either may win, and the call settles. A hedge at
    /// the last instant has its first attempt's sleep due at once: it wins, and no second
    /// attempt starts.
    @Test(arguments: lastInstants) func timeoutAndHedgeSettle(start: Duration) async throws {
        try await Self.onClock(at: start) { clock, registry async throws in
            let timed = Task {
                try await timeout(.seconds(1)) { try await clock.sleep(for: .seconds(10)) }
            }
            if start != .saturatedMax {
                #expect(await eventually { clock.sleeperCount >= 2 })
            }
            #expect(await Self.advances(clock, by: .seconds(1)))
            if start == .saturatedMax {
                #expect(await finishes { _ = await timed.result })
            } else {
                await #expect(throws: TimeoutError.timedOut(.seconds(1))) { try await timed.value }
            }
            let started = Log<Int>()
            let hedged = Task {
                try await hedge(maxAttempts: 2, after: .seconds(1)) { attempt in
                    started.append(attempt)
                    if attempt == 1 { try await clock.sleep(for: .seconds(10)) }
                    return attempt
                }
            }
            if start == .saturatedMax {
                #expect(try await hedged.value == 1)
            } else {
                #expect(await eventually { clock.sleeperCount >= 2 })
            }
            #expect(await Self.advances(clock, by: .seconds(1)))
            #expect(try await hedged.value == (start == .saturatedMax ? 1 : 2))
            #expect(started.all == (start == .saturatedMax ? [1] : [1, 2]))
            #expect(await Self.advances(clock, by: .seconds(10)))
            #expect(await eventually { registry.liveKeyCount == 0 })
        }
    }

    /// A breaker opened near the end breaks until `breakDuration` later, saturated to the last
    /// instant: there it is half-open, a trial call closes it, and it leaves.
    @Test(arguments: lastInstants) func circuitBreakerOpensThenHalfOpens(start: Duration) async {
        await Self.onClock(at: start) { clock, registry in
            let policy = CircuitBreakerPolicy(
                failureRatio: 0.5, window: .lastDuration(.seconds(10)), minimumCalls: 1,
                breakDuration: .seconds(10))
            let ran = Log<String>()
            #expect(await breakerCall(policy, key: "b", .fail) == "boom")
            #expect(breakerState(registry, "b") == (start == .saturatedMax ? .halfOpen : .open))
            #expect(await Self.advances(clock, by: .seconds(9)))
            if start == .saturatedMin {
                #expect(await breakerCall(policy, key: "b", .succeed, ran: ran) != "ok")
                #expect(ran.count == 0)
            }
            #expect(await Self.advances(clock, by: .seconds(1)))
            #expect(breakerState(registry, "b") == .halfOpen)
            #expect(await breakerCall(policy, key: "b", .succeed, ran: ran) == "ok")
            #expect(ran.all == ["b"])
            #expect(await Self.advances(clock, by: .seconds(20)))
            #expect(registry.liveKeyCount == 0)
        }
    }

    /// A failure of a closed breaker's time window ages `duration` later, saturated to the last
    /// instant: a breaker whose failure ages only there keeps it (its ratio holds), and its timer
    /// does not fire again and again.
    @Test(arguments: lastInstants) func circuitBreakerTimeWindowSettles(start: Duration) async {
        await Self.onClock(at: start) { clock, registry in
            let policy = CircuitBreakerPolicy(
                failureRatio: 0.5, window: .lastDuration(.seconds(10)), minimumCalls: 3,
                breakDuration: .seconds(10))
            #expect(await breakerCall(policy, key: "b", .fail) == "boom")
            #expect(await Self.advances(clock, by: .seconds(20)))
            let kept = start == .saturatedMin ? nil : 1
            #expect(breakerRow(registry, "b")?.failures == kept)
            #expect(await Self.advances(clock, by: .seconds(20)))
            #expect(registry.liveKeyCount == (kept ?? 0))
        }
    }

    /// The registry's own firing at the last instant, on a clock that would fire a timer
    /// again whenever asked (issue 39): a retry budget whose next wake is that same instant
    /// asks for none, stays (its counts are not lost), and a later call arms a new timer. A
    /// window limit there arms none: its start counts for good.
    @Test func aFiringAtTheLastInstantAsksForNoWakeAtThatInstant() async throws {
        let clock = ScriptedClock()
        clock.set(.saturatedMax)
        let registry = TempoRegistry(clock: clock)
        let window = RateLimit.window(1, per: .seconds(1), margin: .zero)
        try await registry.withCurrent {
            _ = try await retry(2, every: .zero, budget: RetryBudget(identifier: "b")) { 1 }
            #expect(take(window, key: "w") == nil)
        }
        try #require(clock.timers.count == 1)
        #expect(clock.timers[0].deadline == .saturatedMax)
        #expect(clock.fire(0) == nil)
        #expect(registry.budgetRow("b")?.calls == 1)
        #expect(rateRow(registry, "w")?.tokens == 0)
        #expect(registry.liveKeyCount == 2)
        try await registry.withCurrent {
            _ = try await retry(2, every: .zero, budget: RetryBudget(identifier: "b")) { 1 }
            #expect(take(window, key: "w") != nil)
        }
        // The kept budget has no timer any more: the later call armed a new one.
        try #require(clock.timers.count == 2)
        #expect(clock.fire(1) == nil)
        #expect(registry.budgetRow("b")?.calls == 2)
        #expect(registry.liveKeyCount == 2)
    }
}
