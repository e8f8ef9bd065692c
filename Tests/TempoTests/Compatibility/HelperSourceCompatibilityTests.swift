import Tempo
import TempoTesting
import Testing

/// Calls written the way Throttler 3.0.1 code writes them (MigratingFromThrottler.md): they must compile
/// unchanged and behave as the contract says.
@Suite struct HelperSourceCompatibilityTests {
    @Test func throttlerStyleCallsCompileAndBehave() async throws {
        try await onManualClock { clock, _ in
            let op: @Sendable () async throws -> Int = { 42 }
            let retried = try await retry(3, every: .milliseconds(300), operation: op)
            #expect(retried == 42)
            let defaults = try await retry { "default" }
            #expect(defaults == "default")

            let timed = try await timeout(.seconds(1), operation: op)
            #expect(timed == 42)

            let lines = Log<String>()
            let report: @Sendable (String) -> Void = { lines.append($0) }
            let sync = time("sync", style: .compact, report: report) { 1 + 1 }
            let async = try await time("async", style: .verbose, report: report, operation: op)
            time { () }
            #expect(sync == 2)
            #expect(async == 42)
            #expect(lines.count == 2)

            let errors = Log<String>()
            let task: Task<Void, Never> = `repeat`(
                every: .seconds(1), times: 2, startingImmediately: true, by: .taskContext,
                onError: { errors.append("\($0)") }
            ) {}
            await clock.advance(by: .seconds(1))
            await task.value
            #expect(errors.all.isEmpty)
            `repeat` {}.cancel()
        }
    }

    @Test func publicTypesAreSendableAndTheErrorsEquatable() {
        func sendable<T: Sendable>(_: T.Type) {}
        sendable(TimeoutError.self)
        sendable(RetryError.self)
        sendable(TimeReportStyle.self)
        sendable(RepeatMode.self)
        sendable(RetryBackoff.self)
        sendable(RetryJitter.self)
        #expect(TimeoutError.timedOut(.seconds(1)) == .timedOut(.seconds(1)))
        #expect(TimeoutError.timedOut(.seconds(1)) != .timedOut(.seconds(2)))
        #expect(RetryError.invalidAttemptCount(0) == .invalidAttemptCount(0))
        #expect(RetryError.invalidAttemptCount(0) != .invalidAttemptCount(-1))
        #expect(TimeReportStyle.compact != .verbose)
    }
}
