import Tempo
import TempoTesting
import Testing

@Suite struct HedgeTests {
    @Test func noHedgeStartsBeforeTheDelayAndTheNextStartsExactlyAtIt() async throws {
        try await onManualClock { clock, registry async throws in
            let log = Log<AttemptEvent>()
            let slow = AttemptScript(duration: .seconds(1), succeeds: true)
            let call = Task {
                try await hedge(maxAttempts: 3, after: .milliseconds(50)) {
                    try await scriptedAttempts(clock, log, [slow])($0)
                }
            }
            await clock.waitForSleepers(1)  // the hedge timer
            await clock.advance(by: .milliseconds(49))
            #expect(log.all == [.started(1, at: .zero)])
            #expect(
                registry.snapshot().hedgeState
                    == .hedge(attemptsStarted: 1, inFlight: 1, nextHedgeAt: .milliseconds(50)))
            await clock.advance(by: .milliseconds(1))
            #expect(log.all == [.started(1, at: .zero), .started(2, at: .milliseconds(50))])
            #expect(
                registry.snapshot().hedgeState
                    == .hedge(attemptsStarted: 2, inFlight: 2, nextHedgeAt: .milliseconds(100)))
            call.cancel()
            await #expect(throws: CancellationError.self) { try await call.value }
        }
    }

    @Test func noMoreThanMaxAttemptsStart() async throws {
        try await onManualClock { clock, registry async throws in
            let log = Log<AttemptEvent>()
            let slow = AttemptScript(duration: .seconds(1), succeeds: true)
            let call = Task {
                try await hedge(maxAttempts: 3, after: .milliseconds(50)) {
                    try await scriptedAttempts(clock, log, [slow])($0)
                }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .milliseconds(500))
            #expect(starts(log) == [1: .zero, 2: .milliseconds(50), 3: .milliseconds(100)])
            #expect(clock.sleeperCount == 3)  // the three attempts; no timer is left
            #expect(
                registry.snapshot().hedgeState
                    == .hedge(attemptsStarted: 3, inFlight: 3, nextHedgeAt: nil))
            await clock.advance(by: .milliseconds(500))  // attempt 1 ends at 1 s and wins
            #expect(try await call.value == 1)
            #expect(starts(log).count == 3)
        }
    }

    @Test func theFirstSuccessWinsAndTheOthersAreCancelledAndAwaited() async throws {
        try await onManualClock { clock, registry async throws in
            let log = Log<AttemptEvent>()
            let scripts = [
                AttemptScript(duration: .milliseconds(400), succeeds: true),
                AttemptScript(duration: .milliseconds(30), succeeds: true),
                AttemptScript(duration: .milliseconds(400), succeeds: true),
            ]
            let call = Task {
                try await hedge(maxAttempts: 3, after: .milliseconds(50)) {
                    try await scriptedAttempts(clock, log, scripts)($0)
                }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .milliseconds(80))
            #expect(try await call.value == 2)
            #expect(
                log.all == [
                    .started(1, at: .zero), .started(2, at: .milliseconds(50)),
                    .succeeded(2, at: .milliseconds(80)), .cancelled(1, at: .milliseconds(80)),
                ])
            #expect(clock.sleeperCount == 0)  // no attempt and no timer is left
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func aFirstAttemptThatSucceedsBeforeTheDelayIsTheWholeCall() async throws {
        try await onManualClock { clock, registry async throws in
            let log = Log<AttemptEvent>()
            let fast = AttemptScript(duration: .milliseconds(20), succeeds: true)
            let call = Task {
                try await hedge(maxAttempts: 3, after: .milliseconds(50)) {
                    try await scriptedAttempts(clock, log, [fast])($0)
                }
            }
            await clock.waitForSleepers(2)  // the timer and attempt 1
            await clock.advance(by: .milliseconds(20))
            #expect(try await call.value == 1)
            #expect(log.all == [.started(1, at: .zero), .succeeded(1, at: .milliseconds(20))])
            #expect(clock.sleeperCount == 0)  // the timer was disarmed
            #expect(registry.snapshot().isEmpty)
            // An operation that returns without suspending: no hedge either.
            #expect(try await hedge(after: .milliseconds(50)) { $0 * 10 } == 10)
        }
    }

    @Test func aFailedAttemptStartsTheNextAtOnceAndMovesTheNextHedge() async throws {
        try await onManualClock { clock, registry async throws in
            let log = Log<AttemptEvent>()
            let scripts = [
                AttemptScript(duration: .milliseconds(30), succeeds: false),
                AttemptScript(duration: .seconds(1), succeeds: true),
            ]
            let call = Task {
                try await hedge(maxAttempts: 3, after: .milliseconds(50)) {
                    try await scriptedAttempts(clock, log, scripts)($0)
                }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .milliseconds(30))
            #expect(starts(log) == [1: .zero, 2: .milliseconds(30)])
            #expect(
                registry.snapshot().hedgeState
                    == .hedge(attemptsStarted: 2, inFlight: 1, nextHedgeAt: .milliseconds(80)))
            await clock.advance(to: ManualClock.Instant(offset: .milliseconds(79)))
            #expect(starts(log).count == 2)  // nothing at 50 ms, the first timer's time
            await clock.advance(by: .milliseconds(1))
            #expect(starts(log)[3] == .milliseconds(80))
            await clock.advance(by: .seconds(1))
            #expect(try await call.value == 2)
        }
    }

    @Test func whenEveryAttemptFailsTheErrorHoldsThemAllInStartOrder() async throws {
        try await onManualClock { clock, registry async throws in
            let log = Log<AttemptEvent>()
            // Attempt 3 fails first and attempt 1 last: the errors still come in start order.
            let scripts = [
                AttemptScript(duration: .milliseconds(300), succeeds: false),
                AttemptScript(duration: .milliseconds(200), succeeds: false),
                AttemptScript(duration: .milliseconds(100), succeeds: false),
            ]
            let call = Task {
                try await hedge(maxAttempts: 3, after: .milliseconds(50)) {
                    try await scriptedAttempts(clock, log, scripts)($0)
                }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .milliseconds(299))
            #expect(
                registry.snapshot().hedgeState
                    == .hedge(attemptsStarted: 3, inFlight: 1, nextHedgeAt: nil))
            await clock.advance(by: .milliseconds(1))
            let error = await #expect(throws: HedgingError.self) { try await call.value }
            guard case .allAttemptsFailed(let errors)? = error else {
                Issue.record("expected allAttemptsFailed, got \(String(describing: error))")
                return
            }
            #expect(
                errors.map { $0 as? Boom } == [
                    Boom(attempt: 1), Boom(attempt: 2), Boom(attempt: 3),
                ])
            #expect(error?.errors.count == 3)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func cancellingTheCallerCancelsEveryAttemptAndThrowsCancellationError() async throws {
        try await onManualClock { clock, registry async throws in
            let log = Log<AttemptEvent>()
            let slow = AttemptScript(duration: .seconds(1), succeeds: true)
            let call = Task {
                try await hedge(maxAttempts: 3, after: .milliseconds(50)) {
                    try await scriptedAttempts(clock, log, [slow])($0)
                }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .milliseconds(60))
            call.cancel()
            await #expect(throws: CancellationError.self) { try await call.value }
            #expect(
                Set(log.all.suffix(2))
                    == [.cancelled(1, at: .milliseconds(60)), .cancelled(2, at: .milliseconds(60))])
            #expect(clock.sleeperCount == 0)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func aCallerCancelledBeforeTheCallRunsNothing() async throws {
        try await onManualClock { _, registry async throws in
            let ran = Flag()
            let call = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await hedge(after: .milliseconds(50)) { _ in ran.set() }
            }
            await #expect(throws: CancellationError.self) { try await call.value }
            #expect(!ran.isSet)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func anAttemptThatIgnoresCancellationIsStillAwaited() async throws {
        try await onManualClock { clock, registry async throws in
            let log = Log<String>()
            let call = Task {
                let value = try await hedge(maxAttempts: 2, after: .milliseconds(50)) { attempt in
                    if attempt == 1 {
                        // Asleep on the clock in a task of its own: cancelling the attempt
                        // does not wake it.
                        await Task { try? await clock.sleep(for: .seconds(1)) }.value
                        log.append("attempt 1 ended")
                        return 1
                    }
                    try await clock.sleep(for: .milliseconds(10))
                    log.append("attempt 2 succeeded")
                    return 2
                }
                log.append("hedge returned")
                return value
            }
            await clock.waitForSleepers(2)
            await clock.advance(by: .milliseconds(60))
            await yieldALot()
            #expect(log.all == ["attempt 2 succeeded"])  // the call waits for attempt 1
            #expect(registry.snapshot().entries(.hedge).count == 1)
            await clock.advance(by: .seconds(1))
            #expect(try await call.value == 2)
            #expect(log.all == ["attempt 2 succeeded", "attempt 1 ended", "hedge returned"])
        }
    }
}
