import Synchronization
import TempoTesting
import Testing

@testable import Tempo

// Every rule of the window limit on the manual clock: N starts in any rolling window, the
// window's closing edge, the margin, weights, the exact `retryAfter`, first in first out,
// cancellation, the maximum wait, reset, the snapshot row, the key leaving the registry, and
// both ends of the clock's range.

@Suite struct WindowLimitTests {
    /// 3 starts in any second, no margin.
    let limit = RateLimit.window(3, per: .seconds(1), margin: .zero)

    @Test func nStartsPassAtOnceAndTheNextWhenTheOldestLeavesTheWindow() async {
        await onManualClock { clock, registry in
            for _ in 0..<3 { #expect(take(limit, key: "k") == nil) }
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(1)))
            await clock.advance(by: .milliseconds(999))
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(1)))
            // A window covers [t, t + 1 s): a start exactly a window after another is allowed.
            await clock.advance(by: .milliseconds(1))
            for _ in 0..<3 { #expect(take(limit, key: "k") == nil) }
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(1)))
            #expect(registry.liveKeyCount == 1)
        }
    }

    @Test func theWindowRollsStartByStartNotInFixedSlots() async {
        await onManualClock { clock, _ in
            for step in 0..<3 {
                #expect(take(limit, key: "k") == nil, "start \(step)")
                await clock.advance(by: .milliseconds(300))
            }
            // At 900 ms: starts at 0, 300 and 600 are in the window.
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(100)))
            await clock.advance(by: .milliseconds(100))
            #expect(take(limit, key: "k") == nil)  // 1000: the start at 0 has left
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(300)))
        }
    }

    @Test func theMarginCountsEachStartThatMuchLonger() async {
        await onManualClock { clock, _ in
            let limit = RateLimit.window(2, per: .seconds(1), margin: .milliseconds(100))
            #expect(limit.margin == .milliseconds(100))
            #expect(take(limit, weight: 2, key: "k") == nil)
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(1_100)))
            await clock.advance(by: .seconds(1))
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(100)))
            await clock.advance(by: .milliseconds(100))
            #expect(take(limit, weight: 2, key: "k") == nil)
        }
    }

    @Test func theDefaultMarginIsFivePercentBetweenFiftyMillisecondsAndOneSecond() {
        #expect(RateLimit.window(10, per: .seconds(1)).margin == .milliseconds(50))
        #expect(RateLimit.defaultMargin(for: .milliseconds(100)) == .milliseconds(50))
        #expect(RateLimit.defaultMargin(for: .seconds(2)) == .milliseconds(100))
        #expect(RateLimit.defaultMargin(for: .seconds(60)) == .seconds(1))
        #expect(RateLimit.defaultMargin(for: .zero) == .zero)
        // A window of zero or less is no limit: no margin either.
        #expect(RateLimit.defaultMargin(for: .seconds(-1)) == .zero)
        #expect(RateLimit.defaultMargin(for: .seconds(Int64.min)) == .zero)
        #expect(RateLimit.window(10, per: .seconds(-1)).margin == .zero)
        #expect(RateLimit.window(1, per: .seconds(1), margin: .seconds(-1)).margin == .zero)
        #expect(RateLimit.window(10, per: .seconds(1)).isWindow)
        #expect(!RateLimit(10, per: .seconds(1)).isWindow)
        #expect(RateLimit.window(10, per: .seconds(1)) != RateLimit(10, per: .seconds(1)))
        #expect(
            RateLimit.window(10, per: .seconds(1)).description
                == "10 in any 1.000 s, margin 50.0 ms"
        )
    }

    @Test func weightsCountAsThatManyStarts() async {
        await onManualClock { clock, _ in
            let limit = RateLimit.window(5, per: .seconds(1), margin: .zero)
            #expect(take(limit, weight: 3, key: "k") == nil)
            await clock.advance(by: .milliseconds(500))
            #expect(take(limit, weight: 2, key: "k") == nil)
            await clock.advance(by: .milliseconds(100))
            // Full: a weight of 3 needs the 3 starts at 0 to leave, at 1000.
            #expect(take(limit, weight: 3, key: "k") == .limited(retryAfter: .milliseconds(400)))
            await clock.advance(by: .milliseconds(400))
            #expect(take(limit, weight: 1, key: "k") == nil)
            // Held: 2 at 500, 1 at 1000; a weight of 3 needs the oldest one (at 500) to leave.
            #expect(take(limit, weight: 3, key: "k") == .limited(retryAfter: .milliseconds(500)))
            #expect(take(limit, weight: 2, key: "k") == nil)
            #expect(take(limit, weight: 6, key: "k") == .cannotAdmit(weight: 6, burst: 5))
        }
    }

    @Test func badInputIsSafe() async throws {
        try await onManualClock { _, registry in
            #expect(
                take(RateLimit.window(0, per: .seconds(1)), key: "z")
                    == .cannotAdmit(weight: 1, burst: 0))
            #expect(
                take(RateLimit.window(-3, per: .seconds(1)), key: "z")
                    == .cannotAdmit(weight: 1, burst: 0))
            await #expect(throws: RateLimitError.cannotAdmit(weight: 4, burst: 3)) {
                try await rateLimit(RateLimit.window(3, per: .seconds(1)), weight: 4)
            }
            for interval in [Duration.zero, .seconds(-1), .saturatedMin] {
                let none = RateLimit.window(1, per: interval)
                for _ in 0..<5 { #expect(take(none, weight: .max, key: "n") == nil) }
                let value = try await rateLimit(none, identifier: "n") { 1 }
                #expect(value == 1)
            }
            for weight in [0, -1, Int.min] { #expect(take(limit, weight: weight, key: "w") == nil) }
            // Huge: a window of Duration's largest value plus a margin saturates.
            let widest = RateLimit.window(.max, per: .saturatedMax, margin: .saturatedMax)
            for _ in 0..<10 { #expect(take(widest, weight: .max / 16, key: "h") == nil) }
            #expect(registry.liveKeyCount == 1)
        }
    }

    @Test func waitersAreAdmittedFirstInFirstOutAndNoneOvertakes() async {
        await onManualClock { clock, registry in
            let limit = RateLimit.window(2, per: .seconds(1), margin: .zero)
            let log = Log<String>()
            #expect(take(limit, weight: 2, key: "k") == nil)
            await clock.advance(by: .milliseconds(500))
            #expect(take(limit, key: "x") == nil)  // another key is apart
            let a = await startWaiter("a", limit, weight: 2, key: "k", registry: registry, log: log)
            let b = await startWaiter("b", limit, key: "k", registry: registry, log: log)
            // A newcomer is refused while others wait: b is admitted at 2000, then it at 2000.
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(1_500)))
            await clock.advance(by: .milliseconds(500))
            #expect(log.all == ["a@1000"])
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["a@1000", "b@2000"])
            await a.value
            await b.value
        }
    }

    @Test func aCancelledWaiterTakesNothingAndTheNextMovesUp() async {
        await onManualClock { clock, registry in
            let limit = RateLimit.window(1, per: .seconds(1), margin: .zero)
            let log = Log<String>()
            #expect(take(limit, key: "k") == nil)
            let a = await startWaiter("a", limit, key: "k", registry: registry, log: log)
            let b = await startWaiter("b", limit, key: "k", registry: registry, log: log)
            a.cancel()
            await a.value
            #expect(log.all == ["a!CancellationError()"])
            #expect(rateWaiters(registry, "k") == 1)
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["a!CancellationError()", "b@1000"])
            await b.value
        }
    }

    @Test func aWaiterGivesUpAtItsMaximumWaitAndOneAdmittedAtItsDeadlineIsAdmitted() async {
        await onManualClock { clock, registry in
            let limit = RateLimit.window(1, per: .seconds(1), margin: .zero)
            let log = Log<String>()
            #expect(take(limit, key: "k") == nil)
            let a = await startWaiter(
                "a", limit, policy: .wait(atMost: .milliseconds(300)), key: "k",
                registry: registry, log: log)
            let b = await startWaiter(
                "b", limit, policy: .wait(atMost: .seconds(1)), key: "k", registry: registry,
                log: log)
            // a gives up at 300: a call joining now waits behind b (1000), until 2000.
            await clock.advance(by: .milliseconds(300))
            await a.value
            #expect(log.all == ["a!limited(retryAfter: 1.7 seconds)"])
            await clock.advance(by: .milliseconds(700))
            await b.value
            #expect(log.all == ["a!limited(retryAfter: 1.7 seconds)", "b@1000"])
            // Refused at once: the error says when a start is free.
            await #expect(throws: RateLimitError.limited(retryAfter: .seconds(1))) {
                try await rateLimit(limit, whenLimited: .reject, identifier: "k") {}
            }
        }
    }

    @Test func resetEmptiesTheWindowAndAdmitsTheWaiters() async {
        await onManualClock { clock, registry in
            let limit = RateLimit.window(2, per: .seconds(1), margin: .zero)
            let log = Log<String>()
            #expect(take(limit, weight: 2, key: "k") == nil)
            let a = await startWaiter("a", limit, key: "k", registry: registry, log: log)
            await clock.advance(by: .milliseconds(200))
            resetRateLimit(identifier: "k")
            await a.value
            #expect(log.all == ["a@200"])
            #expect(take(limit, key: "k") == nil)
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(1)))
            resetRateLimit(identifier: "unknown")
        }
    }

    @Test func theSnapshotShowsStartsFreeTheNextOneAndTheWaiters() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            #expect(take(limit, key: "k") == nil)
            await clock.advance(by: .milliseconds(400))
            #expect(take(limit, weight: 2, key: "k") == nil)
            #expect(rateRow(registry, "k")! == (0, .seconds(1), 0))
            let a = await startWaiter("a", limit, key: "k", registry: registry, log: log)
            #expect(rateRow(registry, "k")! == (0, .seconds(1), 1))
            await clock.advance(by: .milliseconds(600))
            await a.value
            // At 1000: 2 at 400 and 1 (a) at 1000 held; the next start is free at 1400.
            #expect(rateRow(registry, "k")! == (0, .milliseconds(1_400), 0))
            await clock.advance(by: .milliseconds(400))
            #expect(rateRow(registry, "k")! == (2, .milliseconds(1_400), 0))
            #expect(registry.snapshot().entries(.rateLimit).count == 1)
        }
    }

    @Test func aKeyLeavesTheRegistryTheInstantItsWindowIsEmpty() async {
        await onManualClock { clock, registry in
            let limit = RateLimit.window(3, per: .seconds(1), margin: .milliseconds(100))
            for _ in 0..<10 {
                #expect(take(limit, key: "k") == nil)
                await clock.advance(by: .milliseconds(400))
            }
            // The last start, at 3600, leaves at 4700.
            await clock.advance(to: .init(offset: .milliseconds(4_699)))
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .milliseconds(1))
            #expect(registry.liveKeyCount == 0)
            #expect(registry.snapshot().entries.isEmpty)
            // One timer per start that moved the window's end, not one per call.
            #expect(registry.timersArmed <= 2)
        }
    }

    @Test func theKeyStaysWhileAWaiterWaitsAndLeavesOnceItsStartHasLeft() async {
        await onManualClock { clock, registry in
            let limit = RateLimit.window(1, per: .seconds(1), margin: .zero)
            let log = Log<String>()
            #expect(take(limit, key: "k") == nil)
            let a = await startWaiter("a", limit, key: "k", registry: registry, log: log)
            a.cancel()
            await a.value
            #expect(registry.liveKeyCount == 1)  // the start at 0 still counts
            await clock.advance(by: .seconds(1))
            #expect(registry.liveKeyCount == 0)
        }
    }
}

