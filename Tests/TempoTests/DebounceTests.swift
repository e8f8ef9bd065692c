import Tempo
import TempoTesting
import Testing

@Suite struct DebounceTests {
    @Test func burstRunsOnlyTheLastCallAfterTheQuietWindow() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            for i in 1...5 {
                debounce(.milliseconds(300), identifier: "q", by: .taskContext) { log.append(i) }
                await clock.advance(by: .milliseconds(100))
            }
            #expect(log.all == [])
            await clock.advance(by: .milliseconds(199))
            #expect(log.all == [])
            await clock.advance(by: .milliseconds(1))
            #expect(log.all == [5])
            #expect(registry.liveKeyCount == 0)
        }
    }
}

@Suite struct MainActorSmoke {
    @Test func mainActorOperationRunsWithinAdvance() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            debounce(.milliseconds(300)) { log.append(1) }
            debounce(.milliseconds(300), identifier: "x") { @MainActor in log.append(2) }
            let t =
                debounce(.milliseconds(300), identifier: "y") { log.append(3) } as Task<Void, Never>
            await clock.advance(by: .milliseconds(300))
            #expect(log.all.sorted() == [1, 2, 3])
            _ = t
        }
    }
}
