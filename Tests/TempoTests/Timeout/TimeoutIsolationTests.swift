import Tempo
import TempoTesting
import Testing

/// `timeout`'s operation runs on the caller's actor, as `retry`'s attempts do, so main-actor
/// and actor code can touch their own state in it. (Before, the operation was a plain
/// `@Sendable` closure: `{ self.runs += 1 }` in main-actor code did not compile, "main
/// actor-isolated property 'runs' can not be mutated from a Sendable closure".)
@Suite struct TimeoutIsolationTests {
    @MainActor final class ReportModel {
        var runs = 0
        var ranOnMainActor = false

        func refresh(in registry: TempoRegistry) async throws {
            try await registry.withCurrent {
                try await timeout(.seconds(5)) {
                    self.runs += 1
                    self.ranOnMainActor = #isolation === MainActor.shared
                }
            }
        }

        func refreshValue() async throws -> Int {
            try await timeout(at: ContinuousClock.now.advanced(by: .seconds(60))) {
                self.runs += 10
                return self.runs
            }
        }
    }

    actor Counter {
        var count = 0

        func bump(in registry: TempoRegistry) async throws -> Bool {
            try await registry.withCurrent {
                try await timeout(.seconds(5)) {
                    self.count += 1
                    return #isolation === self
                }
            }
        }
    }

    @MainActor @Test func aMainActorOperationTouchesMainActorStateOnTheMainActor() async throws {
        let registry = TempoRegistry(clock: ManualClock())
        let model = ReportModel()
        try await model.refresh(in: registry)
        #expect(model.runs == 1)
        #expect(model.ranOnMainActor)
        #expect(try await model.refreshValue() == 11)
        #expect(registry.snapshot().isEmpty)
    }

    @Test func anActorsOperationThatUsesSelfRunsOnThatActor() async throws {
        let registry = TempoRegistry(clock: ManualClock())
        let counter = Counter()
        #expect(try await counter.bump(in: registry))
        #expect(try await counter.bump(in: registry))
        #expect(await counter.count == 2)
    }

    @Test func anOperationWrittenOutsideAnyActorRunsOnNone() async throws {
        let registry = TempoRegistry(clock: ManualClock())
        let isolated = try await registry.withCurrent {
            try await timeout(.seconds(5)) { #isolation != nil }
        }
        #expect(!isolated)
    }

    @MainActor @Test func aConcurrentClosureRunsOffTheMainActor() async throws {
        let registry = TempoRegistry(clock: ManualClock())
        let (timed, hedged) = try await registry.withCurrent {
            let timed = try await timeout(.seconds(5)) { @concurrent in #isolation == nil }
            let hedged = try await hedge(maxAttempts: 1, after: .seconds(1)) { @concurrent _ in
                #isolation == nil
            }
            return (timed, hedged)
        }
        #expect(timed)
        #expect(hedged)
    }

    @MainActor @Test func aMainActorOperationPastItsDeadlineIsStillCancelled() async throws {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let model = ReportModel()
        let task = Task { @MainActor in
            try await registry.withCurrent {
                try await timeout(.seconds(1)) {
                    try await clock.sleep(for: .seconds(10))
                    model.runs += 1
                }
            }
        }
        await clock.waitForSleepers(2)  // the operation and the deadline
        await clock.advance(by: .seconds(1))
        await #expect(throws: TimeoutError.timedOut(.seconds(1))) { try await task.value }
        #expect(model.runs == 0)
    }
}
