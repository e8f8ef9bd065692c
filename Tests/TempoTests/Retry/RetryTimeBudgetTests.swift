import Synchronization
import TempoTesting
import Testing

@testable import Tempo

@Suite struct RetryTimeBudgetTests {
    /// Runs `retry(10, every: 1 s, timeBudget:)` with attempts that fail at once; returns the
    /// instants the attempts started at and when the call gave up.
    static func schedule(
        timeBudget: Duration?, every delay: Duration = .seconds(1)
    ) async -> (attempts: [Duration], gaveUpAt: Duration) {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let attempts = Log<Duration>()
        return await registry.withCurrent {
            let done = Flag()
            let task = Task {
                defer { done.set() }
                try await retry(10, every: delay, timeBudget: timeBudget) {
                    attempts.append(registry.now)
                    throw Boom(attempt: attempts.count)
                }
            }
            while await eventually({ clock.sleeperCount == 1 || done.isSet }), !done.isSet {
                await clock.advance(by: delay)
            }
            let gaveUpAt = registry.now
            await #expect(throws: Boom(attempt: attempts.count)) { try await task.value }
            return (attempts.all, gaveUpAt)
        }
    }

    @Test func aWaitEndingAtTheDeadlineIsNotSlept() async {
        let (attempts, gaveUpAt) = await Self.schedule(timeBudget: .seconds(3))
        #expect(attempts == [.zero, .seconds(1), .seconds(2)])
        #expect(gaveUpAt == .seconds(2))  // at once, not after a last wait
    }

    @Test func aWaitEndingJustBeforeTheDeadlineIsSlept() async {
        let (attempts, gaveUpAt) = await Self.schedule(timeBudget: .seconds(3) + .nanoseconds(1))
        #expect(attempts == [.zero, .seconds(1), .seconds(2), .seconds(3)])
        #expect(gaveUpAt == .seconds(3))
    }

    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(Int64.min)])
    func zeroOrNegativeAllowsTheFirstAttemptOnly(_ budget: Duration) async {
        let (attempts, gaveUpAt) = await Self.schedule(timeBudget: budget, every: .zero)
        #expect(attempts == [.zero])
        #expect(gaveUpAt == .zero)
    }

    @Test func noTimeBudgetMakesEveryAttempt() async {
        let (attempts, _) = await Self.schedule(timeBudget: nil)
        #expect(attempts.count == 10)
        let huge = await Self.schedule(timeBudget: .seconds(Int64.max))
        #expect(huge.attempts.count == 10)
    }

    /// The running attempt is not cut short: it finishes past the deadline and its value is
    /// returned; only a failure there ends the call, with its own error.
    @Test func theRunningAttemptIsNotCutShort() async {
        await onManualClock { clock, registry in
            let slow = Task {
                try await retry(3, every: .seconds(1), timeBudget: .seconds(2)) {
                    try await clock.sleep(for: .seconds(5))
                    return registry.now
                }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .seconds(5))
            #expect((try? await slow.value) == .seconds(5))
            let failing = Task {
                try await retry(3, every: .zero, timeBudget: .seconds(2)) {
                    try await clock.sleep(for: .seconds(5))
                    throw Boom(attempt: 1)
                }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .seconds(5))
            await #expect(throws: Boom(attempt: 1)) { try await failing.value }
            #expect(clock.sleeperCount == 0)
        }
    }

    /// A retry the time budget refuses takes nothing from the retry budget.
    @Test func theTimeBudgetIsCheckedBeforeTheRetryBudget() async {
        await onManualClock { _, registry in
            let budget = RetryBudget(identifier: "api", ratio: 0, minimumPerSecond: 1)
            await #expect(throws: Boom.self) {
                try await retry(3, every: .zero, budget: budget, timeBudget: .zero) {
                    throw Boom()
                }
            }
            #expect(registry.budgetRow("api")?.retries == 0)
        }
    }

    @Test func cancellingTheWaitThrowsCancellationError() async {
        await onManualClock { clock, registry in
            let task = Task {
                try await retry(3, every: .seconds(1), timeBudget: .seconds(10)) { throw Boom() }
            }
            await clock.waitForSleepers(1)
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(registry.snapshot().isEmpty)
        }
    }
}
