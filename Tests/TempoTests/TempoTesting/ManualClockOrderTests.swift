import TempoTesting
import Testing

@testable import Tempo

/// `ManualClock` ties and the present: timers on one deadline fire in the order they were
/// armed, and a sleep until now returns without an advance.
@Suite struct ManualClockOrderTests {
    @Test func timersOnOneDeadlineFireInTheOrderTheyWereArmed() async {
        let order = Log<Int>()
        await onManualClock { clock, _ in
            for index in 0..<8 {
                delay(.seconds(1), by: .taskContext) { order.append(index) }
            }
            await clock.advance(by: .seconds(2))
        }
        #expect(order.all == Array(0..<8))
    }

    @Test func groupsDueAtOneInstantRunInTheOrderTheyBecameLive() async {
        let order = Log<String>()
        await onManualClock { clock, _ in
            debounce(.seconds(1), identifier: "first", by: .taskContext) { order.append("d1") }
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .trailing) {
                order.append("t")
            }
            delay(.seconds(1), by: .taskContext) { order.append("delay") }
            debounce(.seconds(1), identifier: "second", by: .taskContext) { order.append("d2") }
            await clock.advance(by: .seconds(1))
        }
        #expect(order.all == ["d1", "t", "delay", "d2"])
    }

    @Test func sleepUntilNowOrEarlierReturnsWithoutAnAdvance() async {
        let clock = ManualClock(now: .init(offset: .seconds(3)))
        #expect(await finishes { try? await clock.sleep(until: clock.now) })
        #expect(await finishes { try? await clock.sleep(for: .zero) })
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .seconds(3))
    }
}
