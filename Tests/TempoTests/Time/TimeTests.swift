import Tempo
import TempoTesting
import Testing

@Suite struct TimeReportTests {
    /// Runs `time` around an operation that takes `elapsed` on a manual clock; returns the
    /// reports.
    func report(
        _ label: String?, style: TimeReportStyle, elapsed: Duration, failing: Bool = false
    ) async -> [String] {
        let lines = Log<String>()
        await onManualClock { clock, _ in
            let task = Task {
                try await time(label, style: style, report: { lines.append($0) }) {
                    try await clock.sleep(for: elapsed)
                    if failing { throw Boom(attempt: 2) }
                }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: elapsed)
            _ = await task.result
        }
        return lines.all
    }

    @Test func compactSuccess() async {
        #expect(
            await report("load", style: .compact, elapsed: .microseconds(123))
                == ["[Tempo] load completed in 0.123 ms"])
        #expect(
            await report("load", style: .compact, elapsed: .microseconds(124_300))
                == ["[Tempo] load completed in 124.3 ms"])
        #expect(
            await report("load", style: .compact, elapsed: .milliseconds(2_100))
                == ["[Tempo] load completed in 2.100 s"])
    }

    @Test func compactWithoutLabel() async {
        #expect(
            await report(nil, style: .compact, elapsed: .milliseconds(5))
                == ["[Tempo] completed in 5.0 ms"])
        #expect(
            await report(nil, style: .compact, elapsed: .milliseconds(5), failing: true)
                == ["[Tempo] failed in 5.0 ms: boom 2"])
    }

    @Test func compactFailure() async {
        #expect(
            await report("sync", style: .compact, elapsed: .seconds(3), failing: true)
                == ["[Tempo] sync failed in 3.000 s: boom 2"])
    }

    @Test func verboseSuccessAndFailure() async {
        #expect(
            await report("fetch", style: .verbose, elapsed: .microseconds(182_400))
                == [#"[Tempo] label="fetch" result=success duration="182.4 ms""#])
        #expect(
            await report("fetch", style: .verbose, elapsed: .microseconds(999), failing: true)
                == [#"[Tempo] label="fetch" result=failure duration="0.999 ms" error="boom 2""#])
    }

    @Test func verboseWithoutLabelLeavesTheFieldOut() async {
        #expect(
            await report(nil, style: .verbose, elapsed: .seconds(1))
                == [#"[Tempo] result=success duration="1.000 s""#])
    }

    @Test func syncTimeReportsOnceAndReturnsTheValue() async {
        await onManualClock { _, _ in
            let lines = Log<String>()
            let value = time("sum", report: { lines.append($0) }) { (1...10).reduce(0, +) }
            #expect(value == 55)
            #expect(lines.all == ["[Tempo] sum completed in 0.000 ms"])
        }
    }

    @Test func syncTimeRethrowsTheErrorUnchangedAndReportsIt() async {
        await onManualClock { _, _ in
            let lines = Log<String>()
            #expect(throws: Boom(attempt: 9)) {
                try time("parse", style: .verbose, report: { lines.append($0) }) {
                    throw Boom(attempt: 9)
                }
            }
            #expect(
                lines.all == [
                    #"[Tempo] label="parse" result=failure duration="0.000 ms" error="boom 9""#
                ])
        }
    }

    @Test func voidOperationAndDefaultArgumentsCompile() async throws {
        await onManualClock { _, _ in
            let lines = Log<String>()
            time(report: { lines.append($0) }) {}
            await time(report: { lines.append($0) }) { await Task.yield() }
            #expect(lines.count == 2)
        }
    }

    @Test func explicitClockMeasuresOnIt() async throws {
        let clock = ManualClock()
        let lines = Log<String>()
        let task = Task {
            try await time("io", report: { lines.append($0) }, clock: clock) {
                try await clock.sleep(for: .milliseconds(40))
                return 8
            }
        }
        await clock.waitForSleepers(1)
        await clock.advance(by: .milliseconds(40))
        let value = try await task.value
        #expect(value == 8)
        #expect(lines.all == ["[Tempo] io completed in 40.0 ms"])
    }

    @Test func realClockReportHasTheFormat() async throws {
        // Real clock: checks the wiring to ContinuousClock only.
        let lines = Log<String>()
        time("real", report: { lines.append($0) }, operation: { _ = (1...1_000).reduce(0, +) })
        let line = try #require(lines.all.first)
        #expect(line.hasPrefix("[Tempo] real completed in "))
        #expect(line.hasSuffix(" ms") || line.hasSuffix(" s"))
    }

    @Test func mainActorCallerTimesNonSendableWork() async {
        @MainActor final class Model { var count = 0 }
        let value = await { @MainActor in
            let model = Model()
            let lines = Log<String>()
            await time("main", report: { lines.append($0) }) {
                model.count += 1
                await Task.yield()
                model.count += 1
            }
            return (model.count, lines.count)
        }()
        #expect(value.0 == 2)
        #expect(value.1 == 1)
    }
}

@Suite struct MeasureTests {
    @Test func returnsTheValueAndTheDuration() async throws {
        try await onManualClock { clock, _ in
            let task = Task {
                try await measure {
                    try await clock.sleep(for: .milliseconds(1_250))
                    return "done"
                }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .milliseconds(1_250))
            let (value, duration) = try await task.value
            #expect(value == "done")
            #expect(duration == .milliseconds(1_250))
        }
    }

    @Test func syncMeasureOnAnExplicitClock() {
        let clock = ImmediateClock()
        let (value, duration) = measure(clock: clock) { 3 }
        #expect(value == 3)
        #expect(duration == .zero)
    }

    @Test func measureRethrows() async {
        await #expect(throws: Boom(attempt: 4)) {
            try await measure { () async throws -> Int in throw Boom(attempt: 4) }
        }
    }
}

@Suite struct TimeSnapshotTests {
    @Test func timingShowsWhileLiveAndLeavesWhenDone() async throws {
        try await onManualClock { clock, registry in
            await clock.advance(by: .seconds(4))
            let task = Task {
                try await time(report: { _ in }) {
                    try await clock.sleep(for: .seconds(1))
                }
            }
            await clock.waitForSleepers(1)
            let entries = registry.snapshot().entries(.timing)
            #expect(entries.count == 1)
            #expect(entries.first?.key.hasPrefix("TempoTests/TimeTests.swift:") == true)
            #expect(entries.first?.state == .timing(startedAt: .seconds(4)))
            await clock.advance(by: .seconds(1))
            try await task.value
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func timingLeavesTheSnapshotWhenTheOperationThrowsOrIsCancelled() async {
        await onManualClock { clock, registry in
            #expect(throws: Boom.self) { try time(report: { _ in }) { throw Boom() } }
            #expect(registry.snapshot().isEmpty)
            let task = Task {
                try await time(report: { _ in }) { try await clock.sleep(for: .seconds(1)) }
            }
            await clock.waitForSleepers(1)
            #expect(registry.snapshot().entries(.timing).count == 1)
            task.cancel()
            _ = await task.result
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func syncTimingIsLiveDuringTheOperation() async {
        await onManualClock { _, registry in
            let kinds = time(report: { _ in }) { registry.snapshot().entries.map(\.kind) }
            #expect(kinds == [.timing])
            #expect(registry.liveKeyCount == 0)
        }
    }
}
