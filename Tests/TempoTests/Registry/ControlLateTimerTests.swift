import Testing

@testable import Tempo

/// Control calls when a timer is late (a busy real clock): the outcome depends on the instants
/// of the calls, never on how late the timer is. Driven by `ScriptedClock`, whose timers only
/// fire when the test says so.
@Suite struct ControlLateTimerTests {
    @Test func cancelBeforeTheDeadlineDropsTheCall() {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let ran = Log<String>()
        registry.withCurrent {
            debounce(.seconds(1), identifier: "d", by: .taskContext) { ran.append("d") }
        }
        clock.set(.milliseconds(999))
        registry.cancelDebounce(identifier: "d")
        clock.set(.seconds(2))
        _ = clock.fire(0)
        #expect(ran.all == [])
        #expect(registry.liveKeyCount == 0)
    }

    @Test func cancelAfterTheDeadlineOfALateTimerStillRunsTheDueCall() {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let ran = Log<String>()
        registry.withCurrent {
            debounce(.seconds(1), identifier: "d", by: .taskContext) { ran.append("debounced") }
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .trailing) {
                ran.append("trailing")
            }
            delay(.seconds(1), by: .taskContext) { ran.append("delayed") }
        }
        // The deadlines have passed; the timers have not fired yet.
        clock.set(.seconds(1))
        registry.cancelDebounce(identifier: "d")
        registry.cancelThrottle(identifier: "t")
        #expect(ran.all == ["debounced", "trailing"])
        registry.cancelAll()
        #expect(ran.all == ["debounced", "trailing", "delayed"])
        #expect(registry.liveKeyCount == 0)
        // The late timers find nothing to do.
        for index in clock.timers.indices { _ = clock.fire(index) }
        #expect(ran.all.count == 3)
    }

    @Test func flushOfALateTrailingCallKeepsTheWindowGrid() {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let ran = Log<String>()
        func call(_ label: String) {
            registry.withCurrent {
                throttle(.seconds(1), identifier: "t", by: .taskContext, option: .trailing) {
                    ran.append(label)
                }
            }
        }
        call("a")  // 0: opens [0, 1)
        clock.set(.milliseconds(1_500))  // the window closed at 1 s; its timer is late
        registry.flushThrottle(identifier: "t")
        #expect(ran.all == ["a"])
        // "a" ran as of 1 s, opening [1 s, 2 s): a call at 1.5 s is inside that window.
        call("b")
        #expect(registry.pendingThrottle(identifier: "t")?.runsAt == .seconds(2))
    }
}
