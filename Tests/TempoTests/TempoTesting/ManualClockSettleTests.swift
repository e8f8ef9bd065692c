import Tempo
import TempoTesting
import Testing

/// Engine fix: `ManualClock.advance` used to move the clock before waiting for work that calls
/// had started at once on another actor, so that work saw (and stamped) a later time.
@Suite struct ManualClockSettleTests {
    @Test func workStartedByACallRunsAtTheTimeOfTheCall() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            throttle(.milliseconds(300), identifier: "t") { @MainActor in log.mark("main", registry)
            }
            throttle(.milliseconds(300), identifier: "o", by: .ownedActor) {
                log.mark("owned", registry)
            }
            debounce(.milliseconds(300), identifier: "d", by: .ownedActor, option: .leading) {
                log.mark("leading", registry)
            }
            await clock.advance(by: .seconds(1))
            #expect(log.all.sorted() == ["leading@0", "main@0", "owned@0"])
        }
    }
}
