import Foundation
import Tempo
import TempoTesting
import Testing

/// An operation of `timeout` or an attempt of `hedge` that runs on its caller's actor, and is
/// still waiting for that actor when its task is cancelled (the deadline passed, the caller was
/// cancelled), never starts: it does not run user code that is already cancelled. The actor is
/// kept busy by holding its executor (`HoldableExecutor`), so the order is the test's.
@Suite struct TimeoutBusyActorTests {
    actor Screen {
        let executor = HoldableExecutor()
        nonisolated var unownedExecutor: UnownedSerialExecutor {
            executor.asUnownedSerialExecutor()
        }
        var started: [Int] = []

        /// A timeout whose operation waits for this actor, held from the moment the call is
        /// made (the operation's job is enqueued after this job's turn ends).
        func loadWhileBusy(in registry: TempoRegistry, clock: ManualClock) async throws {
            executor.holdAfterThisJob()
            try await registry.withCurrent {
                try await timeout(.seconds(1)) { self.started.append(1) }
            }
        }

        /// Both attempts start at once (no delay) and wait for this actor, held from the
        /// moment the call is made; each takes the actor's turn in some order once released.
        func hedgeAtOnceWhileBusy(in registry: TempoRegistry) async throws -> String {
            executor.holdAfterThisJob()
            return try await registry.withCurrent {
                try await hedge(maxAttempts: 2, after: .zero) { attempt in
                    self.started.append(attempt)
                    return "attempt \(attempt)"
                }
            }
        }

        func reset() { started = [] }

        func hedgeTwice(in registry: TempoRegistry, clock: ManualClock) async throws -> String {
            try await registry.withCurrent {
                try await hedge(maxAttempts: 2, after: .milliseconds(50)) { attempt in
                    self.started.append(attempt)
                    try await clock.sleep(for: .seconds(10))
                    return "attempt \(attempt)"
                }
            }
        }
    }

    /// A manual clock, a registry on it, and a `Screen` whose executor is stopped at the end.
    private func withScreen(
        _ body: (ManualClock, TempoRegistry, Screen) async throws -> Void
    ) async rethrows {
        let clock = ManualClock()
        let screen = Screen()
        defer { screen.executor.stop() }
        try await body(clock, TempoRegistry(clock: clock), screen)
    }

    @Test func anOperationStillWaitingForItsActorAtTheDeadlineNeverStarts() async {
        await withScreen { clock, registry, screen in
            let call = Task { try await screen.loadWhileBusy(in: registry, clock: clock) }
            await clock.waitForSleepers(1)  // the deadline; the operation waits for the actor
            // Returns once the deadline has cancelled the operation's task.
            await clock.advance(by: .seconds(1))
            screen.executor.release()
            await #expect(throws: TimeoutError.timedOut(.seconds(1))) { try await call.value }
            #expect(await screen.started.isEmpty)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func aHedgeAttemptStillWaitingForItsActorWhenTheCallerIsCancelledNeverStarts() async {
        await withScreen { clock, registry, screen in
            let call = Task { try await screen.hedgeTwice(in: registry, clock: clock) }
            await clock.waitForSleepers(2)  // the first attempt and the hedge timer
            screen.executor.hold()  // nothing runs on the actor now: the first attempt sleeps
            // The hedge is due: the second attempt's task is started and waits for the actor.
            // (The advance waits for that attempt, awake on the clock: it returns only once the
            // actor is released, so it is not awaited here.)
            let advance = Task { await clock.advance(by: .milliseconds(50)) }
            #expect(await eventually(within: .seconds(60)) { screen.executor.waiting == 1 })
            call.cancel()  // cancels both attempts' tasks at once
            screen.executor.release()
            await #expect(throws: CancellationError.self) { try await call.value }
            await advance.value
            #expect(await screen.started == [1])
        }
    }

    /// An attempt queued on its actor behind the attempt that wins never starts, and the
    /// winner's value is the call's. (A first version checked only for cancellation, which the
    /// win had not reached yet when the actor ran the queued attempt: it started, and could
    /// win the call. That depended on the pool's timing, so the test makes 50 calls.)
    @Test func aHedgeAttemptQueuedBehindTheWinnerOnItsActorNeverStarts() async throws {
        try await withScreen { _, registry, screen in
            for _ in 0..<50 {
                await screen.reset()
                let call = Task { try await screen.hedgeAtOnceWhileBusy(in: registry) }
                // Both attempts wait for the actor.
                #expect(await eventually(within: .seconds(60)) { screen.executor.waiting == 2 })
                screen.executor.release()
                let value = try await call.value
                let started = await screen.started
                #expect(started.count == 1)
                #expect(value == "attempt \(started.first ?? 0)")
            }
            #expect(registry.snapshot().isEmpty)
        }
    }
}
