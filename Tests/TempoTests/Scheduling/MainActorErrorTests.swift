import Tempo
import TempoTesting
import Testing

/// Issue 12, item 3: a main-actor view model publishes its operations' errors from `onError`,
/// with no `Task` of its own, and `advance` returns once the error is published. (Before the
/// change this file did not compile: `onError` was a nonisolated `@Sendable` closure, so
/// `self.errorMessage = ...` was "main actor-isolated property 'errorMessage' can not be
/// mutated from a Sendable closure".)
private struct SearchFailed: Error, CustomStringConvertible {
    var description: String { "offline" }
}

@MainActor
private final class ErrorPublishingModel {
    var errorMessage: String?
    var errors: [String] = []
    let debouncer: Debouncer
    let throttler: Throttler

    init(registry: TempoRegistry) {
        debouncer = Debouncer(.milliseconds(300), registry: registry)
        throttler = Throttler(.milliseconds(300), option: .trailing, registry: registry)
    }

    private func publish(_ kind: String, _ error: any Error) {
        MainActor.assertIsolated()
        errorMessage = "\(kind): \(error)"
        errors.append(kind)
    }

    func debounced() {
        debounce(
            .milliseconds(300), identifier: "publish", onError: { self.publish("debounce", $0) }
        ) {
            throw SearchFailed()
        }
    }

    func throttled() {
        throttle(
            .milliseconds(300), identifier: "publish", option: .trailing,
            onError: { self.publish("throttle", $0) }
        ) { throw SearchFailed() }
    }

    func delayed() {
        delay(.milliseconds(300), onError: { self.publish("delay", $0) }) { throw SearchFailed() }
    }

    func scoped() {
        debouncer(onError: { self.publish("Debouncer", $0) }) { throw SearchFailed() }
        throttler(onError: { self.publish("Throttler", $0) }) { throw SearchFailed() }
    }

    /// An operation on another actor: its handler, written here, still runs on the main actor.
    func offMainActor() {
        debounce(
            .milliseconds(300), identifier: "owned", by: .ownedActor,
            onError: { self.publish("owned", $0) }
        ) {
            TempoActor.shared.assertIsolated()
            throw SearchFailed()
        }
    }

    /// A main-actor method passed as the handler: it hops to the main actor when called.
    func byMethodReference() {
        debounce(.milliseconds(300), identifier: "method", onError: recordByMethod) {
            throw SearchFailed()
        }
    }

    private func recordByMethod(_ error: any Error) { publish("method", error) }

    func repeating() -> Task<Void, Never> {
        `repeat`(every: .milliseconds(300), times: 3, onError: { self.publish("repeat", $0) }) {
            throw SearchFailed()
        }
    }
}

@Suite struct MainActorErrorTests {
    @Test @MainActor func aDebouncedErrorIsPublishedByTheTimeAdvanceReturns() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            let model = ErrorPublishingModel(registry: registry)
            model.debounced()
            await clock.advance(by: .milliseconds(300))
            #expect(model.errorMessage == "debounce: offline")
        }
    }

    @Test @MainActor func everyHelperPublishesOnTheMainActorBeforeAdvanceReturns() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            let model = ErrorPublishingModel(registry: registry)
            model.throttled()
            model.delayed()
            model.scoped()
            model.offMainActor()
            model.byMethodReference()
            let loop = model.repeating()
            await clock.advance(by: .milliseconds(300))
            #expect(
                model.errors.sorted()
                    == ["Debouncer", "Throttler", "delay", "method", "owned", "repeat", "throttle"])
            await loop.value
            withExtendedLifetime(model) {}
        }
    }

    @Test func aNonisolatedHandlerStillRunsOnTheOperationsActor() async {
        let actors = Log<String>()
        await onManualClock { clock, _ in
            debounce(
                .milliseconds(10), identifier: "owned-handler", by: .ownedActor,
                onError: { _ in
                    TempoActor.shared.assertIsolated()
                    actors.append("owned")
                }
            ) { throw SearchFailed() }
            await clock.advance(by: .milliseconds(10))
        }
        #expect(actors.all == ["owned"])
    }
}