/// Both ends of the clock's range: never more than N in a window, never a trap, never a hang.
@Suite struct WindowLimitClockRangeTests {
    @Test func nearTheClocksEndStartsThatCanNeverLeaveKeepTheirPlace() async {
        let clock = ManualClock(now: .init(offset: .saturatedMax.subtracting(.milliseconds(1_500))))
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            let limit = RateLimit.window(2, per: .seconds(1), margin: .zero)
            let log = Log<String>()
            #expect(take(limit, weight: 2, key: "k") == nil)
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(1)))
            // y: a start whose window ends in range, then one whose window never ends. Its
            // timer fires for the first and finds nothing more to wake for: y stays.
            #expect(take(limit, key: "y") == nil)
            await clock.advance(by: .milliseconds(900))
            #expect(take(limit, key: "y") == nil)
            await clock.advance(by: .milliseconds(100))
            #expect(take(limit, weight: 2, key: "y") == .limited(retryAfter: .saturatedMax))
            #expect(take(limit, key: "y") == nil)
            #expect(take(limit, key: "y") == .limited(retryAfter: .saturatedMax))
            #expect(take(limit, weight: 2, key: "k") == nil)
            // These two leave only after Duration's largest instant: never.
            let a = await startWaiter("a", limit, key: "k", registry: registry, log: log)
            #expect(take(limit, key: "x") == nil)
            let reached = await finishes { await clock.advance(by: .saturatedMax) }
            #expect(reached)
            #expect(clock.now.offset == .saturatedMax)
            #expect(take(limit, key: "k") == .limited(retryAfter: .saturatedMax))
            #expect(log.all.isEmpty)
            #expect(registry.liveKeyCount == 3)  // k and y keep their starts, without a timer
            #expect(take(limit, key: "y") == .limited(retryAfter: .saturatedMax))
            _ = registry.snapshot().description
            // x's start, at max - 500 ms, leaves at max - 500 ms + 1 s: never either.
            #expect(take(limit, weight: 2, key: "x") == .limited(retryAfter: .saturatedMax))
            #expect(take(limit, key: "x") == nil)
            a.cancel()
            await a.value
            #expect(log.all == ["a!CancellationError()"])
            #expect(await finishes { await clock.advance(by: .seconds(5)) })
            #expect(take(limit, key: "k") == .limited(retryAfter: .saturatedMax))
            resetRateLimit(identifier: "k")
            #expect(take(limit, weight: 2, key: "k") == nil)
        }
    }

    @Test func aStartExactlyAtTheClocksEndMinusTheWindowLeavesAtTheEnd() async {
        let clock = ManualClock(now: .init(offset: .saturatedMax.subtracting(.seconds(1))))
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            let limit = RateLimit.window(1, per: .seconds(1), margin: .zero)
            #expect(take(limit, key: "k") == nil)
            let admittedAt = Lock<Duration?>(nil)
            let a = Task {
                await registry.withCurrent {
                    try? await rateLimit(limit, identifier: "k") {
                        admittedAt.withLock { $0 = registry.now }
                    }
                }
            }
            #expect(await eventually { rateWaiters(registry, "k") == 1 })
            #expect(await finishes { await clock.advance(by: .saturatedMax) })
            await a.value
            #expect(admittedAt.withLock { $0 } == .saturatedMax)
            #expect(take(limit, key: "k") == .limited(retryAfter: .saturatedMax))
        }
    }

    @Test func nearTheClocksStartTheWindowCountsAsEverywhere() async {
        let clock = ManualClock(now: .init(offset: .saturatedMin))
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            let limit = RateLimit.window(2, per: .seconds(1), margin: .milliseconds(5))
            #expect(take(limit, weight: 2, key: "k") == nil)
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(1_005)))
            await clock.advance(by: .milliseconds(1_004))
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(1)))
            await clock.advance(by: .milliseconds(1))
            #expect(take(limit, weight: 2, key: "k") == nil)
            // From the clock's first instant to its last: the whole range in one step.
            #expect(take(limit, key: "far") == nil)
            #expect(await finishes { await clock.advance(by: .saturatedMax) })
            #expect(await finishes { await clock.advance(by: .saturatedMax) })
            #expect(clock.now.offset == .saturatedMax)
            #expect(take(limit, weight: 2, key: "far") == nil)
            #expect(registry.liveKeyCount == 1)
        }
    }

    /// The state machine alone: a start at the clock's first instant has left any window by its
    /// last (a gap wider than Int128 holds), and one at the last never left by the first.
    @Test func aGapWiderThanTheRangeOfAttosecondsIsCountedExactly() {
        let ask = WindowLimitState<Int>.Ask(weight: 1, permits: 1, span: .seconds(1))
        var state = WindowLimitState<Int>(permits: 1, span: .seconds(1))
        #expect(state.call(at: .saturatedMin, ask: ask) == .admitted)
        #expect(!state.isIdle(at: .saturatedMin))
        #expect(state.isIdle(at: .saturatedMax))
        #expect(state.call(at: .saturatedMax, ask: ask) == .admitted)
        #expect(WindowLog.hasLeft(.saturatedMin, span: .saturatedMax, by: .saturatedMax))
        #expect(!WindowLog.hasLeft(.saturatedMax, span: .zero, by: .saturatedMin))
    }

    /// The state machine alone, at random offsets near both ends: the starts it admits are
    /// never more than N in any window, whatever the calls.
    @Test func neverMoreThanNInAnyWindowAtEitherEnd() {
        var random = SplitMix64(seed: 0x51DE)
        for round in 0..<400 {
            let permits = Int.random(in: 1...4, using: &random)
            let span = Duration.milliseconds(Int.random(in: 1...50, using: &random))
            let origin =
                round.isMultiple(of: 2)
                ? Duration.saturatedMax.subtracting(.milliseconds(200))
                : Duration.saturatedMin
            var state = WindowLimitState<Int>(permits: permits, span: span)
            var admitted: [Duration] = []
            var now = origin
            for _ in 0..<60 {
                now = now.adding(.milliseconds(Int.random(in: 0...9, using: &random)))
                let weight = Int.random(in: 1...permits, using: &random)
                let ask = WindowLimitState<Int>.Ask(weight: weight, permits: permits, span: span)
                if state.call(at: now, ask: ask) == .admitted {
                    admitted += Array(repeating: now, count: weight)
                }
            }
            for (index, start) in admitted.enumerated() {
                let inWindow = admitted[index...].prefix {
                    !WindowLog.hasLeft(start, span: span, by: $0)
                }
                #expect(inWindow.count <= permits, "round \(round)")
                if inWindow.count > permits { return }
            }
        }
    }
}
