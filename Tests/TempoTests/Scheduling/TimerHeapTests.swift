import TempoTesting
import Testing

@testable import Tempo

/// The timer driver's heap with several distinct deadlines (the default `ContinuousClock`
/// path): each timer fires at its own deadline, whatever order the timers were armed in.
@Suite struct TimerHeapTests {
    @Test func timersWithSeveralDeadlinesFireEachAtItsOwnDeadline() async {
        let manual = ManualClock()
        let registry = TempoRegistry(clock: OrdinaryClock(base: manual))
        let ran = Log<(Int, Duration)>()
        registry.withCurrent {
            for ms in [10, 50, 30, 60, 20, 40] {
                delay(.milliseconds(ms), by: .taskContext) { ran.append((ms, manual.now.offset)) }
            }
        }
        for (index, ms) in [10, 20, 30, 40, 50, 60].enumerated() {
            await manual.waitForSleepers(1)
            await manual.advance(to: ManualClock.Instant(offset: .milliseconds(ms)))
            #expect(
                await settled { ran.count == index + 1 }, "the \(ms) ms timer fires at \(ms) ms")
        }
        #expect(ran.all.map(\.0) == [10, 20, 30, 40, 50, 60])
        #expect(ran.all.map(\.1) == [10, 20, 30, 40, 50, 60].map { .milliseconds($0) })
        #expect(await settled { registry.liveKeyCount == 0 && manual.sleeperCount == 0 })
    }

    @Test func aMostlyCancelledHeapIsCompacted() async {
        let manual = ManualClock()
        let registry = TempoRegistry(clock: OrdinaryClock(base: manual))
        let driver = registry.clock.driver!
        registry.withCurrent {
            for key in 0..<5_000 {
                debounce(.seconds(Int64(1 + key)), identifier: "c\(key)", by: .taskContext) {}
            }
        }
        for key in 0..<4_500 { registry.cancelDebounce(identifier: "c\(key)") }
        #expect(driver.count == 500)
        // Rebuilt once a quarter of the heap was live (1 249 timers), not left at 5 000 nodes.
        #expect(driver.heapSize < 1_250)
        registry.cancelAll()
        #expect(driver.heapSize == 0)
        #expect(await settled { !driver.hasRunner })
    }

    @Test func cancellingTheLastTimerEndsTheSleepingRunner() async {
        let manual = ManualClock()
        let registry = TempoRegistry(clock: OrdinaryClock(base: manual))
        let driver = registry.clock.driver!
        registry.withCurrent {
            debounce(.seconds(3_600), identifier: "far", by: .taskContext) {}
        }
        // The runner sleeps until the far deadline; cancelling the group ends it now.
        #expect(await finishes { await manual.waitForSleepers(1) })
        registry.cancelDebounce(identifier: "far")
        #expect(!driver.hasRunner)
        #expect(await settled { manual.sleeperCount == 0 })
    }

    @Test func aFarDeadlineIsSleptTowardsInBoundedSteps() async {
        let manual = ManualClock()
        let deadlines = Log<Duration>()
        let registry = TempoRegistry(clock: RecordingClock(base: manual, deadlines: deadlines))
        let ran = Log<Int>()
        registry.withCurrent {
            delay(.seconds(Int64.max), by: .taskContext) { ran.append(1) }
        }
        // No clock is handed a deadline more than `EngineClock.maximumStep` ahead, so none
        // overflows its instant arithmetic: the runner sleeps an hour at a time.
        #expect(await finishes { await manual.waitForSleepers(1) })
        await manual.advance(by: .seconds(3_600))
        #expect(await finishes { await manual.waitForSleepers(1) })
        #expect(deadlines.all == [.seconds(3_600), .seconds(7_200)])
        registry.cancelAll()
        #expect(await settled { manual.sleeperCount == 0 })
        #expect(ran.all == [])
    }
}

/// A manual clock seen as an ordinary clock (as `OrdinaryClock`) that records every deadline it
/// is asked to sleep until.
struct RecordingClock: Clock {
    let base: ManualClock
    let deadlines: Log<Duration>
    var now: ManualClock.Instant { base.now }
    var minimumResolution: Duration { base.minimumResolution }
    func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
        deadlines.append(deadline.offset)
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}
