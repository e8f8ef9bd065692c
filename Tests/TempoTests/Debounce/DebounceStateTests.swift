import Testing

@testable import Tempo

/// The debounce state machine (`DebounceState`), driven directly: no clock, no tasks.
@Suite struct DebounceStateTests {
    @Test func debounceCallAfterTheDeadlineCatchesUpFirst() {
        var state = DebounceState<String>()
        let first = state.call(at: .zero, duration: .seconds(1), option: .default, payload: "a")
        #expect(first.wake == .seconds(1))
        // The timer has not fired yet, but the call comes after the deadline: "a" is due.
        let second = state.call(
            at: .seconds(1), duration: .seconds(1), option: .default, payload: "b")
        #expect(second.catchUp == "a")
        #expect(second.dropped == nil)
        #expect(second.wake == .seconds(2))
        // An early wake re-arms; the due wake runs and leaves the group idle.
        #expect(state.fire(at: .milliseconds(1_500)).next == .seconds(2))
        let fire = state.fire(at: .seconds(2))
        #expect(fire.run == "b")
        #expect(fire.next == nil)
        #expect(state.isIdle(at: .seconds(2)))
    }

    @Test func debounceRunFirstKeepsTheGroupQuietForADurationAfterARun() {
        var state = DebounceState<Int>()
        let lead = state.call(at: .zero, duration: .seconds(1), option: .runFirst, payload: 1)
        #expect(lead.runNow == 1)
        #expect(lead.wake == .seconds(1))
        #expect(state.fire(at: .seconds(1)).next == nil)
        let again = state.call(
            at: .seconds(1), duration: .seconds(1), option: .runFirst, payload: 2)
        #expect(again.runNow == 2)
    }

    @Test func debounceHugeDurationsSaturate() {
        var state = DebounceState<Int>()
        let result = state.call(
            at: .seconds(10), duration: Duration(attoseconds: .max), option: .default, payload: 1)
        #expect(result.wake == Duration(attoseconds: .max))
        #expect(state.fire(at: .seconds(Int64.max)).next == Duration(attoseconds: .max))
    }

    // Ties with no timer fired yet: a call at the instant something ends applies that end first.

    @Test func debounceCallAtTheQuietWindowsEndBeforeTheTimerRunsAtOnce() {
        for option in [DebounceOptions.runFirst, .leading] {
            var state = DebounceState<String>()
            _ = state.call(at: .zero, duration: .seconds(1), option: option, payload: "a")
            let tie = state.call(
                at: .seconds(1), duration: .seconds(1), option: option, payload: "b")
            #expect(tie.runNow == "b")
            #expect(tie.wake == .seconds(2))
        }
    }
}
