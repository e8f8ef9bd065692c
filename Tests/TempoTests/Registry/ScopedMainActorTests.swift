import Tempo
import TempoTesting
import Testing

/// Issue 12, item 3: a `@MainActor` type calls its own `Debouncer` and `Throttler` with
/// main-actor operations and error handlers that update its state. Before the change this
/// file did not compile: no synchronous form took a main-actor closure (`let applied: Void =
/// autosave { @MainActor in ... }` failed with "converting function value of type '@MainActor
/// @Sendable () -> ()' to '@Sendable () -> Void' loses global actor 'MainActor'"; without the
/// `Void` the call went to the `async throws` form, a `Task` per call), and `onError` was a
/// nonisolated `@Sendable` closure that could not set `errorMessage`.
private struct SaveFailed: Error, CustomStringConvertible {
    var description: String { "disk full" }
}

@MainActor
private final class Editor {
    private(set) var saves = 0
    private(set) var likes = 0
    private(set) var errorMessage: String?
    private(set) var indexed = 0
    let autosave: Debouncer
    let like: Throttler
    /// Made with another actor: an unmarked closure still runs there.
    let indexer: Debouncer
    let failing: Bool

    init(registry: TempoRegistry, failing: Bool = false) {
        autosave = Debouncer(.seconds(1), registry: registry)
        like = Throttler(.seconds(2), registry: registry)
        indexer = Debouncer(.seconds(1), by: .ownedActor, registry: registry)
        self.failing = failing
    }

    func edited() {
        // The main-actor form: a synchronous call, no `Task` per call.
        let applied: Void = autosave { @MainActor in self.saves += 1 }
        _ = applied
    }

    func liked() {
        let applied: Void = like { @MainActor in self.likes += 1 }
        _ = applied
    }

    func saveAsync() {
        autosave(onError: { self.errorMessage = "\($0)" }) { @MainActor in
            try await Task.sleep(for: .zero)
            if self.failing { throw SaveFailed() }
            self.saves += 1
        }
    }

    func reindex(_ done: Log<String>) {
        indexer {
            TempoActor.shared.assertIsolated()
            done.append("indexed on the owned actor")
        }
    }
}

@Suite struct ScopedMainActorTests {
    @Test @MainActor func aMainActorTypeUpdatesItsStateFromItsDebouncerAndThrottler() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let editor = Editor(registry: registry)
        for _ in 0..<3 { editor.edited() }
        for _ in 0..<3 { editor.liked() }
        await clock.advance(by: .zero)
        #expect(editor.likes == 1)
        #expect(editor.saves == 0)
        await clock.advance(by: .seconds(1))
        #expect(editor.saves == 1)
        #expect(editor.autosave.pending == nil)
        editor.liked()
        await clock.advance(by: .seconds(1))
        editor.liked()
        await clock.advance(by: .zero)
        #expect(editor.likes == 2)
    }

    @Test @MainActor func anAsyncOperationAndItsErrorHandlerUpdateMainActorState() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let editor = Editor(registry: registry, failing: true)
        editor.saveAsync()
        await clock.advance(by: .seconds(1))
        #expect(editor.errorMessage == "disk full")
        let working = Editor(registry: registry)
        working.saveAsync()
        await clock.advance(by: .seconds(1))
        #expect(working.saves == 1 && working.errorMessage == nil)
    }

    @Test @MainActor func anUnmarkedClosureStillRunsOnTheObjectsActor() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let editor = Editor(registry: registry)
        let done = Log<String>()
        editor.reindex(done)
        await clock.advance(by: .seconds(1))
        #expect(done.all == ["indexed on the owned actor"])
    }

    @Test func aMainActorFunctionValueGoesToTheMainActorForm() async {
        let ran = Log<Bool>()
        let onMain: @MainActor @Sendable () -> Void = {
            MainActor.assertIsolated()
            ran.append(true)
        }
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.seconds(1), by: .taskContext, registry: registry)
            let throttler = Throttler(.seconds(1), by: .taskContext, registry: registry)
            debouncer(onMain)
            throttler(onMain)
            await clock.advance(by: .seconds(1))
        }
        #expect(ran.all == [true, true])
    }
}
