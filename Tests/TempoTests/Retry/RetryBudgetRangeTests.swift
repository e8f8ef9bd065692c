import TempoTesting
import Testing

@testable import Tempo

/// A retry budget at either end of the clock's range: its slices are counted from wherever
/// the clock is, so the bound holds and a quiet key leaves the registry, as it does near zero.
@Suite struct RetryBudgetRangeTests {
    /// 600 successful calls over a minute, 100 s of quiet, then 10 failing calls of three
    /// attempts each: those 10 calls deposit one retry (ratio 0.1), and the 600 calls left
    /// the window long ago, so exactly one retry is made. Then the key leaves.
    static func quietAfterBusy(at start: Duration) async -> (retries: Int, live: Int) {
        let clock = ManualClock(now: .init(offset: start))
        let registry = TempoRegistry(clock: clock)
        return await registry.withCurrent {
            let probe = BudgetProbe()
            let budget = RetryBudget(
                identifier: "edge", ratio: 0.1, minimumPerSecond: 0, window: .seconds(10))
            for _ in 0..<600 {
                await probe.call(budget, succeed: true)
                await clock.advance(by: .milliseconds(100))
            }
            await clock.advance(by: .seconds(100))
            let before = probe.attempts
            for _ in 0..<10 { await probe.call(budget, maxAttempts: 3) }
            let retries = probe.attempts - before - 10
            await clock.advance(by: .seconds(20))
            return (retries, registry.liveKeyCount)
        }
    }

    @Test(arguments: [Duration.seconds(-1000), .seconds(10_000_000_000)])
    func theBoundHoldsAndTheKeyLeavesBelowZeroAndPastInt64Nanoseconds(start: Duration) async {
        let result = await Self.quietAfterBusy(at: start)
        #expect(result.retries == 1)
        #expect(result.live == 0)
    }

    @Test(arguments: [
        Duration.saturatedMin.adding(.seconds(200)), .saturatedMax.subtracting(.seconds(200)),
    ])
    func theBoundHoldsAndTheKeyLeavesAtTheEndsOfDuration(start: Duration) async {
        let result = await Self.quietAfterBusy(at: start)
        #expect(result.retries == 1)
        #expect(result.live == 0)
    }

    /// Past `Int64.max` seconds a budgeted retry does not trap: it counts its call as
    /// anywhere else.
    @Test func aBudgetPastInt64SecondsDoesNotTrap() async throws {
        let far = Duration(attoseconds: Int128(Int64.max) * 1_000_000_000_000_000_000)
        let clock = ManualClock(now: .init(offset: far.adding(.seconds(5))))
        let registry = TempoRegistry(clock: clock)
        try await registry.withCurrent {
            let value = try await retry(1, every: .zero, budget: RetryBudget(identifier: "far")) {
                1
            }
            #expect(value == 1)
            #expect(registry.budgetRow("far")?.calls == 1)
        }
    }

    /// Issue 39: on a clock at its last instant, a budgeted retry's key has a timer due at that
    /// instant whose firing changes nothing (its slices end past the range). It must fire
    /// once, not again and again: the next advance returns, and the call still counts.
    @Test func anAdvanceAfterABudgetedRetryAtTheLastInstantReturns() async throws {
        let clock = ManualClock(now: .init(offset: .saturatedMax))
        let registry = TempoRegistry(clock: clock)
        try await registry.withCurrent {
            let value = try await retry(3, every: .zero, budget: RetryBudget(identifier: "last")) {
                1
            }
            #expect(value == 1)
            #expect(await finishes { await clock.advance(by: .seconds(1)) })
            #expect(registry.budgetRow("last")?.calls == 1)
        }
    }

    /// At the last instant, 5 s before it and at the first instant (issue 39): 10 failing calls
    /// of 3 attempts at a ratio of 0.1 make one retry; 10 s later, 10 more make one more. At
    /// the top, the slices of the first calls end past the range, so they still count (20
    /// calls, 2 retries: the bound holds over both) and the key stays; at the bottom they have
    /// left, and the key leaves. Every advance returns.
    @Test(arguments: [
        Duration.saturatedMax, Duration.saturatedMax.subtracting(.seconds(5)), .saturatedMin,
    ])
    func aBudgetAtTheEndsSettlesAndKeepsItsBound(start: Duration) async {
        let clock = ManualClock(now: .init(offset: start))
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            let probe = BudgetProbe()
            let budget = RetryBudget(
                identifier: "end", ratio: 0.1, minimumPerSecond: 0, window: .seconds(10))
            for _ in 0..<10 { await probe.call(budget, maxAttempts: 3) }
            #expect(probe.attempts == 11)
            #expect(await finishes { await clock.advance(by: .seconds(10)) })
            for _ in 0..<10 { await probe.call(budget, maxAttempts: 3) }
            #expect(probe.attempts == 22)
            let top = start != .saturatedMin
            #expect(registry.budgetRow("end")?.calls == (top ? 20 : 10))
            #expect(registry.budgetRow("end")?.retries == (top ? 2 : 1))
            #expect(await finishes { await clock.advance(by: .seconds(20)) })
            #expect(registry.liveKeyCount == (top ? 1 : 0))
        }
    }

    /// A slice before the clock's origin is as long as one after it: a deposit at −0.5 s (slice
    /// −1 of a 10 s window) counts until the start of slice 9, at 9 s, not 10 s.
    @Test func slicesBeforeZeroAreAsLongAsAfter() async {
        let clock = ManualClock(now: .init(offset: .milliseconds(-500)))
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            let probe = BudgetProbe()
            let budget = RetryBudget(identifier: "zero", ratio: 0.5, minimumPerSecond: 0)
            await probe.call(budget, succeed: true)
            await clock.advance(to: .init(offset: .milliseconds(8_999)))
            #expect(registry.budgetRow("zero")?.calls == 1)
            await clock.advance(to: .init(offset: .seconds(9)))
            #expect(registry.budgetRow("zero") == nil)
            #expect(registry.liveKeyCount == 0)
        }
    }
}
