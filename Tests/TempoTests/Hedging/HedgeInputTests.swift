import Tempo
import TempoTesting
import Testing

@Suite struct HedgeInputTests {
    @Test(arguments: [0, -1, Int.min])
    func aMaxAttemptsOfZeroOrLessThrowsWithoutRunning(maxAttempts: Int) async throws {
        try await onManualClock { _, registry async throws in
            let ran = Flag()
            let error = await #expect(throws: HedgingError.self) {
                try await hedge(maxAttempts: maxAttempts, after: .milliseconds(50)) { _ in
                    ran.set()
                }
            }
            guard case .invalidAttemptCount(let passed)? = error else {
                Issue.record("expected invalidAttemptCount, got \(String(describing: error))")
                return
            }
            #expect(passed == maxAttempts)
            #expect(error?.errors.isEmpty == true)
            #expect(!ran.isSet)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test(arguments: [1_001, Int.max])
    func aMaxAttemptsAboveAThousandThrowsWithoutRunning(maxAttempts: Int) async throws {
        try await onManualClock { _, registry async throws in
            let ran = Flag()
            // With no delay every attempt would start at once: Int.max tasks.
            let error = await #expect(throws: HedgingError.self) {
                try await hedge(maxAttempts: maxAttempts, after: .zero) { _ in ran.set() }
            }
            guard case .invalidAttemptCount(let passed)? = error else {
                Issue.record("expected invalidAttemptCount, got \(String(describing: error))")
                return
            }
            #expect(passed == maxAttempts)
            #expect(!ran.isSet)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func aThousandAttemptsAtOnceAreAllowed() async throws {
        try await onManualClock { _, _ async throws in
            let started = Log<Int>()
            let winner = try await hedge(maxAttempts: 1_000, after: .zero) { attempt in
                started.append(attempt)
                return attempt
            }
            #expect((1...1_000).contains(winner))
            #expect(started.count <= 1_000)
        }
    }

    @Test(arguments: [Duration.zero, .milliseconds(-5), .seconds(Int64.min)])
    func aDelayOfZeroOrLessStartsEveryAttemptAtOnce(delay: Duration) async throws {
        try await onManualClock { clock, registry async throws in
            let log = Log<AttemptEvent>()
            let scripts = [
                AttemptScript(duration: .milliseconds(30), succeeds: true),
                AttemptScript(duration: .milliseconds(10), succeeds: true),
                AttemptScript(duration: .milliseconds(20), succeeds: true),
            ]
            let call = Task {
                try await hedge(maxAttempts: 3, after: delay) {
                    try await scriptedAttempts(clock, log, scripts)($0)
                }
            }
            // Three attempts asleep, no timer. Polled with a limit rather than awaited with
            // `waitForSleepers(3)`, which would wait for ever if fewer attempts started.
            guard await eventually(within: .seconds(10), { clock.sleeperCount >= 3 }) else {
                Issue.record("three attempts did not start at once: \(starts(log))")
                call.cancel()
                return
            }
            #expect(starts(log) == [1: .zero, 2: .zero, 3: .zero])
            #expect(
                registry.snapshot().hedgeState
                    == .hedge(attemptsStarted: 3, inFlight: 3, nextHedgeAt: nil))
            await clock.advance(by: .milliseconds(10))
            #expect(try await call.value == 2)
        }
    }

    @Test func theLargestDelayHedgesOnlyAfterAFailure() async throws {
        try await onManualClock { clock, registry async throws in
            let log = Log<AttemptEvent>()
            let scripts = [
                AttemptScript(duration: .seconds(3_600 * 24 * 365), succeeds: false),
                AttemptScript(duration: .seconds(1), succeeds: true),
            ]
            let call = Task {
                try await hedge(maxAttempts: 2, after: .seconds(Int64.max)) {
                    try await scriptedAttempts(clock, log, scripts)($0)
                }
            }
            await clock.waitForSleepers(2)
            if case .hedge(_, _, let next?)? = registry.snapshot().hedgeState {
                #expect(next > .seconds(Int64.max / 2))  // saturated, not wrapped around
            } else {
                Issue.record("expected a next hedge instant")
            }
            await clock.advance(by: .seconds(3_600 * 24 * 365))
            #expect(starts(log)[2] == .seconds(3_600 * 24 * 365))
            await clock.advance(by: .seconds(1))
            #expect(try await call.value == 2)
        }
    }

    @Test func oneAttemptRunsTheOperationOnceAndWrapsItsError() async throws {
        try await onManualClock { clock, _ async throws in
            let log = Log<AttemptEvent>()
            let failing = AttemptScript(duration: .milliseconds(10), succeeds: false)
            let call = Task {
                try await hedge(maxAttempts: 1, after: .milliseconds(5)) {
                    try await scriptedAttempts(clock, log, [failing])($0)
                }
            }
            await clock.waitForSleepers(1)  // attempt 1 only: no hedge is left to arm
            await clock.advance(by: .milliseconds(10))
            let error = await #expect(throws: HedgingError.self) { try await call.value }
            #expect(error?.errors.map { $0 as? Boom } == [Boom(attempt: 1)])
            #expect(starts(log) == [1: .zero])
        }
    }

    @Test func anAttemptThatThrowsCancellationErrorByItselfCountsAsAFailure() async throws {
        try await onManualClock { clock, _ async throws in
            let call = Task {
                try await hedge(maxAttempts: 2, after: .seconds(1)) { attempt -> Int in
                    if attempt == 1 { throw CancellationError() }
                    try await clock.sleep(for: .milliseconds(10))
                    return attempt
                }
            }
            await clock.waitForSleepers(1)  // attempt 2, started at once; no hedge is left
            await clock.advance(by: .milliseconds(10))
            #expect(try await call.value == 2)
        }
    }

    @Test func theSnapshotNamesTheCallByIdentifierAndDescribesIt() async throws {
        try await onManualClock { clock, registry async throws in
            let call = Task {
                try await hedge(maxAttempts: 2, after: .milliseconds(50), identifier: "replicas") {
                    _ in try await clock.sleep(for: .seconds(1))
                }
            }
            await clock.waitForSleepers(2)
            let snapshot = registry.snapshot()
            #expect(snapshot.entries(.hedge).map(\.key) == ["replicas"])
            #expect(
                snapshot.description
                    == "hedge  replicas  1 attempts started, 1 in flight, next hedge at"
                    + " 50.0 ms (in 50.0 ms)")
            call.cancel()
            await #expect(throws: CancellationError.self) { try await call.value }
        }
    }
}
