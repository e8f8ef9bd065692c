import Tempo
import TempoTesting
import Testing

/// A view model that owns a debouncer and a throttler and captures itself weakly.
private final class SearchModel: Sendable {
    let debouncer: Debouncer
    let throttler: Throttler
    let log: Log<String>

    init(log: Log<String>, debounceOption: DebounceOptions = .default) {
        self.log = log
        debouncer = Debouncer(.milliseconds(300), by: .taskContext, option: debounceOption)
        throttler = Throttler(.milliseconds(300), by: .taskContext, option: .trailing)
    }

    func queryChanged(_ query: String) {
        debouncer { [weak self] in self?.log.append("search \(query)") }
        throttler { [weak self] in self?.log.append("suggest \(query)") }
    }
}

@Suite struct ScopedTests {
    @Test func aDebouncerBehavesAsTheFreeFunction() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let debouncer = Debouncer(
                .milliseconds(300), by: .taskContext, option: .runFirst,
                maxWait: .milliseconds(500))
            for i in 0..<10 {
                debouncer { log.mark("c\(i)", registry) }
                await clock.advance(by: .milliseconds(100))
            }
            await clock.advance(by: .seconds(1))
            // As `maxWaitWithRunFirst` in DebounceModesTests.
            #expect(log.all == ["c0@0", "c4@500", "c9@1000"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aThrottlerBehavesAsTheFreeFunction() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let throttler = Throttler(.milliseconds(300), by: .taskContext, option: .ensureLast)
            for i in 0..<5 {
                throttler { log.mark("c\(i)", registry) }
                await clock.advance(by: .milliseconds(100))
            }
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["c0@0", "c2@300", "c4@600"])
        }
    }

    @Test func eachObjectIsAGroupOfItsOwn() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let a = Debouncer(.milliseconds(300), by: .taskContext)
            let b = Debouncer(.milliseconds(300), by: .taskContext)
            a { log.mark("a", registry) }
            b { log.mark("b", registry) }
            // Nor does it share a group with free calls.
            debounce(.milliseconds(300), by: .taskContext) { log.mark("free", registry) }
            #expect(registry.liveKeyCount == 3)
            await clock.advance(by: .milliseconds(300))
            #expect(log.all.sorted() == ["a@300", "b@300", "free@300"])
        }
    }

    @Test func controlOfADebouncer() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let saver = Debouncer(.seconds(1), by: .taskContext)
            #expect(saver.pending == nil)
            saver.flush()  // nothing pending: nothing
            saver { log.mark("v1", registry) }
            saver { log.mark("v2", registry) }
            await clock.advance(by: .milliseconds(400))
            #expect(saver.pending?.runsAt == .seconds(1))
            #expect(saver.pending?.remaining == .milliseconds(600))
            saver.flush()
            #expect(log.all == ["v2@400"])
            saver { log.mark("v3", registry) }
            saver.cancel()
            #expect(saver.pending == nil)
            await clock.advance(by: .seconds(5))
            #expect(log.all == ["v2@400"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func controlOfAThrottler() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let progress = Throttler(.milliseconds(300), by: .taskContext, option: .trailing)
            progress { log.mark("10%", registry) }
            progress { log.mark("20%", registry) }
            #expect(progress.pending?.runsAt == .milliseconds(300))
            await clock.advance(by: .milliseconds(100))
            progress.flush()
            #expect(log.all == ["20%@100"])
            progress { log.mark("30%", registry) }
            progress.cancel()
            #expect(progress.pending == nil)
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["20%@100"])
        }
    }

    @Test func mainActorAndTaskCalls() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.milliseconds(300), by: .ownedActor)
            let throttler = Throttler(.milliseconds(300), by: .ownedActor)
            debouncer.onMainActor { log.mark("main", registry) }
            let task = debouncer(onError: nil) { log.mark("task", registry) }
            throttler.onMainActor { log.mark("throttled main", registry) }
            let dropped = throttler { log.mark("dropped", registry) } as Task<Void, Never>
            await dropped.value
            await clock.advance(by: .milliseconds(300))
            await task.value
            #expect(log.all.sorted() == ["task@300", "throttled main@0"])
        }
    }

    @Test func deinitCancelsPendingWorkAndLeavesTheRegistryAsItWas() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            debounce(.seconds(10), identifier: "unrelated", by: .taskContext) {}
            let before = registry.liveKeyCount
            do {
                let debouncer = Debouncer(.milliseconds(300), by: .taskContext)
                let throttler = Throttler(.milliseconds(300), by: .taskContext, option: .ensureLast)
                let leading = Debouncer(.milliseconds(300), by: .taskContext, option: .leading)
                debouncer { log.mark("debounced", registry) }
                throttler { log.mark("lead", registry) }
                throttler { log.mark("trail", registry) }
                leading { log.mark("leading", registry) }  // a quiet window, nothing pending
                #expect(registry.liveKeyCount == before + 3)
                withExtendedLifetime((debouncer, throttler, leading)) {}
            }
            #expect(registry.liveKeyCount == before)
            await clock.advance(by: .seconds(1))
            #expect(log.all.sorted() == ["lead@0", "leading@0"])
            #expect(clock.sleeperCount == 1)  // the unrelated group's timer only
        }
    }

    @Test func anOwnerThatGoesAwayLeavesNoWorkBehind() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let before = registry.liveKeyCount
            var model: SearchModel? = SearchModel(log: log)
            weak let weakModel = model
            weak let weakDebouncer = model?.debouncer
            model?.queryChanged("sw")
            model?.queryChanged("swift")
            #expect(registry.liveKeyCount == before + 2)
            model = nil
            // Nothing in the registry kept the owner or its debouncer alive.
            #expect(weakModel == nil)
            #expect(weakDebouncer == nil)
            #expect(registry.liveKeyCount == before)
            await clock.advance(by: .seconds(1))
            #expect(log.all == [])
        }
    }

    @Test func anOwnerThatStaysRunsItsWork() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let model = SearchModel(log: log)
            model.queryChanged("sw")
            model.queryChanged("swift")
            await clock.advance(by: .seconds(1))
            #expect(log.all.sorted() == ["search swift", "suggest swift"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aDeinitialisedDebouncersTaskFinishesWithoutRunning() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            var debouncer: Debouncer? = Debouncer(.milliseconds(300), by: .taskContext)
            let task = debouncer!(onError: nil) { log.mark("never", registry) }
            debouncer = nil
            await task.value
            await clock.advance(by: .seconds(1))
            #expect(log.all == [])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func anOperationThatHoldsItsDebouncerReleasesItAfterRunning() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            var debouncer: Debouncer? = Debouncer(.milliseconds(300), by: .taskContext)
            weak let weakDebouncer = debouncer
            debouncer! { [debouncer] in
                _ = debouncer
                log.mark("ran", registry)
            }
            debouncer = nil
            #expect(weakDebouncer != nil)  // the pending operation holds it
            // The run releases the operation, whose release deinitialises the debouncer, whose
            // deinit calls into the registry: no lock may be held then.
            await clock.advance(by: .milliseconds(300))
            #expect(log.all == ["ran@300"])
            #expect(weakDebouncer == nil)
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func zeroDurationRunsAtOnce() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.zero, by: .taskContext)
            let throttler = Throttler(.seconds(-1), by: .taskContext, option: .trailing)
            debouncer { log.mark("d", registry) }
            throttler { log.mark("t", registry) }
            #expect(log.all == ["d@0", "t@0"])
            #expect(registry.liveKeyCount == 0)
        }
    }
}

