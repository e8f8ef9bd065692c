import Testing

@testable import Tempo

/// The throttle state machine (`ThrottleState`), driven directly: no clock, no tasks.
@Suite struct ThrottleStateTests {
    @Test func throttleLateCallCatchesUpTheTrailingRunThenRunsItself() {
        var state = ThrottleState<Int>()
        #expect(
            state.call(at: .zero, duration: .seconds(1), option: .ensureLast, payload: 1).runNow
                == 1)
        let dropped = state.call(
            at: .milliseconds(500), duration: .seconds(1), option: .ensureLast, payload: 2)
        #expect(dropped.runNow == nil)
        #expect(dropped.dropped == nil)
        // Three seconds later, before any timer: 2 ran at 1 s (window to 2 s), so 3 runs now.
        let late = state.call(
            at: .seconds(3), duration: .seconds(1), option: .ensureLast, payload: 3)
        #expect(late.catchUp == 2)
        #expect(late.runNow == 3)
        #expect(late.wake == .seconds(4))
    }

    @Test func throttleTrailingRunOpensTheNextWindowAtTheClosingInstant() {
        var state = ThrottleState<Int>()
        _ = state.call(at: .zero, duration: .seconds(1), option: .ensureLast, payload: 1)
        let replaced = state.call(
            at: .milliseconds(100), duration: .seconds(1), option: .ensureLast, payload: 2)
        #expect(replaced.dropped == nil)
        let newer = state.call(
            at: .milliseconds(200), duration: .seconds(1), option: .ensureLast, payload: 3)
        #expect(newer.dropped == 2)
        let fire = state.fire(at: .seconds(1))
        #expect(fire.run == 3)
        #expect(fire.next == .seconds(2))
        #expect(state.fire(at: .seconds(2)).next == nil)
    }

    // Ties with no timer fired yet: a call at the instant something ends applies that end first.

    @Test func throttleCallAtTheClosingInstantBeforeTheTimerFindsTheWindowClosed() {
        let second = Duration.seconds(1)
        for option in [ThrottleOptions.ensureLast, .trailing] {
            var state = ThrottleState<String>()
            _ = state.call(at: .zero, duration: second, option: option, payload: "a")
            _ = state.call(at: .milliseconds(10), duration: second, option: option, payload: "b")
            // "b" runs at 1 s and opens [1 s, 2 s), where "c" is kept.
            let tie = state.call(at: second, duration: second, option: option, payload: "c")
            #expect(tie.catchUp == "b")
            #expect(tie.runNow == nil)
            #expect(tie.wake == .seconds(2))
            #expect(state.pendingDeadline == .seconds(2))
        }
        var state = ThrottleState<String>()
        _ = state.call(at: .zero, duration: second, option: .default, payload: "a")
        let tie = state.call(at: second, duration: second, option: .default, payload: "b")
        #expect(tie.runNow == "b")
        #expect(tie.wake == .seconds(2))
    }
}
