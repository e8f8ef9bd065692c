// Calls written only against the Throttler 3 signatures (MigratingFromThrottler.md), with a plain `import Tempo`:
// this file compiling is half the test; the rest checks that they behave.
import Tempo
import TempoTesting
import Testing

@MainActor
final class CompatViewModel {
    var searches: [String] = []
    var taps = 0
    var text = ""

    func textChanged(_ text: String) {
        self.text = text
        debounce(.milliseconds(300)) { self.searches.append(self.text) }
    }

    func everyShapeOfCall() -> [Task<Void, Never>] {
        debounce { self.taps += 1 }
        debounce(.milliseconds(300), identifier: "search") { self.text = "x" }
        debounce(.milliseconds(300), identifier: "search", option: .runFirst) { self.text = "y" }
        throttle { self.taps += 1 }
        throttle(.seconds(1), option: .ensureLast) { self.taps += 1 }
        delay { self.taps += 1 }
        delay(.seconds(2)) { self.taps += 1 }
        execute { self.taps += 1 }
        execute(with: .seconds(1)) { self.taps += 1 }
        debounce(.seconds(1), identifier: "bg", by: .ownedActor, option: .default) {}
        throttle(.seconds(1), identifier: "bg", by: .taskContext, option: .ensureLast) {}
        delay(.seconds(1), by: .ownedActor) {}
        debounce(.seconds(1), identifier: "s", by: .mainActor, option: .default, operation: {})
        let a: Task<Void, Never> = debounce(
            .seconds(1), identifier: "a", by: .mainActor, option: .runFirst, onError: { _ in }
        ) { try await Task.sleep(for: .seconds(1)) }
        let b = throttle(.seconds(1), onError: { _ in }) { try await Task.sleep(for: .seconds(1)) }
        let c = delay(.seconds(1), by: .taskContext, onError: nil) {
            try await Task.sleep(for: .seconds(1))
        }
        let d = execute(with: .seconds(1), on: .ownedActor) { await Self.work() }
        // Throttler's order on the async overloads: fileID, line, column, then onError.
        let identifier: String = "e"
        let e: Task<Void, Never> = debounce(
            .seconds(1), identifier: identifier, by: .taskContext, option: .default,
            fileID: #fileID, line: #line, column: #column, onError: { _ in }
        ) { await Self.work() }
        let f: Task<Void, Never> = throttle(
            .seconds(1), identifier: "f", by: .ownedActor, option: .ensureLast,
            fileID: #fileID, line: #line, column: #column, onError: nil
        ) { try await Task.sleep(for: .seconds(1)) }
        for task in [a, b, c, d, e, f] { task.cancel() }
        return [a, b, c, d, e, f]
    }

    nonisolated static func work() async {}
}

@Suite struct SourceCompatibilityTests {
    @Test @MainActor func aMainActorViewModelUsingTheDefaultsWorks() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let model = CompatViewModel()
        await registry.withCurrent {
            for text in ["s", "sw", "swi"] { model.textChanged(text) }
            await clock.advance(by: .milliseconds(300))
            #expect(model.searches == ["swi"])
            let cancelled = model.everyShapeOfCall()
            for task in cancelled { await task.value }
            await clock.advance(by: .seconds(5))
            // debounce, throttle ×2, delay ×2 and execute ×2 from the main-actor closures.
            #expect(model.taps == 7)
            #expect(model.text == "y")
        }
        #expect(registry.liveKeyCount == 0)
    }

    @Test func theTypesAreSendableAndTheOptionsAreComplete() {
        let options: [DebounceOptions] = [.default, .runFirst]
        let throttles: [ThrottleOptions] = [.default, .ensureLast]
        let actors: [ActorType] = [.mainActor, .ownedActor, .taskContext]
        func isSendable(_: some Sendable) -> Bool { true }
        #expect(isSendable(options) && isSendable(throttles) && isSendable(actors))
        #expect(Set(actors).count == 3)
    }
}
