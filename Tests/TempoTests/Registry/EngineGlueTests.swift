import TempoTesting
import Testing

@testable import Tempo

/// The registry's glue around the state machines: what it launches, in which order, which
/// group and timer it keeps when a task withdraws its call, and which deadline it re-arms to.
@Suite struct EngineGlueTests {
    // A withdrawn ticket that is not the throttle's trailing call leaves that call alone.
    @Test func cancellingTheLeadingTaskKeepsTheTrailingCall() async {
        let ran = Log<String>()
        await onManualClock { clock, registry in
            let throttler = Throttler(.seconds(1), by: .taskContext, option: .ensureLast)
            let leading: Task<Void, Never> = throttler { ran.append("leading") }
            let trailing: Task<Void, Never> = throttler { ran.append("trailing") }
            // The leading call was granted; whether or not its task started, it is not the
            // trailing call, so withdrawing it must not touch that one.
            leading.cancel()
            await leading.value
            #expect(throttler.pending?.runsAt == .seconds(1))
            await clock.advance(by: .seconds(1))
            #expect(await finishes { await trailing.value })
            #expect(ran.all.last == "trailing")
            await clock.advance(by: .seconds(1))
            #expect(registry.liveKeyCount == 0)
        }
    }

    // A withdrawn ticket that is not the debounce group's pending call leaves that call alone.
    @Test func cancellingTheLeadingTaskKeepsThePendingRunFirstCall() async {
        let ran = Log<String>()
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.seconds(1), by: .taskContext, option: .runFirst)
            let leading: Task<Void, Never> = debouncer { ran.append("leading") }
            let pending: Task<Void, Never> = debouncer { ran.append("pending") }
            leading.cancel()
            await leading.value
            #expect(debouncer.pending?.runsAt == .seconds(1))
            await clock.advance(by: .seconds(1))
            #expect(await finishes { await pending.value })
            #expect(ran.all.last == "pending")
            await clock.advance(by: .seconds(1))
            #expect(registry.liveKeyCount == 0)
        }
    }

    // The task of a replaced (debounce) or dropped (throttle) call finishes at once.
    @Test func theTaskOfAReplacedOrDroppedCallFinishesAtOnce() async {
        let ran = Log<String>()
        await onManualClock { clock, _ in
            let debouncer = Debouncer(.seconds(1), by: .taskContext)
            let replaced: Task<Void, Never> = debouncer { ran.append("replaced") }
            let latest: Task<Void, Never> = debouncer { ran.append("latest") }
            let replacedEnds = await finishes { await replaced.value }
            #expect(replacedEnds)
            let throttler = Throttler(.seconds(1), by: .taskContext)
            let first: Task<Void, Never> = throttler { ran.append("first") }
            let dropped: Task<Void, Never> = throttler { ran.append("dropped") }
            let droppedEnds = await finishes { await dropped.value }
            #expect(droppedEnds)
            await clock.advance(by: .seconds(1))
            let othersEnd = await finishes {
                await latest.value
                await first.value
            }
            #expect(othersEnd)
        }
        #expect(ran.all.sorted() == ["first", "latest"])
    }

    // A late timer: the call that finds the deadline passed launches the catch-up run first,
    // then its own leading run.
    @Test func aLateRunFirstCatchUpRunsBeforeTheNewLeadingRun() {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let ran = Log<String>()
        func call(_ label: String) {
            registry.withCurrent {
                debounce(.seconds(1), identifier: "d", by: .taskContext, option: .runFirst) {
                    ran.append(label)
                }
            }
        }
        call("a")  // 0: runs at once, quiet until 1 s
        clock.set(.milliseconds(500))
        call("b")  // pending, due at 1.5 s
        clock.set(.seconds(3))  // the timer is late by more than the duration
        call("c")  // "b" is due (its quiet window ends at 2.5 s), then "c" runs at once
        #expect(ran.all == ["a", "b", "c"])
    }

    // A late timer, with nobody observing and no drain: the call that finds the group's call
    // overdue runs it as a catch-up even when the call itself is only kept for later (the
    // calls' usual path, which skips the reports, must not skip the catch-up).
    @Test func aLateCallRunsAsACatchUpWhenTheCallThatFindsItIsKeptForLater() {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let ran = Log<String>()
        registry.withCurrent {
            debounce(.seconds(1), identifier: "d", by: .taskContext) { ran.append("d1") }
        }
        clock.set(.seconds(3))  // "d1" was due at 1 s; its timer is late
        registry.withCurrent {
            debounce(.seconds(1), identifier: "d", by: .taskContext) { ran.append("d2") }
        }
        #expect(ran.all == ["d1"])  // "d2" is pending, due at 4 s
        func call(_ label: String) {
            registry.withCurrent {
                throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {
                    ran.append(label)
                }
            }
        }
        call("t1")  // 3 s: runs, opens [3 s, 4 s)
        clock.set(.milliseconds(3_500))
        call("t2")  // the trailing call, due at 4 s
        clock.set(.milliseconds(4_200))  // its timer is late: "t2" ran as of 4 s, window [4, 5)
        call("t3")  // "t2" runs as a catch-up; "t3" is the new trailing call, due at 5 s
        #expect(ran.all == ["d1", "t1", "t2"])
        #expect(registry.snapshot().entries.count == 2)
    }

    // A duration of zero or less runs the call at once, outside its group: the call the group
    // holds is left as it is, and runs at its own instant.
    @Test func aCallOfZeroDurationLeavesItsGroupsPendingCallAsItIs() {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let ran = Log<String>()
        registry.withCurrent {
            debounce(.seconds(1), identifier: "d", by: .taskContext) { ran.append("d1") }
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {
                ran.append("t1")
            }
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {
                ran.append("t2")
            }
        }
        clock.set(.milliseconds(500))
        registry.withCurrent {
            debounce(.zero, identifier: "d", by: .taskContext) { ran.append("d0") }
            throttle(.seconds(-1), identifier: "t", by: .taskContext, option: .ensureLast) {
                ran.append("t0")
            }
            #expect(pendingDebounce(identifier: "d")?.runsAt == .seconds(1))
            #expect(pendingThrottle(identifier: "t")?.runsAt == .seconds(1))
        }
        #expect(ran.all == ["t1", "d0", "t0"])
    }

    @Test func aLateEnsureLastTrailingCallRunsBeforeTheNewLeadingRun() {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let ran = Log<String>()
        func call(_ label: String) {
            registry.withCurrent {
                throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {
                    ran.append(label)
                }
            }
        }
        call("a")  // 0: runs, opens [0, 1 s)
        clock.set(.milliseconds(500))
        call("b")  // the trailing call
        clock.set(.seconds(3))  // the timer is late: "b" ran as of 1 s, its window closed at 2 s
        call("c")
        #expect(ran.all == ["a", "b", "c"])
    }

    // Withdrawing the pending call of a `.runFirst` group inside its quiet window keeps the
    // window: the next call is debounced, not a second leading run.
    @Test func withdrawingThePendingRunFirstCallKeepsTheQuietWindow() async {
        let ran = Log<String>()
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.seconds(1), by: .taskContext, option: .runFirst)
            debouncer { ran.append("a") }  // runs at once, quiet until 1 s
            await clock.advance(by: .milliseconds(200))
            let withdrawn: Task<Void, Never> = debouncer { ran.append("b") }
            withdrawn.cancel()
            await withdrawn.value
            #expect(debouncer.pending == nil)
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .milliseconds(200))
            debouncer { ran.append("c") }
            #expect(ran.all == ["a"])
            #expect(debouncer.pending?.runsAt == .milliseconds(1_400))
            await clock.advance(by: .seconds(1))
            #expect(ran.all == ["a", "c"])
        }
    }

    // One key, several durations: the deadline moves later, the timer fires and re-arms to it,
    // then a shorter call moves the deadline earlier than the re-armed timer.
    @Test func aDeadlineMovedEarlierAfterTheTimerReArmedIsKept() async {
        let ranAt = Log<Duration>()
        await onManualClock { clock, registry in
            func call(_ duration: Duration) {
                debounce(duration, identifier: "g", by: .taskContext) {
                    ranAt.append(clock.now.offset)
                }
            }
            call(.seconds(5))  // 0: due at 5 s
            await clock.advance(by: .seconds(4))
            call(.seconds(5))  // 4 s: due at 9 s; the timer still wakes at 5 s
            await clock.advance(by: .seconds(2))  // it woke at 5 s and re-armed to 9 s
            call(.seconds(1))  // 6 s: due at 7 s
            await clock.advance(by: .seconds(1))
            #expect(ranAt.all == [.seconds(7)])
            await clock.advance(by: .seconds(5))
            #expect(ranAt.all == [.seconds(7)])
            #expect(registry.liveKeyCount == 0)
        }
    }

    // A withdrawal that removes the group cancels its timer too.
    @Test func aCancelledDebounceTaskLeavesNoTimer() async {
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.seconds(1), by: .taskContext)
            let task: Task<Void, Never> = debouncer {}
            #expect(clock.sleeperCount == 1)
            task.cancel()
            await task.value
            #expect(registry.liveKeyCount == 0)
            #expect(clock.sleeperCount == 0)
        }
    }

    @Test func aCancelledDebounceTaskLeavesNoTimerOnTheDriver() async {
        let manual = ManualClock()
        let registry = TempoRegistry(clock: OrdinaryClock(base: manual))
        let driver = registry.clock.driver!
        let debouncer = Debouncer(.seconds(1), by: .taskContext, registry: registry)
        let task: Task<Void, Never> = debouncer {}
        #expect(driver.count == 1)
        task.cancel()
        await task.value
        #expect(registry.liveKeyCount == 0)
        #expect(driver.count == 0)
        #expect(await settled { !driver.hasRunner })
    }

    @Test func aCancelledDelayOrExecuteTaskLeavesNoTimer() async {
        let ran = Log<String>()
        await onManualClock { clock, registry in
            let delayed: Task<Void, Never> = delay(.seconds(1), by: .taskContext) {
                ran.append("delay")
            }
            let executed = execute(with: .seconds(1), on: .taskContext) { ran.append("execute") }
            #expect(clock.sleeperCount == 2)
            delayed.cancel()
            executed.cancel()
            await delayed.value
            await executed.value
            #expect(registry.liveKeyCount == 0)
            #expect(clock.sleeperCount == 0)
            await clock.advance(by: .seconds(1))
        }
        #expect(ran.all == [])
    }

    // A task of a call of zero duration runs at once, but not when it was cancelled before it
    // started. A task may start before `cancel()` reaches it (another thread picks it up at
    // once), and then it rightly runs; most are cancelled first. Without the check, all run.
    @Test func zeroDurationTasksCancelledBeforeTheyStartNeverRun() async {
        let ran = Log<String>()
        let rounds = 100
        await onManualClock { _, _ in
            let debouncer = Debouncer(.zero, by: .taskContext)
            let throttler = Throttler(.zero, by: .taskContext)
            var tasks: [Task<Void, Never>] = []
            for _ in 0..<rounds {
                let made: [Task<Void, Never>] = [
                    debouncer { ran.append("debounce") },
                    throttler { ran.append("throttle") },
                    delay(.zero, by: .taskContext) { ran.append("delay") },
                    execute(on: .taskContext) { ran.append("execute") },
                ]
                for task in made { task.cancel() }
                tasks += made
            }
            for task in tasks { await task.value }
        }
        #expect(ran.count < 2 * rounds)
    }
}
