import TempoTesting
import Testing

@testable import Tempo

/// One test (or more) per guarantee in Guarantees.md, each able to fail when it breaks.
@Suite struct EngineGuaranteeTests {
    // §3.2 Call order is kept.
    @Test func everyBurstFromAPlainLoopEndsWithTheLoopsLastCall() async {
        let ran = Log<(burst: Int, call: Int)>()
        await onManualClock { clock, registry in
            for burst in 0..<1_000 {
                for call in 0..<8 {
                    debounce(.milliseconds(10), identifier: "burst \(burst)", by: .taskContext) {
                        ran.append((burst, call))
                    }
                }
            }
            await clock.advance(by: .milliseconds(10))
            #expect(registry.liveKeyCount == 0)
        }
        #expect(ran.count == 1_000)
        #expect(ran.all.filter { $0.call != 7 }.isEmpty)
        #expect(Set(ran.all.map(\.burst)).count == 1_000)
    }

    @Test func orderHoldsThroughTheTaskReturningOverloadToo() async {
        let ran = Log<Int>()
        await onManualClock { clock, _ in
            var tasks: [Task<Void, Never>] = []
            for burst in 0..<200 {
                for call in 0..<8 {
                    tasks.append(
                        debounce(.milliseconds(10), identifier: "b\(burst)", by: .taskContext) {
                            ran.append(call)
                        })
                }
            }
            await clock.advance(by: .milliseconds(10))
            for task in tasks { await task.value }
        }
        #expect(ran.all == Array(repeating: 7, count: 200))
    }

