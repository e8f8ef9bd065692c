import Tempo
import TempoTesting
import Testing

/// `flushAll()`: every pending debounce and throttle call of the registry runs now, whatever
/// front made it, and nothing else changes.
@Suite struct FlushAllTests {
    @Test func everyPendingCallRunsNowWithItsLatestOperation() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let saver = Debouncer(.seconds(1), by: .taskContext)
            let progress = Throttler(.seconds(1), by: .taskContext, option: .ensureLast)
            for i in 1...3 {
                debounce(.seconds(1), identifier: "named", by: .taskContext) {
                    log.mark("named\(i)", registry)
                }
                debounce(.seconds(1), by: .taskContext) { log.mark("site\(i)", registry) }
                saver { log.mark("scoped\(i)", registry) }
                progress { log.mark("throttle\(i)", registry) }
            }
            await clock.advance(by: .milliseconds(250))
            registry.flushAll()
            // `.taskContext` operations run in the caller: before `flushAll()` returns.
            #expect(
                log.all.sorted() == [
                    "named3@250", "scoped3@250", "site3@250", "throttle1@0", "throttle3@250",
                ])
            // The debounce groups are idle and left; the throttle's flush opened a window.
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .seconds(5))
            #expect(log.count == 5)  // nothing ran twice
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func operationsOnOtherActorsAreStartedThere() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "owned", by: .ownedActor) {
                TempoActor.assertIsolated()
                log.append("owned")
            }
            debounce(.seconds(1), identifier: "main", by: .mainActor) {
                MainActor.assertIsolated()
                log.append("main")
            }
            debounce(.seconds(1), identifier: "async", by: .ownedActor) { () async throws in
                log.append("async")
            }
            registry.flushAll()
            // Started, each on its actor; an advance of zero waits for work it started.
            await clock.advance(by: .zero)
            #expect(log.all.sorted() == ["async", "main", "owned"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func delaysRepeatsAndLimitsAreLeftAsTheyAre() async throws {
        let log = Log<String>()
        try await onManualClock { clock, registry in
            delay(.seconds(2), by: .taskContext) { log.mark("delay", registry) }
            debounce(.seconds(1), identifier: "save", by: .taskContext) {
                log.mark("save", registry)
            }
            try await rateLimit(RateLimit(1, per: .seconds(1)), identifier: "api") {}
            registry.flushAll()
            #expect(log.all == ["save@0"])
            let kinds = registry.snapshot().entries.map(\.kind)
            #expect(kinds.contains(.delay))
            #expect(kinds.contains(.rateLimit))
            await clock.advance(by: .seconds(2))
            #expect(log.all == ["save@0", "delay@2000"])
        }
    }

    @Test func aFlushedRunFirstGroupKeepsItsQuietWindow() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 1...3 {
                debounce(.seconds(1), identifier: "g", by: .taskContext, option: .runFirst) {
                    log.mark("c\(i)", registry)
                }
            }
            registry.flushAll()
            #expect(log.all == ["c1@0", "c3@0"])
            // As `flushDebounce`: the flushed run starts a quiet window, so a call inside it
            // waits for its end rather than running first.
            debounce(.seconds(1), identifier: "g", by: .taskContext, option: .runFirst) {
                log.mark("c4", registry)
            }
            #expect(log.all == ["c1@0", "c3@0"])
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["c1@0", "c3@0", "c4@1000"])
        }
    }

    @Test func nothingPendingMeansNothingRuns() async {
        await onManualClock { clock, registry in
            registry.flushAll()
            #expect(registry.liveKeyCount == 0)
            let log = Log<String>()
            throttle(.seconds(1), identifier: "t", by: .taskContext) { log.append("lead") }
            registry.flushAll()  // the window is open, but nothing waits in it
            #expect(log.all == ["lead"])
            #expect(registry.liveKeyCount == 1)
        }
    }

    @Test func flushAllFromInsideAnOperationRunsTheOthersAndNotItself() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "other", by: .taskContext) {
                log.mark("other", registry)
            }
            debounce(.milliseconds(500), identifier: "self", by: .taskContext) {
                log.mark("self", registry)
                registry.flushAll()  // no lock is held here: no deadlock
            }
            await clock.advance(by: .milliseconds(500))
            #expect(log.all == ["self@500", "other@500"])
            await clock.advance(by: .seconds(2))
            #expect(log.count == 2)
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aCallMadeByAFlushedOperationWaitsAsUsual() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "a", by: .taskContext) {
                log.mark("a", registry)
                debounce(.seconds(1), identifier: "b", by: .taskContext) {
                    log.mark("b", registry)
                }
            }
            registry.flushAll()
            #expect(log.all == ["a@0"])
            #expect(registry.pendingDebounce(identifier: "b")?.runsAt == .seconds(1))
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["a@0", "b@1000"])
        }
    }

    @Test func anAwaitedCallIsFlushedAndItsCallerGetsTheValue() async throws {
        try await onManualClock { clock, registry in
            let started = await clock.start {
                try await debounceResult(.seconds(1), identifier: "r", by: .taskContext) { 42 }
            }
            // Applied when `start` returned.
            #expect(registry.pendingDebounce(identifier: "r") != nil)
            registry.flushAll()
            let value = try await started.outcome()
            #expect(value == 42)
            #expect(registry.now == .zero)
        }
    }
}
