import Tempo
import TempoTesting
import Testing

/// What a `Debouncer` or `Throttler` does with its pending call when it goes away: cancel it (the
/// default), or run it now (`onDeinit: .flush`); and an owner that captures itself weakly goes
/// away with a call pending.
@Suite struct OnDeinitTests {
    @Test func theDefaultIsCancel() {
        #expect(Debouncer().onDeinit == .cancel)
        #expect(Throttler().onDeinit == .cancel)
        #expect(Debouncer(onDeinit: .flush).onDeinit == .flush)
        #expect(Throttler(onDeinit: .flush).onDeinit == .flush)
    }

    @Test func aFlushingDebouncerRunsItsLatestCallWhenItGoesAway() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            var saver: Debouncer? = Debouncer(.seconds(1), by: .taskContext, onDeinit: .flush)
            saver? { log.mark("v1", registry) }
            await clock.advance(by: .milliseconds(300))
            saver? { log.mark("v2", registry) }
            #expect(log.all.isEmpty)
            saver = nil
            // Run in the deinit, on `.taskContext`: before the release returns.
            #expect(log.all == ["v2@300"])
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(5))
            #expect(log.all == ["v2@300"])  // once
            #expect(clock.sleeperCount == 0)
        }
    }

    @Test func aCancellingDebouncerDropsItsCallWhenItGoesAway() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            var saver: Debouncer? = Debouncer(.seconds(1), by: .taskContext)
            saver? { log.mark("v1", registry) }
            saver = nil
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(5))
            #expect(log.all.isEmpty)
        }
    }

    @Test func aFlushingDebouncerWithNothingPendingRunsNothing() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            // `.leading` never keeps a call: its quiet window is live, nothing is pending.
            var saver: Debouncer? = Debouncer(
                .seconds(1), by: .taskContext, option: .leading, onDeinit: .flush)
            saver? { log.mark("first", registry) }
            saver? { log.mark("dropped", registry) }
            #expect(registry.liveKeyCount == 1)
            saver = nil
            #expect(log.all == ["first@0"])
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(5))
            #expect(log.all == ["first@0"])
        }
    }

    @Test func aFlushingThrottlerRunsItsTrailingCallAndLeavesNoWindow() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            var progress: Throttler? = Throttler(
                .seconds(1), by: .taskContext, option: .ensureLast, onDeinit: .flush)
            progress? { log.mark("10%", registry) }
            await clock.advance(by: .milliseconds(200))
            progress? { log.mark("40%", registry) }
            progress? { log.mark("90%", registry) }
            progress = nil
            #expect(log.all == ["10%@0", "90%@200"])
            // The flush opened a window; the deinit's cancel forgot it.
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(5))
            #expect(log.all == ["10%@0", "90%@200"])
        }
    }

    @Test func aCancellingThrottlerDropsItsTrailingCall() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            var progress: Throttler? = Throttler(
                .seconds(1), by: .taskContext, option: .ensureLast)
            progress? { log.mark("10%", registry) }
            progress? { log.mark("90%", registry) }
            progress = nil
            await clock.advance(by: .seconds(5))
            #expect(log.all == ["10%@0"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @MainActor @Test func aFlushOnDeinitRunsAMainActorCallOnTheMainActor() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let log = Log<String>()
        var saver: Debouncer? = Debouncer(.seconds(1), onDeinit: .flush, registry: registry)
        saver?.onMainActor {
            MainActor.assertIsolated()
            log.append("saved")
        }
        saver = nil
        #expect(registry.liveKeyCount == 0)
        // Handed to the main actor, which this test holds: it runs once the test awaits.
        await clock.advance(by: .zero)
        #expect(log.all == ["saved"])
    }

    @Test func aFlushOnDeinitWhoseOperationThrowsReportsTheError() async {
        struct SaveFailed: Error {}
        let errors = Log<String>()
        let ran = Log<String>()
        await onManualClock { clock, registry in
            var saver: Debouncer? = Debouncer(.seconds(1), by: .ownedActor, onDeinit: .flush)
            let task = saver?(onError: { errors.append("\($0)") }) {
                ran.append("save")
                throw SaveFailed()
            }
            saver = nil
            await task?.value
            #expect(ran.all == ["save"])
            #expect(errors.all == ["SaveFailed()"])
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(5))
            #expect(ran.all == ["save"])
        }
    }

    @Test func aFlushOnDeinitRunsTheTaskOfAnAsyncCall() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            var saver: Debouncer? = Debouncer(.seconds(1), by: .taskContext, onDeinit: .flush)
            let replaced = saver? { () async throws in log.append("old") }
            let kept = saver? { () async throws in log.append("new") }
            await replaced?.value  // replaced: finished at once, never ran
            saver = nil
            await kept?.value  // granted by the deinit's flush
            #expect(log.all == ["new"])
            #expect(registry.liveKeyCount == 0)
        }
    }
}

/// An owner that captures itself weakly in its debouncer's operation, as the docs do.
@MainActor private final class DraftEditor {
    nonisolated static let deinits = Log<String>()
    private let saver: Debouncer
    private(set) var saves = 0

    init(registry: TempoRegistry) {
        saver = Debouncer(.seconds(1), registry: registry)
    }

    func editedWeakly() {
        saver.onMainActor { [weak self] in self?.saves += 1 }
    }

    func editedStrongly() {
        saver.onMainActor { self.saves += 1 }
    }

    deinit { Self.deinits.append("editor") }
}

@MainActor @Suite(.serialized) struct OwnerGoesAwayTests {
    @Test func anOwnerThatCapturesItselfWeaklyIsReleasedWithACallPending() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let before = DraftEditor.deinits.count
        var editor: DraftEditor? = DraftEditor(registry: registry)
        weak let watched = editor
        editor?.editedWeakly()
        #expect(registry.liveKeyCount == 1)
        editor = nil
        #expect(watched == nil)
        #expect(DraftEditor.deinits.count == before + 1)
        // Its debouncer went with it, and cancelled the pending call.
        #expect(registry.liveKeyCount == 0)
        #expect(registry.snapshot().isEmpty)
        await clock.advance(by: .seconds(5))
        #expect(clock.sleeperCount == 0)
    }

    /// The trap the docs warn about: a strong capture keeps the owner until the call has run.
    @Test func anOwnerThatCapturesItselfStronglyLivesUntilTheCallHasRun() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        var editor: DraftEditor? = DraftEditor(registry: registry)
        weak let watched = editor
        editor?.editedStrongly()
        editor = nil
        #expect(watched != nil)
        #expect(registry.liveKeyCount == 1)
        await clock.advance(by: .seconds(1))
        #expect(watched == nil)
        #expect(registry.liveKeyCount == 0)
    }
}
