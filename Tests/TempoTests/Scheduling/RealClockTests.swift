import Synchronization
import Testing

@testable import Tempo

/// The few tests that run on `ContinuousClock`, to check the wiring of the engine's sleeping
/// timers to a real clock. Margins are generous: they assert order and "eventually", never
/// how fast the machine is.
@Suite struct RealClockTests {
    @Test func realClockDebounceRunsOnlyTheLastCallAfterTheWindow() async {
        let registry = TempoRegistry(clock: ContinuousClock())
        let ran = Log<(Int, Duration)>()
        let start = ContinuousClock.now
        registry.withCurrent {
            for i in 0..<5 {
                debounce(.milliseconds(40), identifier: "real", by: .taskContext) {
                    ran.append((i, ContinuousClock.now - start))
                }
            }
        }
        #expect(await eventually { ran.count == 1 })
        #expect(ran.all.map(\.0) == [4])
        #expect(ran.all.allSatisfy { $0.1 >= .milliseconds(40) })
        #expect(await eventually { registry.liveKeyCount == 0 })
    }

    @Test func realClockBurstsFromALoopAlwaysEndWithTheLastCall() async {
        let registry = TempoRegistry(clock: ContinuousClock())
        let ran = Log<(burst: Int, call: Int)>()
        registry.withCurrent {
            for burst in 0..<1_000 {
                for call in 0..<8 {
                    debounce(.milliseconds(20), identifier: "b\(burst)", by: .taskContext) {
                        ran.append((burst, call))
                    }
                }
            }
        }
        #expect(await eventually { Set(ran.all.map(\.burst)).count == 1_000 })
        #expect(await eventually { registry.liveKeyCount == 0 })
        // A loop stalled by the machine for longer than the window really has paused, and the
        // call before the pause runs then; but every burst ends with the loop's last call.
        var last: [Int: Int] = [:]
        for run in ran.all { last[run.burst] = run.call }
        #expect(last.count == 1_000)
        #expect(last.values.allSatisfy { $0 == 7 })
    }

    @Test func realClockThrottleEnsureLastAndMainActorDelivery() async {
        let registry = TempoRegistry(clock: ContinuousClock())
        let ran = Log<Int>()
        registry.withCurrent {
            for i in 0..<50 {
                throttle(.milliseconds(30), identifier: "t", option: .ensureLast) {
                    MainActor.assertIsolated()
                    ran.append(i)
                }
            }
        }
        #expect(await eventually { ran.count == 2 })
        #expect(ran.all == [0, 49])
        #expect(await eventually { registry.liveKeyCount == 0 })
    }

    @Test func realClockASlowOperationDoesNotDelayOtherKeys() async {
        let registry = TempoRegistry(clock: ContinuousClock())
        let release = Lock(false)
        let ran = Log<String>()
        _ = registry.withCurrent {
            debounce(.milliseconds(1), identifier: "slow", by: .taskContext) {
                ran.append("slow started")
                while !release.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
                ran.append("slow finished")
            }
        }
        #expect(await eventually { ran.all == ["slow started"] })
        registry.withCurrent { () -> Void in
            debounce(.milliseconds(1), identifier: "fast", by: .taskContext) { ran.append("fast") }
        }
        #expect(await eventually { ran.all == ["slow started", "fast"] })
        release.withLock { $0 = true }
        #expect(await eventually { ran.count == 3 })
    }

    @Test func realClockHugeDurationsAreCancellable() async {
        let registry = TempoRegistry(clock: ContinuousClock())
        let ran = Log<String>()
        let forever = Duration.seconds(Int64.max)
        let (executed, slept) = registry.withCurrent {
            debounce(forever, identifier: "d", by: .taskContext) { ran.append("debounce") }
            throttle(forever, identifier: "t", by: .taskContext, option: .ensureLast) {}
            throttle(forever, identifier: "t", by: .taskContext, option: .ensureLast) {
                ran.append("trailing")
            }
            delay(forever, by: .taskContext) { ran.append("delay") }
            let executed = execute(with: forever, on: .taskContext) { ran.append("execute") }
            let slept = Task { await sleep(forever) }
            return (executed, slept)
        }
        #expect(registry.liveKeyCount == 4)
        registry.cancelAll()
        executed.cancel()
        slept.cancel()
        await executed.value
        await slept.value
        #expect(registry.liveKeyCount == 0)
        #expect(ran.all == [])
    }

    @Test func realClockSleepAndExecuteWaitAtLeastTheirDuration() async {
        let start = ContinuousClock.now
        await sleep(.milliseconds(20))
        #expect(ContinuousClock.now - start >= .milliseconds(20))
        let ranAfter = Log<Duration>()
        let executeStart = ContinuousClock.now
        await execute(with: .milliseconds(20), on: .taskContext) {
            ranAfter.append(ContinuousClock.now - executeStart)
        }.value
        #expect(ranAfter.all.count == 1)
        #expect(ranAfter.all.allSatisfy { $0 >= .milliseconds(20) })
    }
}
