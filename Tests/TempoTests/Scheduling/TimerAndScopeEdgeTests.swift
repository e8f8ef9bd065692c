import Synchronization
import TempoTesting
import Testing

@testable import Tempo

/// Cancels that race a firing timer, which registry is current where, and instants at the ends
/// of `Duration`'s range.
@Suite struct TimerAndScopeEdgeTests {
    // MARK: A cancel is never lost

    @Test func aTimerCancelledWhileItsCallbackRunsIsNotPutBack() async {
        let manual = ManualClock(now: .init(offset: .seconds(1)))
        let driver = TimerDriver(
            now: { manual.now.offset },
            sleep: { try await manual.sleep(until: .init(offset: $0)) })
        let inside = Lock(false)
        let release = BlockingGate()
        let id = driver.schedule(at: .zero) { _ in
            inside.withLock { $0 = true }
            release.wait()  // holds the timer out until the test cancelled it
            return .seconds(Int64.max)  // asks to fire again, far away
        }
        // The test goes on from a thread of its own: the callback holds a thread of the task
        // pool until the test releases it, and in a parallel run on two cores the test must
        // not wait for the other one to get there. Its polls then no longer stretch with the
        // pool's load, while the runner still waits for the pool: it gets 30 s, which only a
        // broken driver runs out of.
        let executor = ThreadExecutor()
        defer { executor.stop() }
        await withTaskExecutorPreference(executor) {
            let limit = Duration.seconds(30)
            #expect(await eventually(within: limit) { inside.withLock { $0 } })
            driver.cancel(id)
            release.open()
            // Either the runner ends (nothing left) or it put the timer back and sleeps.
            #expect(await eventually(within: limit) { !driver.hasRunner || driver.count > 0 })
            #expect(driver.count == 0)
            #expect(!driver.hasRunner)
        }
    }

    @Test func aTimerCancelledWhileAnotherFiresIsCancelledAsUsual() async {
        let manual = ManualClock(now: .init(offset: .seconds(1)))
        let driver = TimerDriver(
            now: { manual.now.offset },
            sleep: { try await manual.sleep(until: .init(offset: $0)) })
        let fired = Log<String>()
        let other = Lock<UInt64?>(nil)
        _ = driver.schedule(at: .zero) { _ in
            // Cancels a timer that is not out for firing, from inside a callback.
            if let id = other.withLock({ $0 }) { driver.cancel(id) }
            fired.append("first")
            return nil
        }
        other.withLock {
            $0 = driver.schedule(at: .seconds(2)) { _ in
                fired.append("second")
                return nil
            }
        }
        #expect(await settled { fired.count == 1 && !driver.hasRunner })
        #expect(driver.count == 0)
        #expect(fired.all == ["first"])
    }

    /// Issue 39: a callback that asks to fire again at the instant it fired at (the only one
    /// left at the last instant), or `back` before it, is not fired again: its timer ends, and
    /// the runner with it.
    /// (A broken driver stops on its own after 1,000 firings, so the test does not spin.)
    @Test(arguments: [Duration.saturatedMax, .seconds(1)], [Duration.zero, .seconds(1)])
    func aTimerAskingToFireAgainAtItsOwnInstantEnds(at instant: Duration, back: Duration) async {
        let manual = ManualClock(now: .init(offset: instant))
        let driver = TimerDriver(
            now: { manual.now.offset },
            sleep: { try await manual.sleep(until: .init(offset: $0)) })
        let fired = Lock(0)
        _ = driver.schedule(at: instant) { now in
            let count = fired.withLock { count in
                count += 1
                return count
            }
            return count < 1_000 ? now.subtracting(back) : nil
        }
        #expect(await settled { !driver.hasRunner })
        #expect(fired.withLock { $0 } == 1)
        #expect(driver.count == 0)
    }

    // MARK: Which registry is current

    @Test func aTaskStartedInsideWithCurrentKeepsItsRegistryAfterTheScopeEnds() async {
        let registry = TempoRegistry(clock: ManualClock())
        for _ in 0..<20 {
            let task = registry.withCurrent {
                Task { () -> Bool in
                    try? await Task.sleep(for: .milliseconds(1))  // the scope has ended
                    return TempoRegistry.current === registry
                }
            }
            #expect(await task.value)
        }
    }

