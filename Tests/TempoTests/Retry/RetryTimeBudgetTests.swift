import TempoTesting
import Testing

@testable import Tempo

@Suite struct RetryTimeBudgetTests {
    /// Runs `retry(10, every: 1 s, timeBudget:)` with attempts that fail at once; returns the
    /// instants the attempts started at and when the call gave up.
    static func schedule(
        timeBudget: Duration?, every delay: Duration = .seconds(1), from start: Duration = .zero
    ) async -> (attempts: [Duration], gaveUpAt: Duration) {
        let clock = ManualClock(now: .init(offset: start))
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
                // An advance that does not return (issue 39) fails the test in seconds.
                guard await finishes({ await clock.advance(by: delay) }) else { break }
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

    /// At the ends of the range (issue 39): the deadline saturates to the last instant, so a
    /// call made there gives up after its first attempt (its wait would end at the deadline),
    /// and one made 5 s before it keeps a 3 s budget.
    @Test(arguments: [
        Duration.saturatedMax, Duration.saturatedMax.subtracting(.seconds(5)), .saturatedMin,
    ])
    func aTimeBudgetAtTheEndsOfTheRange(start: Duration) async {
        let (attempts, gaveUpAt) = await Self.schedule(timeBudget: .seconds(3), from: start)
        let offsets = attempts.map { $0.subtracting(start) }
        #expect(offsets == (start == .saturatedMax ? [.zero] : [.zero, .seconds(1), .seconds(2)]))
        #expect(gaveUpAt == attempts.last)
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

    /// A retry-after is what the time budget is checked against: one that would end past the
    /// budget's end is not slept, even though the backoff's own wait would fit.
    @Test func aRetryAfterPastTheBudgetsEndIsNotSlept() async {
        struct SlowDown: RetryAfterProviding, Equatable {
            var retryAfter: Duration? { .seconds(10) }
        }
        await onManualClock { clock, registry in
            let attempts = Log<Duration>()
            let gaveUp = await finishes {
                await #expect(throws: SlowDown()) {
                    try await retry(
                        3, backoff: .constant(.seconds(1)),
                        timeBudget: .seconds(5)
                    ) {
                        attempts.append(registry.now)
                        throw SlowDown()
                    }
                }
            }
            #expect(gaveUp, "the call gave up at once, without sleeping 10 s")
            #expect(attempts.all == [.zero])
            #expect(registry.now == .zero)
        }
    }

    /// A clock that wakes late: the wait ends past the budget's end, and no attempt starts
    /// there.
    @Test func aWaitThatWakesPastTheBudgetsEndStartsNoAttempt() async {
        let clock = LateClock(lateBy: .seconds(2))
        let attempts = Log<Duration>()
        await #expect(throws: Boom.self) {
            try await retry(5, every: .seconds(1), timeBudget: .seconds(2), clock: clock) {
                attempts.append(clock.now.offset)
                throw Boom()
            }
        }
        // Asked to wake at 1 s, the clock woke at 3 s: past the budget's end (2 s).
        #expect(attempts.all == [.zero])
        #expect(clock.now.offset == .seconds(3))
    }
}

/// A clock whose sleeps all end `lateBy` after their deadline: its time jumps there, at once.
private final class LateClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let time = Lock<Duration>(.zero)
    private let lateness: Duration

    init(lateBy lateness: Duration) { self.lateness = lateness }

    var now: Instant { Instant(offset: time.withLock { $0 }) }
    var minimumResolution: Duration { .nanoseconds(1) }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        time.withLock { $0 = max($0, deadline.offset + lateness) }
    }
}
