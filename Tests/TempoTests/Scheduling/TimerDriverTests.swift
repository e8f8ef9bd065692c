import Synchronization
import TempoTesting
import Testing

@testable import Tempo

/// A manual clock seen as an ordinary `Clock`: the engine then uses its timer driver (one
/// runner task sleeping on the clock), as it does on `ContinuousClock`, while the test still
/// decides what time it is.
struct OrdinaryClock: Clock {
    let base: ManualClock
    var now: ManualClock.Instant { base.now }
    var minimumResolution: Duration { base.minimumResolution }
    func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}

/// Drives the runner: waits until it sleeps, then advances. The runner is not tracked by
/// `advance`, so the test waits for its effects with `settled`, which gives up after about 2 s
/// of polls (see `eventually`): a broken driver fails the test, it does not stall the suite.
func settled(_ condition: @Sendable () -> Bool) async -> Bool {
    await eventually(within: failFastLimit, condition)
}

@Suite struct TimerDriverTests {
    @Test func oneRunnerServesManyGroupsAndEndsWhenNoneIsLeft() async {
        let manual = ManualClock()
        let registry = TempoRegistry(clock: OrdinaryClock(base: manual))
        let driver = registry.clock.driver!
        let ran = Log<Int>()
        registry.withCurrent {
            for key in 0..<1_000 {
                debounce(.seconds(1), identifier: "k\(key)", by: .taskContext) { ran.append(key) }
            }
        }
        #expect(driver.count == 1_000)
        await manual.waitForSleepers(1)
        #expect(manual.sleeperCount == 1)  // one runner, not one task per group
        await manual.advance(by: .seconds(1))
        #expect(await settled { ran.count == 1_000 && !driver.hasRunner })
        #expect(registry.liveKeyCount == 0)
        #expect(driver.count == 0)
        #expect(manual.sleeperCount == 0)
    }

    @Test func anEarlierDeadlineReplacesTheSleepingRunner() async {
        let manual = ManualClock()
        let registry = TempoRegistry(clock: OrdinaryClock(base: manual))
        let ran = Log<String>()
        registry.withCurrent {
            delay(.seconds(10), by: .taskContext) { ran.append("10 s") }
        }
        await manual.waitForSleepers(1)
        registry.withCurrent {
            delay(.seconds(1), by: .taskContext) { ran.append("1 s") }
        }
        // The old runner is cancelled and a new one sleeps until 1 s.
        #expect(await settled { manual.sleeperCount == 1 })
        await manual.advance(by: .seconds(1))
        #expect(await settled { ran.all == ["1 s"] })
        await manual.waitForSleepers(1)
        await manual.advance(by: .seconds(9))
        #expect(await settled { ran.all == ["1 s", "10 s"] })
        #expect(await settled { registry.liveKeyCount == 0 && manual.sleeperCount == 0 })
    }

    @Test func aDebounceGroupIsReArmedWithoutANewTimer() async {
        let manual = ManualClock()
        let registry = TempoRegistry(clock: OrdinaryClock(base: manual))
        let ranAt = Log<Duration>()
        for step in 0..<5 {
            registry.withCurrent {
                debounce(.seconds(1), identifier: "hot", by: .taskContext) {
                    ranAt.append(manual.now.offset)
                }
            }
            // The runner is asleep (again) before the clock moves.
            #expect(await settled { manual.sleeperCount == 1 })
            if step < 4 { await manual.advance(by: .milliseconds(600)) }
        }
        // The last call came at 2.4 s; the runner woke at 1 s, 1.6 s... and re-armed each time.
        await manual.advance(by: .milliseconds(999))
        #expect(await settled { manual.sleeperCount == 1 })
        #expect(ranAt.all.isEmpty)
        await manual.advance(by: .milliseconds(1))
        #expect(await settled { ranAt.count == 1 })
        #expect(ranAt.all == [.milliseconds(3_400)])
        #expect(registry.timersArmed == 1)
    }

    @Test func aSlowTaskContextOperationDoesNotHoldUpOtherTimers() async {
        let manual = ManualClock()
        let registry = TempoRegistry(clock: OrdinaryClock(base: manual))
        let release = BlockingGate()
        let ran = Log<String>()
        registry.withCurrent {
            delay(.seconds(1), by: .taskContext) {
                ran.append("slow started")
                release.wait()  // blocks its thread, not the runner
                ran.append("slow finished")
            }
            delay(.seconds(2), by: .taskContext) { ran.append("next") }
        }
        // The test goes on from a thread of its own: the operation holds a thread of the task
        // pool until the test releases it, and in a parallel run on two cores the test must
        // not wait for the other one to get there. Its polls then no longer stretch with the
        // pool's load, while the runner and the operations still wait for the pool: they get
        // 30 s, which only a broken driver runs out of.
        let executor = ThreadExecutor()
        defer { executor.stop() }
        await withTaskExecutorPreference(executor) {
            let limit = Duration.seconds(30)
            await manual.waitForSleepers(1)
            await manual.advance(by: .seconds(1))
            #expect(await eventually(within: limit) { ran.all == ["slow started"] })
            // A runner held up by the operation never sleeps again: fail, do not hang.
            #expect(await finishes(within: limit) { await manual.waitForSleepers(1) })
            await manual.advance(by: .seconds(1))
            #expect(await eventually(within: limit) { ran.all == ["slow started", "next"] })
            release.open()
            #expect(await eventually(within: limit) { ran.count == 3 })
        }
    }

    @Test func cancelledTimersAreCompactedAway() async {
        let manual = ManualClock()
        let registry = TempoRegistry(clock: OrdinaryClock(base: manual))
        let driver = registry.clock.driver!
        registry.withCurrent {
            for key in 0..<5_000 {
                debounce(.seconds(Int64(1 + key)), identifier: "c\(key)", by: .taskContext) {}
            }
        }
        #expect(driver.heapSize == 5_000)
        registry.cancelAll()
        #expect(driver.count == 0)
        #expect(driver.heapSize <= 1_024)
        #expect(registry.liveKeyCount == 0)
        #expect(await settled { !driver.hasRunner })
    }
}

@Suite struct TimerDriverStorageTests {
    @Test func anIdleDriverGivesItsStorageBack() async {
        let manual = ManualClock()
        let registry = TempoRegistry(clock: OrdinaryClock(base: manual))
        let driver = registry.clock.driver!
        registry.withCurrent {
            for key in 0..<3_000 {
                delay(.seconds(1), by: .taskContext) { _ = key }
            }
        }
        #expect(driver.heapSize == 3_000)
        await manual.waitForSleepers(1)
        await manual.advance(by: .seconds(1))
        #expect(await settled { !driver.hasRunner })
        #expect(driver.heapSize == 0)
        #expect(driver.tableCapacity == 0)
    }
}
