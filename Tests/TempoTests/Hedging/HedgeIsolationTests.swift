import Tempo
import TempoTesting
import Testing

/// `hedge`'s attempts run on the caller's actor, as `retry`'s do. (Before, the operation was a
/// plain `@Sendable` closure, and main-actor state could not be touched in it.)
@Suite struct HedgeIsolationTests {
    @MainActor final class ProfileModel {
        var attemptsSeen: [Int] = []
        var allOnMainActor = true

        func load(in registry: TempoRegistry, clock: ManualClock) async throws -> String {
            try await registry.withCurrent {
                try await hedge(maxAttempts: 2, after: .milliseconds(50)) { attempt in
                    self.attemptsSeen.append(attempt)
                    self.allOnMainActor = self.allOnMainActor && #isolation === MainActor.shared
                    if attempt == 1 { try await clock.sleep(for: .seconds(10)) }
                    return "profile \(attempt)"
                }
            }
        }
    }

    @MainActor @Test func mainActorAttemptsTouchMainActorStateOnTheMainActor() async throws {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let model = ProfileModel()
        let task = Task { @MainActor in try await model.load(in: registry, clock: clock) }
        await clock.waitForSleepers(2)  // the first attempt and the hedge timer
        await clock.advance(by: .milliseconds(50))
        #expect(try await task.value == "profile 2")
        #expect(model.attemptsSeen == [1, 2])
        #expect(model.allOnMainActor)
    }

    actor Replica {
        var reads = 0
        func read(in registry: TempoRegistry) async throws -> Bool {
            try await registry.withCurrent {
                try await hedge(maxAttempts: 1, after: .seconds(1)) { _ in
                    self.reads += 1
                    return #isolation === self
                }
            }
        }
    }

    @Test func anActorsAttemptsThatUseSelfRunOnThatActor() async throws {
        let replica = Replica()
        #expect(try await replica.read(in: TempoRegistry(clock: ManualClock())))
        #expect(await replica.reads == 1)
    }
}