    @Test func concurrentCallersOnDistinctKeysEachGetTheirLastCall() async {
        let ran = Log<Int>()
        await onManualClock { clock, registry in
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for key in 0..<250 {
                            for call in 0..<4 {
                                debounce(
                                    .seconds(1), identifier: "w\(worker)k\(key)", by: .taskContext
                                ) { ran.append(call) }
                            }
                        }
                    }
                }
            }
            #expect(registry.liveKeyCount == 2_000)
            await clock.advance(by: .seconds(1))
            #expect(registry.liveKeyCount == 0)
        }
        #expect(ran.all == Array(repeating: 3, count: 2_000))
    }

    // §3.3 A call's time is when it was made.
    @Test func eachCallIsStampedWithTheClockReadingAtTheCall() async {
        let ranAt = Log<Duration>()
        await onManualClock { clock, _ in
            for step in 0..<5 {
                throttle(.seconds(1), identifier: "stamp", by: .taskContext) {
                    ranAt.append(clock.now.offset)
                }
                await clock.advance(by: .milliseconds(step == 2 ? 1_000 : 250))
            }
        }
        // Calls at 0, 250, 500, 1500, 1750 ms: the window from 0 covers the next two.
        #expect(ranAt.all == [.zero, .milliseconds(1_500)])
    }

    // §3.4 Stale work never wins.
    @Test func aTimerWakingForAnOlderGenerationDoesNothing() {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let ran = Log<String>()
        registry.withCurrent {
            debounce(.seconds(5), identifier: "g", by: .taskContext) { ran.append("A") }
            // A shorter call moves the deadline earlier: the timer is re-armed.
            debounce(.seconds(1), identifier: "g", by: .taskContext) { ran.append("B") }
        }
        #expect(clock.timers.count == 2)
        #expect(clock.timers[0].cancelled)
        clock.set(.seconds(1))
        // The stale timer wakes anyway (it lost the race with its cancellation).
        #expect(clock.fire(0) == nil)
        #expect(ran.all == [])
        #expect(registry.liveKeyCount == 1)
        // The live timer runs B.
        #expect(clock.fire(1) == nil)
        #expect(ran.all == ["B"])
        // A new call arms a new generation; the first timer waking again still does nothing.
        registry.withCurrent {
            debounce(.seconds(1), identifier: "g", by: .taskContext) { ran.append("C") }
        }
        clock.set(.seconds(2))
        #expect(clock.fire(0) == nil)
        #expect(clock.fire(1) == nil)
        #expect(ran.all == ["B"])
        #expect(clock.fire(2) == nil)
        #expect(ran.all == ["B", "C"])
        #expect(registry.liveKeyCount == 0)
    }

    // §3.5 Memory is bounded by live work.
    @Test func oneHundredThousandIdentifiersLeaveNothingBehind() async {
        let count = Log<Int>()
        await onManualClock { clock, registry in
            for i in 0..<100_000 {
                let id = "user-\(i)"
                debounce(.milliseconds(50), identifier: id, by: .taskContext) { count.append(0) }
                throttle(.milliseconds(50), identifier: id, by: .taskContext) {}
                if i % 10 == 0 { delay(.milliseconds(50), by: .taskContext) {} }
            }
            #expect(registry.liveKeyCount == 210_000)
            #expect(registry.tableCapacity >= 210_000)
            await clock.advance(by: .milliseconds(50))
            #expect(registry.liveKeyCount == 0)
            #expect(registry.tableCapacity < 1_000)  // the storage went back too
            #expect(registry.snapshot().isEmpty)
            #expect(clock.sleeperCount == 0)
        }
        #expect(count.count == 100_000)
    }

    // §3.6 No task per call.
    @Test func droppedAndReplacedCallsArmNoTimer() async {
        await onManualClock { clock, registry in
            let before = registry.timersArmed
            for _ in 0..<10_000 {
                debounce(.seconds(1), identifier: "hot", by: .taskContext) {}
            }
            #expect(registry.timersArmed - before == 1)
            for _ in 0..<10_000 {
                throttle(.seconds(1), identifier: "hot", by: .taskContext) {}
            }
            #expect(registry.timersArmed - before == 2)
            for _ in 0..<10_000 {
                throttle(.seconds(1), identifier: "last", by: .taskContext, option: .ensureLast) {}
            }
            #expect(registry.timersArmed - before == 3)
            #expect(clock.sleeperCount == 3)
            await clock.runUntilIdle()
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aTimerIsReArmedInPlaceWhenTheDeadlineMovesLater() async {
        let ran = Log<Duration>()
        await onManualClock { clock, registry in
            let before = registry.timersArmed
            for _ in 0..<20 {
                debounce(.seconds(1), identifier: "re", by: .taskContext) {
                    ran.append(clock.now.offset)
                }
                await clock.advance(by: .milliseconds(600))
            }
            await clock.runUntilIdle()
            #expect(registry.timersArmed - before == 1)
        }
        #expect(ran.all == [.milliseconds(12_400)])
    }

    // §3.7 The registry never waits on user code: see DebounceTests.anOperationMayCallBackIntoTheEngine
    // and RealClockTests.aSlowOperationDoesNotDelayOtherKeys.

    // §3.8 Any Duration is safe.
    @Test func hugeDurationsNeitherTrapNorHangAndStayCancellable() async {
        let ran = Log<String>()
        await onManualClock { clock, registry in
            let forever = Duration.seconds(Int64.max)
            debounce(forever, identifier: "d", by: .taskContext) { ran.append("debounce") }
            debounce(forever, identifier: "r", by: .taskContext, option: .runFirst) {
                ran.append("runFirst")
            }
            throttle(forever, identifier: "t", by: .taskContext) { ran.append("throttle") }
            throttle(forever, identifier: "t", by: .taskContext, option: .ensureLast) {
                ran.append("trailing")
            }
            delay(forever, by: .taskContext) { ran.append("delay") }
            delay(Duration(attoseconds: .max), by: .taskContext) { ran.append("delay max") }
            let executed = execute(with: forever, on: .taskContext) { ran.append("execute") }
            let slept = Task { await sleep(forever) }
            await clock.waitForSleepers(7)
            #expect(ran.all == ["runFirst", "throttle"])
            await clock.advance(by: .seconds(86_400 * 365 * 1_000))
            #expect(ran.all == ["runFirst", "throttle"])
            #expect(registry.liveKeyCount == 6)
            registry.cancelAll()
            executed.cancel()
            slept.cancel()
            await executed.value
            await slept.value
            #expect(registry.liveKeyCount == 0)
            await clock.advance(to: ManualClock.Instant(offset: Duration(attoseconds: .max)))
            #expect(ran.all == ["runFirst", "throttle"])
        }
    }

    // §3.9 Cancellation is final.
    @Test func afterCancelAllReturnsNothingCancelledEverStarts() async {
        let ran = Log<String>()
        await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "a", by: .taskContext) { ran.append("debounce") }
            throttle(.seconds(1), identifier: "b", by: .taskContext, option: .ensureLast) {
                ran.append("throttle first")
            }
            throttle(.seconds(1), identifier: "b", by: .taskContext, option: .ensureLast) {
                ran.append("throttle trailing")
            }
            delay(.seconds(1), by: .taskContext) { ran.append("delay") }
            let task =
                debounce(.seconds(1), identifier: "c", by: .taskContext) {
                    ran.append("task")
                } as Task<Void, Never>
            registry.cancelAll()
            #expect(registry.liveKeyCount == 0)
            await task.value
            await clock.advance(by: .seconds(5))
            #expect(ran.all == ["throttle first"])
        }
    }

    @Test func aTicketCancelledAfterTheEngineGrantedItStillNeverStarts() {
        let ticket = Ticket()
        let withdrawn = Log<Int>()
        ticket.setWithdrawal { _ in withdrawn.append(1) }
        ticket.grant(nil)
        ticket.cancel()
        #expect(ticket.start() == nil)
        #expect(withdrawn.all == [1])

        let started = Ticket()
        started.grant(nil)
        #expect(started.start() != nil)
        started.cancel()  // too late: it started, and cancelling changes nothing
        #expect(started.start() == nil)
    }
}

@Suite struct EngineClockTests {
    @Test func aRegistryMadeAfterTheManualClockMovedUsesTheClocksOwnTime() async {
        let clock = ManualClock()
        await clock.advance(by: .seconds(10))
        let registry = TempoRegistry(clock: clock)
        let ranAt = Log<Duration>()
        await registry.withCurrent {
            debounce(.seconds(1), identifier: "late", by: .taskContext) {
                ranAt.append(clock.now.offset)
            }
            #expect(
                registry.snapshot().entries.first?.state
                    == .debounce(runsAt: .seconds(11), quietUntil: nil))
            await clock.advance(by: .milliseconds(999))
            #expect(ranAt.all == [])
            await clock.advance(by: .milliseconds(1))
        }
        #expect(ranAt.all == [.seconds(11)])
    }

    @Test func ticketsAreReleasedOnceTheirCallIsDecided() async {
        weak var weakTicket: Ticket?
        await onManualClock { clock, _ in
            let ticket = Ticket()
            weakTicket = ticket
            let task = runWhenGranted(ticket, by: .taskContext, onError: nil) {}
            TempoRegistry.current.debounce(
                .name("t"), duration: .seconds(1), option: .default, operation: .ticket(ticket))
            task.cancel()
            await task.value
            await clock.advance(by: .seconds(1))
        }
        #expect(weakTicket == nil)
    }
}
