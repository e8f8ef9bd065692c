import Tempo
import TempoTesting
import Testing

@Suite struct ThrottleModesTests {
    private func call(
        _ label: String, _ option: ThrottleOptions, _ log: Log<String>, _ registry: TempoRegistry
    ) {
        throttle(.milliseconds(300), identifier: "t", by: .taskContext, option: option) {
            log.mark(label, registry)
        }
    }

    // MARK: .trailing

    @Test func trailingFirstCallOpensTheWindowAndTheLatestRunsWhenItCloses() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            call("a", .trailing, log, registry)  // 0: opens [0, 300)
            #expect(log.all == [])
            await clock.advance(by: .milliseconds(100))
            call("b", .trailing, log, registry)
            await clock.advance(by: .milliseconds(100))
            call("c", .trailing, log, registry)
            await clock.advance(by: .milliseconds(99))
            #expect(log.all == [])
            await clock.advance(by: .milliseconds(1))
            #expect(log.all == ["c@300"])
            // The trailing run opened [300, 600): a call in it runs when it closes.
            await clock.advance(by: .milliseconds(100))
            call("d", .trailing, log, registry)
            await clock.advance(by: .milliseconds(200))
            #expect(log.all == ["c@300", "d@600"])
            // [600, 900) passes with no call: the group goes idle.
            await clock.advance(by: .milliseconds(300))
            #expect(registry.liveKeyCount == 0)
            call("e", .trailing, log, registry)  // 900: opens a new window
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["c@300", "d@600", "e@1200"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func trailingSingleCallRunsOnceWhenTheWindowCloses() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            call("only", .trailing, log, registry)
            #expect(pendingThrottle(identifier: "t")?.runsAt == .milliseconds(300))
            await clock.advance(by: .seconds(5))
            #expect(log.all == ["only@300"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func trailingTaskOverloadFinishesReplacedCallsAtOnce() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let replaced = throttle(
                .milliseconds(300), identifier: "t", by: .taskContext, option: .trailing,
                onError: nil
            ) { log.mark("replaced", registry) }
            let latest = throttle(
                .milliseconds(300), identifier: "t", by: .taskContext, option: .trailing,
                onError: nil
            ) { log.mark("latest", registry) }
            await replaced.value
            #expect(log.all == [])
            await clock.advance(by: .milliseconds(300))
            await latest.value
            #expect(log.all == ["latest@300"])
        }
    }

    // MARK: .default and .ensureLast

    @Test func leadingDropsCallsInsideTheWindow() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 0..<7 {
                call("c\(i)", .default, log, registry)
                await clock.advance(by: .milliseconds(100))
            }
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["c0@0", "c3@300", "c6@600"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func ensureLastSingleCallRunsOnce() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            call("only", .ensureLast, log, registry)
            await clock.advance(by: .seconds(5))
            #expect(log.all == ["only@0"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func ensureLastRunsTheLatestDroppedCallWhenTheWindowCloses() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 0..<5 {
                call("c\(i)", .ensureLast, log, registry)
                await clock.advance(by: .milliseconds(100))
            }
            await clock.advance(by: .seconds(1))
            // c0 leads [0, 300); c2 trails at 300 and opens [300, 600); c4 trails at 600.
            #expect(log.all == ["c0@0", "c2@300", "c4@600"])
        }
    }

    @Test func trailingLoopBurstAlwaysEndsWithTheLoopsLastCall() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 0..<1_000 { call("c\(i)", .trailing, log, registry) }
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["c999@300"])
            #expect(registry.timersArmed == 1)
        }
    }

    // MARK: Ties at equal instants

    /// Calls a 300 ms `throttle` at each `(label, ms)`, in order, on a manual clock, lets it
    /// run out, and returns the runs as `"label@ms"`.
    private func throttled(at calls: [(String, Int)], _ option: ThrottleOptions) async -> [String] {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for (label, ms) in calls {
                await clock.advance(to: .init(offset: .milliseconds(ms)))
                call(label, option, log, registry)
            }
            await clock.advance(by: .seconds(5))
            #expect(registry.liveKeyCount == 0)
        }
        return log.all
    }

    @Test func defaultACallAtTheClosingInstantFindsTheWindowClosed() async {
        #expect(
            await throttled(at: [("a", 0), ("b", 299), ("c", 300)], .default) == ["a@0", "c@300"])
    }

    @Test func ensureLastACallAtTheClosingInstantFindsTheWindowClosed() async {
        // Nothing kept: b runs at once.
        #expect(await throttled(at: [("a", 0), ("b", 300)], .ensureLast) == ["a@0", "b@300"])
        // b kept: it runs at 300 and opens [300, 600), where c, at 300 or later, is kept.
        #expect(
            await throttled(at: [("a", 0), ("b", 10), ("c", 300)], .ensureLast)
                == ["a@0", "b@300", "c@600"])
        #expect(
            await throttled(at: [("a", 0), ("b", 10), ("c", 310)], .ensureLast)
                == ["a@0", "b@300", "c@600"])
    }

    @Test func trailingACallAtTheClosingInstantFindsTheWindowClosed() async {
        // a kept: it runs at 300 and opens [300, 600), where b is kept.
        #expect(await throttled(at: [("a", 0), ("b", 300)], .trailing) == ["a@300", "b@600"])
        // [300, 600) holds nothing: b at 600 finds no window and opens [600, 900).
        #expect(await throttled(at: [("a", 0), ("b", 600)], .trailing) == ["a@300", "b@900"])
    }

    @Test func hugeDurationsNeverTrap() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for option in [ThrottleOptions.default, .ensureLast, .trailing] {
                for i in 0..<3 {
                    throttle(
                        .seconds(Int64.max), identifier: "\(option)", by: .taskContext,
                        option: option
                    ) {
                        log.mark("\(option)\(i)", registry)
                    }
                }
            }
            await clock.advance(by: .seconds(1_000_000))
            #expect(log.all.sorted() == ["default0@0", "ensureLast0@0"])
            #expect(pendingThrottle(identifier: "trailing") != nil)
            flushThrottle(identifier: "trailing")
            #expect(log.all.sorted() == ["default0@0", "ensureLast0@0", "trailing2@1000000000"])
            registry.cancelAll()
            #expect(registry.liveKeyCount == 0)
        }
    }
}
