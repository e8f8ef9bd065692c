import TempoTesting
import Testing

@testable import Tempo

@Suite struct DelayTests {
    @Test func delayRunsAfterTheDuration() async {
        let log = Log<Duration>()
        await onManualClock { clock, registry in
            delay(.milliseconds(500), by: .taskContext) { log.append(clock.now.offset) }
            delay(.milliseconds(200)) { @MainActor in log.append(clock.now.offset) }
            #expect(registry.liveKeyCount == 2)
            await clock.advance(by: .milliseconds(199))
            #expect(log.all == [])
            await clock.advance(by: .seconds(1))
            #expect(log.all == [.milliseconds(200), .milliseconds(500)])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func zeroOrNegativeDelayRunsAtOnce() async {
        let log = Log<Int>()
        await onManualClock { _, _ in
            delay(.zero, by: .taskContext) { log.append(1) }
            delay(.seconds(-3), by: .taskContext) { log.append(2) }
            #expect(log.all == [1, 2])
        }
    }

    @Test func asyncDelayCancelledBeforeItStartsNeverRuns() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            let task = delay(.seconds(1), by: .taskContext) { log.append(1) } as Task<Void, Never>
            task.cancel()
            await task.value
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(2))
            #expect(log.all == [])
        }
    }

    @Test func asyncDelaySendsErrorsToOnError() async {
        struct Failure: Error {}
        let errors = Log<String>()
        await onManualClock { clock, _ in
            let task = delay(
                .seconds(1), by: .taskContext, onError: { errors.append("\(type(of: $0))") }
            ) {
                throw Failure()
            }
            await clock.advance(by: .seconds(1))
            await task.value
            #expect(errors.all == ["Failure"])
        }
    }

    @Test func executeWaitsThenRunsAndCanBeCancelled() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let now = execute(on: .taskContext) { log.append("now") }
            await now.value
            #expect(log.all == ["now"])
            let later = execute(with: .seconds(1), on: .ownedActor) { log.append("later") }
            let main = execute(with: .seconds(1)) { @MainActor in log.append("main") }
            let cancelled = execute(with: .seconds(1), on: .taskContext) { log.append("never") }
            cancelled.cancel()
            await cancelled.value
            #expect(registry.liveKeyCount == 2)
            await clock.advance(by: .seconds(1))
            await later.value
            await main.value
            #expect(log.all.sorted() == ["later", "main", "now"])
        }
    }

    @Test func sleepWaitsOnTheCurrentClockAndReturnsEarlyWhenCancelled() async {
        await onManualClock { clock, _ in
            let done = Log<Duration>()
            let sleeper = Task {
                await sleep(.seconds(2))
                done.append(clock.now.offset)
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .seconds(1))
            #expect(done.all == [])
            await clock.advance(by: .seconds(1))
            await sleeper.value
            #expect(done.all == [.seconds(2)])

            let cancelled = Task { await sleep(.seconds(60)) }
            await clock.waitForSleepers(1)
            cancelled.cancel()
            await cancelled.value  // returns without the clock moving
            #expect(clock.now.offset == .seconds(2))
            await sleep(.zero)
            await sleep(.seconds(-1))
        }
    }

    // A delay's timer that wakes before the deadline (a host clock may wake a timer early) runs
    // nothing and asks to wake again at the deadline; the operation runs when it wakes there.
    @Test func aDelayTimerWakingEarlyRunsNothingUntilTheDeadline() {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let ran = Log<String>()
        registry.withCurrent {
            delay(.seconds(1), by: .taskContext) { ran.append("delayed") }
        }
        clock.set(.milliseconds(999))
        #expect(clock.fire(0) == .seconds(1))
        #expect(ran.all == [])
        #expect(registry.liveKeyCount == 1)
        clock.set(.seconds(1))
        #expect(clock.fire(0) == nil)
        #expect(ran.all == ["delayed"])
        #expect(registry.liveKeyCount == 0)
    }
}
