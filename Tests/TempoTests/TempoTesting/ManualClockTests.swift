import TempoTesting
import Testing

@testable import Tempo

@Suite struct ManualClockTests {
    @Test func sleepersResumeInDeadlineOrder() async throws {
        let clock = ManualClock()
        let woke = Log<(Int, Duration)>()
        var tasks: [Task<Void, any Error>] = []
        for (index, seconds) in [3, 1, 2].enumerated() {
            tasks.append(
                Task {
                    try await clock.sleep(for: .seconds(seconds))
                    woke.append((index, clock.now.offset))
                })
            await clock.waitForSleepers(index + 1)
        }
        #expect(clock.sleeperCount == 3)
        await clock.advance(by: .seconds(1))
        try await tasks[1].value
        await clock.advance(by: .seconds(1))
        try await tasks[2].value
        await clock.advance(by: .seconds(10))
        try await tasks[0].value
        #expect(woke.all.map(\.0) == [1, 2, 0])
        // The first two were awaited before the clock moved on; the last may see any time
        // from its deadline to where the advance stopped, since advance does not wait for a
        // task sleeping on the clock directly.
        #expect(woke.all.map(\.1).prefix(2) == [.seconds(1), .seconds(2)])
        #expect(woke.all[2].1 >= .seconds(3))
        #expect(clock.now.offset == .seconds(12))
    }

    @Test func timersFireInDeadlineOrderWithinOneAdvance() async {
        let order = Log<String>()
        await onManualClock { clock, _ in
            delay(.seconds(3), by: .taskContext) { order.append("3 s at \(clock.now.offset)") }
            delay(.seconds(1), by: .taskContext) { order.append("1 s at \(clock.now.offset)") }
            debounce(.seconds(2), identifier: "d", by: .taskContext) {
                order.append("2 s at \(clock.now.offset)")
            }
            await clock.advance(by: .seconds(5))
            #expect(
                order.all == ["1 s at 1.0 seconds", "2 s at 2.0 seconds", "3 s at 3.0 seconds"])
        }
    }

    @Test func advanceWaitsForOperationsItStartsOnOtherActors() async {
        let ran = Log<String>()
        await onManualClock { clock, _ in
            delay(.seconds(1), by: .mainActor) { ran.append("main") }
            delay(.seconds(1), by: .ownedActor) { ran.append("owned") }
            delay(.seconds(1)) { @MainActor in ran.append("main closure") }
            await clock.advance(by: .seconds(1))
            #expect(ran.all.sorted() == ["main", "main closure", "owned"])
        }
    }

    @Test func cancellingASleeperThrowsAndRemovesIt() async {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(5)) }
        await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(5))
        }
        await #expect(throws: CancellationError.self) { try await late.value }
    }

    @Test func pastDeadlinesReturnAtOnceAndTimeNeverGoesBack() async throws {
        let clock = ManualClock(now: .init(offset: .seconds(10)))
        try await clock.sleep(until: .init(offset: .seconds(3)))
        await clock.advance(to: .init(offset: .seconds(2)))
        #expect(clock.now.offset == .seconds(10))
        await clock.advance(by: .seconds(-4))
        #expect(clock.now.offset == .seconds(10))
        #expect(clock.minimumResolution == .nanoseconds(1))
    }

    @Test func instantArithmeticSaturates() {
        let far = ManualClock.Instant(offset: .seconds(Int64.max))
        let farther = far.advanced(by: Duration(attoseconds: .max))
        #expect(farther.offset == Duration(attoseconds: .max))
        #expect(far.advanced(by: .seconds(-1)) < far)
        #expect(ManualClock.Instant(offset: .zero).duration(to: far) == .seconds(Int64.max))
    }

    @Test func runUntilIdleFiresEverythingAndStops() async {
        let ran = Log<Int>()
        await onManualClock { clock, registry in
            for i in 1...5 { delay(.seconds(i * 100), by: .taskContext) { ran.append(i) } }
            await clock.runUntilIdle()
            #expect(ran.all == [1, 2, 3, 4, 5])
            #expect(clock.now.offset == .seconds(500))
            #expect(clock.sleeperCount == 0)
            #expect(registry.liveKeyCount == 0)
        }
    }

    /// `limit` is how far past now deadlines may still be fired: one due exactly at the limit
    /// fires, one past it does not, and the clock stops at the last deadline it fired.
    @Test func runUntilIdleFiresADeadlineExactlyAtItsLimitAndNoneBeyond() async {
        let ran = Log<Int>()
        await onManualClock { clock, _ in
            delay(.seconds(5), by: .taskContext) { ran.append(5) }
            delay(.seconds(6), by: .taskContext) { ran.append(6) }
            await clock.runUntilIdle(limit: .seconds(5))
            #expect(ran.all == [5])
            #expect(clock.now.offset == .seconds(5))
            await clock.runUntilIdle()
            #expect(ran.all == [5, 6])
        }
    }

    @Test func anOperationSleepingOnTheClockDoesNotDeadlockTheAdvance() async {
        let steps = Log<String>()
        await onManualClock { clock, _ in
            let task = delay(.seconds(1), by: .taskContext) {
                steps.append("started")
                try await clock.sleep(for: .seconds(1))
                steps.append("finished")
            }
            await clock.advance(by: .seconds(1))
            #expect(steps.all == ["started"])
            await clock.advance(by: .seconds(1))
            await task.value
            #expect(steps.all == ["started", "finished"])
        }
    }

    /// Issue 39: a timer whose callback asks to fire again at the instant it fired at, or
    /// `back` before it (at the last instant no later one exists), is not fired again: the
    /// advance returns, the timer is gone, and a later timer still fires. (A broken clock stops
    /// on its own after 1,000 firings, so the test does not spin.)
    @Test(arguments: [Duration.saturatedMax, .seconds(1)], [Duration.zero, .seconds(1)])
    func aTimerAskingToFireAgainAtItsOwnInstantEnds(at instant: Duration, back: Duration) async {
        let clock = ManualClock(now: .init(offset: instant))
        let fired = Lock(0)
        _ = clock.scheduleTimer(at: instant) { now in
            let count = fired.withLock { count in
                count += 1
                return count
            }
            return count < 1_000 ? now.subtracting(back) : nil
        }
        let later = Lock<Duration?>(nil)
        _ = clock.scheduleTimer(at: instant.adding(.seconds(1))) { now in
            later.withLock { $0 = now }
            return nil
        }
        #expect(await finishes { await clock.advance(by: .seconds(2)) })
        #expect(fired.withLock { $0 } == 1)
        #expect(clock.sleeperCount == 0)
        #expect(later.withLock { $0 } == instant.adding(.seconds(1)))
    }
}
