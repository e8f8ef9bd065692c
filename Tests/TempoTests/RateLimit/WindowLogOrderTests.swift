import Testing

@testable import Tempo

/// Callers read the clock before they take the key's lock, so two starts can be recorded in the
/// opposite order to their clock reads. The log keeps its instants in order by recording a start
/// whose read is older than the newest start at that newest instant; a log that appended it
/// after the newer start instead would expire it first, and admit N + 1 starts in a window.
@Suite struct WindowLogOrderTests {
    let span = Duration.seconds(10)

    @Test func aStartReadBeforeTheNewestIsRecordedWithTheNewest() {
        var log = WindowLog()
        log.record(1, at: .seconds(10), permits: 2)
        log.record(1, at: .seconds(5), permits: 2)  // its clock read came first
        #expect(log.held.map(\.at) == [.seconds(10)])
        #expect(log.held.map(\.count) == [2])
        // Both count until 20 s: a call of weight 2 fits only then.
        #expect(log.admission(weight: 2, permits: 2, span: span, at: .seconds(15)) == .seconds(20))
        #expect(log.inWindow(at: .seconds(15), span: span) == 2)
        log.expire(at: .seconds(15), span: span)
        #expect(log.total == 2)
    }

    /// 2 starts in any 10 s: starts recorded at 10 s, then at 5 s (read before, recorded after).
    /// A weight-2 call at 15 s would make 3 starts in (5 s, 15 s], since the start at 10 s is
    /// still in that window however the late one is counted.
    @Test func outOfOrderStartsLetNoWeightedCallInEarly() {
        var state = WindowLimitState<Int>(permits: 2, span: span)
        let one = WindowLimitState<Int>.Ask(weight: 1, permits: 2, span: span)
        let two = WindowLimitState<Int>.Ask(weight: 2, permits: 2, span: span)
        var admitted: [(at: Duration, weight: Int)] = []
        for (at, ask) in [(Duration.seconds(10), one), (.seconds(5), one), (.seconds(15), two)] {
            if state.call(at: at, ask: ask) == .admitted { admitted.append((at, ask.weight)) }
        }
        // Each start counted at its own clock read, the earliest it can have been made.
        for end in admitted.map(\.at) {
            let inWindow = admitted.filter { $0.at > end - span && $0.at <= end }
            #expect(inWindow.map(\.weight).reduce(0, +) <= 2, "window ending at \(end)")
        }
        #expect(admitted.count == 2)
        #expect(state.call(at: .seconds(20), ask: two) == .admitted)
    }
}