/// Scoped objects on `ContinuousClock`: the wiring of deinit to a real sleeping timer.
@Suite struct ScopedRealClockTests {
    @Test func realClockDeinitCancelsTheTimerAndThePendingCall() async {
        let registry = TempoRegistry(clock: ContinuousClock())
        let ran = Log<String>()
        do {
            let debouncer = Debouncer(.milliseconds(30), by: .taskContext, registry: registry)
            let throttler = Throttler(
                .milliseconds(30), by: .taskContext, option: .trailing, registry: registry)
            debouncer { ran.append("debounced") }
            throttler { ran.append("throttled") }
            #expect(registry.liveKeyCount == 2)
            withExtendedLifetime((debouncer, throttler)) {}
        }
        #expect(registry.liveKeyCount == 0)
        try? await Task.sleep(for: .milliseconds(150))
        #expect(ran.all == [])
        #expect(registry.liveKeyCount == 0)
    }

    @Test func realClockFlushRunsNowAndLeavesNothing() async {
        let registry = TempoRegistry(clock: ContinuousClock())
        let ran = Log<String>()
        let debouncer = Debouncer(.seconds(60), by: .taskContext, registry: registry)
        debouncer { ran.append("saved") }
        debouncer.flush()
        #expect(ran.all == ["saved"])
        #expect(registry.liveKeyCount == 0)
    }
}