    @Test func operationsFiredByTheTimerDriverSeeTheirRegistry() async {
        let manual = ManualClock()
        let registry = TempoRegistry(clock: OrdinaryClock(base: manual))
        let seen = Log<String>()
        registry.withCurrent {
            debounce(.seconds(1), identifier: "d", by: .taskContext) {
                seen.append("debounce \(TempoRegistry.current === registry)")
            }
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .trailing) {
                seen.append("throttle \(TempoRegistry.current === registry)")
            }
            delay(.seconds(1), by: .mainActor) {
                seen.append("delay \(TempoRegistry.current === registry)")
            }
        }
        await manual.waitForSleepers(1)
        await manual.advance(by: .seconds(1))
        #expect(await settled { seen.count == 3 })
        #expect(Set(seen.all) == ["debounce true", "throttle true", "delay true"])
    }

    @Test func operationsFiredByAnAdvanceOutsideTheScopeSeeTheirRegistry() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let seen = Log<String>()
        registry.withCurrent {
            debounce(.seconds(1), identifier: "d", by: .taskContext) {
                seen.append("debounce \(TempoRegistry.current === registry)")
            }
            delay(.seconds(2), by: .mainActor) {
                seen.append("delay \(TempoRegistry.current === registry)")
            }
        }
        await clock.advance(by: .seconds(2))  // outside the scope: no registry bound here
        #expect(seen.all == ["debounce true", "delay true"])
        #expect(TempoRegistry.current === TempoRegistry.shared)
    }

    // MARK: Long identifiers

    @Test func aLongIdentifierGroupsCallsAndIsControlledByName() async {
        await onManualClock { clock, registry in
            let long = String(repeating: "k", count: 10_000)
            let twin = String(repeating: "k", count: 9_999) + "k"  // equal, stored apart
            let ran = Log<Int>()
            debounce(.seconds(1), identifier: long, by: .taskContext) { ran.append(0) }
            debounce(.seconds(1), identifier: twin, by: .taskContext) { ran.append(1) }
            #expect(registry.liveKeyCount == 1)
            #expect(GroupKey.name(long) == GroupKey.name(twin))
            #expect(GroupKey.name(long).hashValue == GroupKey.name(twin).hashValue)
            #expect(GroupKey.name(long) != GroupKey.name(long + "!"))
            #expect(pendingDebounce(identifier: twin) != nil)
            await clock.advance(by: .seconds(1))
            #expect(ran.all == [1])
            debounce(.seconds(1), identifier: long, by: .taskContext) { ran.append(2) }
            cancelDebounce(identifier: twin)
            await clock.advance(by: .seconds(1))
            #expect(ran.all == [1])
            #expect(registry.liveKeyCount == 0)
        }
    }

    // MARK: Instants saturate

    @Test func manualClockInstantArithmeticSaturates() {
        let low = ManualClock.Instant(offset: Duration(attoseconds: .min))
        let high = ManualClock.Instant(offset: Duration(attoseconds: .max))
        let one = ManualClock.Instant(offset: .seconds(1))
        let minusOne = ManualClock.Instant(offset: .seconds(-1))
        #expect(one.duration(to: low) == Duration(attoseconds: .min))
        #expect(minusOne.duration(to: high) == Duration(attoseconds: .max))
        #expect(one.duration(to: low.advanced(by: .seconds(1))) < .zero)
        #expect(one.duration(to: minusOne) == .seconds(-2))
        #expect(high.advanced(by: .seconds(1)) == high)
        #expect(low.advanced(by: .seconds(-1)) == low)
    }

    @Test func aTimeoutAtTheEarliestInstantThrowsAtOnce() async {
        let clock = ManualClock(now: .init(offset: .seconds(1)))
        let deadline = ManualClock.Instant(offset: Duration(attoseconds: .min))
        let ran = Log<Int>()
        await #expect(throws: TimeoutError.self) {
            try await timeout(at: deadline, clock: clock) {
                ran.append(1)
                return 1
            }
        }
        #expect(ran.count == 0)
    }

    @Test func sleepingOnAClockThatSpansAllOfDurationsRange() async {
        let clock = ManualClock(now: .init(offset: Duration(attoseconds: .min)))
        let registry = TempoRegistry(clock: clock)
        await clock.advance(to: .init(offset: Duration(attoseconds: .max) - .seconds(1)))
        let sleeper = Task { await registry.withCurrent { await sleep(.seconds(1)) } }
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(1))
        await sleeper.value
        #expect(clock.now.offset == Duration(attoseconds: .max))
    }
}
