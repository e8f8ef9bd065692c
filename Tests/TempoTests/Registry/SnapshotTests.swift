import TempoTesting
import Testing

@testable import Tempo

@Suite struct SnapshotTests {
    @Test func snapshotListsLiveWorkPerKeyAndIsEmptyWhenIdle() async {
        await onManualClock { clock, registry in
            #expect(registry.snapshot().isEmpty)
            debounce(.seconds(2), identifier: "search", by: .taskContext) {}
            throttle(.seconds(1), identifier: "scroll", by: .taskContext, option: .ensureLast) {}
            throttle(.seconds(1), identifier: "scroll", by: .taskContext, option: .ensureLast) {}
            delay(.seconds(3), by: .taskContext) {}
            debounce(.seconds(1), by: .taskContext) {}
            let line = #line - 1
            await clock.advance(by: .milliseconds(500))

            let snapshot = registry.snapshot()
            #expect(snapshot.now == .milliseconds(500))
            #expect(snapshot.entries.count == 4)
            #expect(
                snapshot.entries.contains(
                    .init(
                        kind: .debounce, key: "search",
                        state: .debounce(runsAt: .seconds(2), quietUntil: nil))))
            #expect(
                snapshot.entries.contains(
                    .init(
                        kind: .throttle, key: "scroll",
                        state: .throttle(windowClosesAt: .seconds(1), trailingPending: true))))
            let site = snapshot.entries.first { $0.kind == .debounce && $0.key != "search" }
            #expect(site?.key.hasPrefix("TempoTests/SnapshotTests.swift:\(line):") == true)
            let pendingDelay = snapshot.entries.first { $0.kind == .delay }
            #expect(pendingDelay?.state == .delay(runsAt: .seconds(3)))
            #expect(pendingDelay?.key.hasPrefix("TempoTests/SnapshotTests.swift:") == true)
            #expect(snapshot.description.contains("search  runs at 2.000 s (in 1.500 s)"))

            await clock.runUntilIdle()
            #expect(registry.snapshot().isEmpty)
            #expect(registry.snapshot().description == "(nothing live)")
        }
    }

    @Test func durationsAreFormattedWithoutFoundation() {
        #expect(formatDuration(.microseconds(123)) == "0.123 ms")
        #expect(formatDuration(.nanoseconds(999)) == "0.001 ms")
        #expect(formatDuration(.microseconds(124_300)) == "124.3 ms")
        #expect(formatDuration(.milliseconds(2_100)) == "2.100 s")
        #expect(formatDuration(.milliseconds(-1_500)) == "-1.500 s")
        #expect(formatDuration(.zero) == "0.000 ms")
        #expect(formatDuration(Duration(attoseconds: .max)).hasSuffix(" s"))
    }
}
