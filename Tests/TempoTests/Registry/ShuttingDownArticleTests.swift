import Tempo
import TempoTesting
import Testing

// The code of the "Shutting down without losing work" article, as it appears there (the docs
// build only compiles it; here it runs), with stores that record what they are given, and a
// test of each on the manual clock.

private final class ArticleDraftStore: Sendable {
    let saved = Log<String>()
    func save(_ text: String) { saved.append(text) }
}

@MainActor private final class ArticleNoteEditor {
    nonisolated static let deinits = Log<String>()
    private let store: ArticleDraftStore
    private let autosave = Debouncer(.seconds(2), onDeinit: .flush)
    private let preview = Debouncer(.milliseconds(300))
    private(set) var previewText = ""

    init(store: ArticleDraftStore) { self.store = store }

    func textChanged(_ text: String) {
        // Runs after the editor is gone: it captures the store, not the editor.
        autosave { [store] in store.save(text) }
        // Pointless once the editor is gone: cancelled with it, and the weak
        // capture lets the editor go while it is pending.
        preview.onMainActor { [weak self] in self?.previewText = text }
    }

    deinit { Self.deinits.append("editor") }
}

// The article's first block, in the method an app calls it from, with the registry passed in
// (`.shared` in the article) and the report kept where the article prints it.
@MainActor private final class ArticleAppLifecycle {
    private let registry: TempoRegistry
    private(set) var unfinished: DrainReport?

    init(registry: TempoRegistry = .shared) { self.registry = registry }

    func didEnterBackground() async {
        // 4 s at most
        let report =
            await registry
            .drain(within: .seconds(4))
        if !report.isComplete {
            // What was left, to log
            unfinished = report
        }
    }
}

private protocol LongRunningService: Sendable {
    func run() async throws
}

private struct TempoDrainService: LongRunningService {
    let registry: TempoRegistry
    let timeLimit: Duration
    let shutdownBegins: @Sendable () async throws -> Void
    let report: @Sendable (DrainReport) -> Void

    func run() async throws {
        // Cancelled instead (the group ended at once): drain without waiting.
        let cancelled = (try? await shutdownBegins()) == nil
        let result = await registry.drain(within: cancelled ? .zero : timeLimit)
        if !result.isComplete { report(result) }
    }
}

private func runTool(
    files: [String], writeProgress: @escaping @Sendable (Int) -> Void
) async {
    for (done, _) in files.enumerated() {
        debounce(.seconds(1), identifier: "progress", by: .taskContext) {
            writeProgress(done + 1)
        }
    }
    await TempoRegistry.current.drain()  // the article's tool drains `.shared`
}

/// A one-shot signal a test fires: what `gracefulShutdown()` is to a service.
private final class ShutdownSignal: Sendable {
    private let state = Lock<(fired: Bool, waiter: CheckedContinuation<Void, Never>?)>(
        (false, nil))

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    func fire() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.fired = true
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }
}

@MainActor @Suite(.serialized) struct ShuttingDownArticleTests {
    @Test func anEditorThatGoesAwaySavesItsLastEditAndDropsItsPreview() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let store = ArticleDraftStore()
        let before = ArticleNoteEditor.deinits.count
        var editor: ArticleNoteEditor? = registry.withCurrent { ArticleNoteEditor(store: store) }
        editor?.textChanged("h")
        editor?.textChanged("hello")
        editor = nil
        // Released at once (nothing pending holds it), and its save ran on its way out.
        #expect(ArticleNoteEditor.deinits.count == before + 1)
        await clock.advance(by: .zero)  // the save runs on the main actor
        #expect(store.saved.all == ["hello"])
        #expect(registry.liveKeyCount == 0)
        await clock.advance(by: .seconds(5))
        #expect(store.saved.all == ["hello"])
    }

    /// The article's test of the flushed save: it lands on the main actor's next turn, not
    /// during the release.
    @Test func closingTheEditorSavesTheLastDraft() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let store = ArticleDraftStore()
        var editor: ArticleNoteEditor? = registry.withCurrent {
            ArticleNoteEditor(store: store)
        }
        editor?.textChanged("hello")
        editor = nil
        #expect(store.saved.all.isEmpty)  // queued for the main actor, which the test holds
        await clock.advance(by: .zero)
        #expect(store.saved.all == ["hello"])
    }

    @Test func goingToTheBackgroundRunsPendingWritesAndReportsWhatIsLeft() async throws {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let store = ArticleDraftStore()
        let app = ArticleAppLifecycle(registry: registry)
        registry.withCurrent {
            debounce(.seconds(2), identifier: "save", by: .taskContext) { store.save("draft") }
            delay(.seconds(30), by: .taskContext) { store.save("reminder") }
        }
        let background = await clock.start { await app.didEnterBackground() }
        #expect(store.saved.all == ["draft"])
        await clock.advance(by: .seconds(4))
        try await background.value()
        #expect(app.unfinished?.pending.map(\.kind) == [.delay])
        #expect(app.unfinished?.endedAt == .seconds(4))
    }

    @Test func theServiceDrainsWhenShutdownBegins() async throws {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let store = ArticleDraftStore()
        let signal = ShutdownSignal()
        let reports = Log<DrainReport>()
        let service = TempoDrainService(
            registry: registry, timeLimit: .seconds(10), shutdownBegins: { await signal.wait() },
            report: { reports.append($0) })
        // A plain task: until shutdown the service waits off the clock, which `clock.start`
        // would wait out.
        let running = Task { try await service.run() }
        registry.withCurrent {
            debounce(.seconds(2), identifier: "audit", by: .taskContext) {
                store.save("audit")
            }
        }
        #expect(store.saved.all.isEmpty)
        signal.fire()  // SIGTERM
        try await running.value
        #expect(store.saved.all == ["audit"])
        #expect(reports.all.isEmpty)  // complete: nothing to report
    }

    @Test func aCancelledServiceDrainsWithoutWaitingAndReportsWhatIsLeft() async throws {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let reports = Log<DrainReport>()
        let service = TempoDrainService(
            registry: registry, timeLimit: .seconds(10),
            shutdownBegins: { try await clock.sleep(for: .seconds(3_600)) },
            report: { reports.append($0) })
        registry.withCurrent { delay(.seconds(30), by: .taskContext) {} }
        let running = await clock.start { try await service.run() }
        running.cancel()
        try await running.outcome()
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.isComplete == false)
        #expect(reports.all.first?.endedAt == .zero)
    }

    @Test func aToolWritesItsLastProgressBeforeItEnds() async {
        let clock = ManualClock()
        let progress = Log<Int>()
        await TempoRegistry(clock: clock).withCurrent {
            await runTool(files: ["a", "b", "c"]) { progress.append($0) }
        }
        #expect(progress.all == [3])
    }

    @Test func aShutdownSavesTheLastEditAndWaitsForTheUpload() async throws {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let saved = Log<String>()
        registry.withCurrent {
            for text in ["h", "he", "hello"] {
                debounce(.seconds(2), identifier: "save", by: .taskContext) {
                    saved.append(text)
                }
            }
            delay(.seconds(3), by: .taskContext) { saved.append("upload") }
        }
        let shutdown = await clock.start { await registry.drain(within: .seconds(10)) }
        #expect(saved.all == ["hello"])  // flushed at once
        await clock.advance(by: .seconds(3))  // the delay comes due
        let report = try await shutdown.value()
        #expect(report.isComplete)
        #expect(saved.all == ["hello", "upload"])
    }
}
