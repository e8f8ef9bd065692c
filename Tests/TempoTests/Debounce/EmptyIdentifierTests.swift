import Tempo
import TempoTesting
import Testing

/// `identifier: ""` is a shared name like any other, as the docs say: it does not fall back to
/// grouping by call site.
@Suite struct EmptyIdentifierTests {
    @Test func anEmptyIdentifierIsOneGroupAcrossCallSites() async {
        await onManualClock { clock, registry in
            let runs = Log<String>()
            debounce(.seconds(1), identifier: "", by: .taskContext) { runs.append("first site") }
            debounce(.seconds(1), identifier: "", by: .taskContext) { runs.append("second site") }
            // Left out: its own call-site group, not the "" group.
            debounce(.seconds(1), by: .taskContext) { runs.append("no identifier") }
            #expect(registry.pendingDebounce(identifier: "") != nil)
            #expect(registry.liveKeyCount == 2)
            await clock.advance(by: .seconds(1))
            #expect(runs.all.sorted() == ["no identifier", "second site"])
        }
    }

    @Test func anEmptyIdentifierIsControlledByName() async {
        await onManualClock { clock, registry in
            let runs = Log<String>()
            throttle(.seconds(1), identifier: "", by: .taskContext, option: .trailing) {
                runs.append("throttled")
            }
            #expect(registry.pendingThrottle(identifier: "") != nil)
            cancelThrottle(identifier: "")
            await clock.advance(by: .seconds(1))
            #expect(runs.all.isEmpty)
            #expect(registry.liveKeyCount == 0)
        }
    }
}
