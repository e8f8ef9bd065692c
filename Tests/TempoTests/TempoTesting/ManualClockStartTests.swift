import Synchronization
import Tempo
import TempoTesting
import Testing

/// `ManualClock.start`: a test makes a call of an `async` entry point and knows it has been
/// applied; the task is then work of the clock; a task that cannot finish while the clock
/// stands still fails fast, saying what is pending.

/// A search view model as a user writes one: each keystroke awaits a latest-wins debounced
/// search and publishes what it returns.
@MainActor private final class TypingModel {
    private let searcher = Debouncer(.milliseconds(300))
    private(set) var results: [String] = []
    /// What the back end was asked, in order.
    let searches = Log<String>()
    private let backend: @Sendable (String) async throws -> [String]

    init(backend: @escaping @Sendable (String) async throws -> [String]) {
        self.backend = backend
    }

    func queryChanged(_ query: String) async {
        do {
            results = try await searcher.result(latestWins: true) { [backend, searches] in
                searches.append(query)
                return try await backend(query)
            }
        } catch is DiscardedCall {
            // A newer keystroke took over: its caller publishes.
        } catch {
            results = []
        }
    }
}

/// A server-style function, off every actor: waits for a debounced batch flush.
private func flushBatch(_ item: Int, into log: Log<Int>) async throws -> Int {
    try await debounceResult(.seconds(1), identifier: "batch", by: .taskContext) {
        log.append(item)
        return item
    }
}

@Suite struct ManualClockStartTests {
    /// The obvious test of an `async` view model, written with `start`: every round passes.
    @MainActor @Test func typingThreeKeystrokesSearchesOnceForTheLast() async throws {
        for _ in 0..<100 {
            let clock = ManualClock()
            try await TempoRegistry(clock: clock).withCurrent {
                let model = TypingModel { query in [query + "!"] }
                var keystrokes: [ManualClock.Started<Void>] = []
                for query in ["s", "sw", "swi"] {
                    keystrokes.append(await clock.start { await model.queryChanged(query) })
                }
                #expect(model.searches.all.isEmpty)
                await clock.advance(by: .milliseconds(300))
                #expect(model.searches.all == ["swi"])
                #expect(model.results == ["swi!"])
                for keystroke in keystrokes { try await keystroke.value() }
            }
        }
    }

    /// Without `start`, a task may not have made its call when the clock moves: the call is
    /// stamped late. `start` returns only once the call has been applied, also for a caller off
    /// every actor, so its deadline is the one the test meant.
    @Test func aCallOffEveryActorIsAppliedWhenStartReturns() async throws {
        for _ in 0..<200 {
            let clock = ManualClock()
            let log = Log<Int>()
            try await TempoRegistry(clock: clock).withCurrent {
                let first = await clock.start { try await flushBatch(1, into: log) }
                await clock.advance(by: .milliseconds(500))
                let second = await clock.start { try await flushBatch(2, into: log) }
                // The second call was made at 500 ms: its batch flushes at 1.5 s, not before.
                await clock.advance(by: .milliseconds(999))
                #expect(log.all.isEmpty)
                await clock.advance(by: .milliseconds(1))
                #expect(log.all == [2])
                await #expect(throws: DiscardedCall.notRun) { try await first.value() }
                let flushed = try await second.value()
                #expect(flushed == 2)
            }
        }
    }

    /// A started task is work of the clock: an advance waits for what it does after its wait
    /// ends, on whatever executor it runs.
    @Test func anAdvanceWaitsForWhatAStartedTaskDoesNext() async throws {
        for _ in 0..<200 {
            let clock = ManualClock()
            let seen = Log<String>()
            try await TempoRegistry(clock: clock).withCurrent {
                let holder = await clock.start {
                    try await concurrencyLimit(1, identifier: "db") {
                        try await clock.sleep(for: .seconds(10))
                    }
                }
                let waiter = await clock.start {
                    do {
                        try await concurrencyLimit(1, queueTimeout: .seconds(1), identifier: "db") {
                        }
                    } catch {
                        seen.append("\(error)")
                    }
                }
                await clock.advance(by: .seconds(1))
                #expect(seen.all.count == 1, "the timed-out caller has handled its error")
                try await waiter.value()
                await clock.advance(by: .seconds(9))
                try await holder.value()
            }
        }
    }

    /// What a started task does off the clock after its sleep ends is done when the advance that
    /// woke it returns.
    @Test func anAdvanceWaitsForOffClockWorkAfterAStartedTasksSleep() async throws {
        for _ in 0..<50 {
            let clock = ManualClock()
            let seen = Log<String>()
            let sleeper = await clock.start {
                try await clock.sleep(for: .seconds(1))
                for _ in 0..<50 { await Task.yield() }
                seen.append("done")
            }
            #expect(seen.all.isEmpty)
            await clock.advance(by: .seconds(1))
            #expect(seen.all == ["done"])
            try await sleeper.value()
        }
    }

    /// What "at once" means, as TestingWithManualClock.md and Debounce.md say: on the main
    /// actor, its next turn; with `.taskContext`, a synchronous operation runs inside the call.
    @MainActor @Test func atOnceIsTheMainActorsNextTurnAndInsideTheCallOnTaskContext() async {
        let clock = ManualClock()
        await TempoRegistry(clock: clock).withCurrent {
            let runs = Log<String>()
            debounce(.seconds(1), option: .leading) { runs.append("main") }
            throttle(.seconds(1)) { runs.append("main throttle") }
            debounce(.zero) { runs.append("main zero") }
            #expect(runs.all.isEmpty, "queued on the main actor, not run before the calls return")
            debounce(.seconds(1), by: .taskContext, option: .leading) { runs.append("inline") }
            #expect(runs.all == ["inline"])
            await clock.advance(by: .zero)
            #expect(runs.all == ["inline", "main", "main throttle", "main zero"])
        }
    }

    @Test func aTaskThatFinishesAtOnceIsReturnedFinished() async throws {
        let clock = ManualClock()
        let started = await clock.start { 42 }
        #expect(try await started.value() == 42)
        let failing = await clock.start { () async throws -> Int in throw Boom(attempt: 1) }
        await #expect(throws: Boom(attempt: 1)) { try await failing.value() }
    }

    /// The hang a newcomer meets: awaiting a keystroke whose search only an advance can bring.
    /// It fails in the time limit, and says what is pending.
    @Test func awaitingATaskTheClockMustMoveForFailsFastWithWhatIsPending() async throws {
        let clock = ManualClock()
        try await TempoRegistry(clock: clock).withCurrent {
            let model = await TypingModel { query in [query] }
            let keystroke = await clock.start { await model.queryChanged("swift") }
            let reported = Log<String>()
            // Bounded itself: a broken time limit fails here in seconds instead of hanging.
            let gaveUp = await finishes(within: .seconds(10)) {
                do {
                    try await keystroke.value(timeLimit: .milliseconds(200))
                } catch {
                    reported.append((error as? ManualClock.Stuck)?.description ?? "\(error)")
                }
            }
            #expect(gaveUp, "value(timeLimit:) gave up within its limit")
            let report = reported.all.first ?? ""
            #expect(report.contains("has not finished after"))
            #expect(report.contains("The clock reads 0.0 seconds."))
            #expect(report.contains("1 timer or sleeper waits; the next is due at 0.3 seconds"))
            #expect(report.contains("debounce"))
            #expect(report.contains("runs at 300.0 ms"))
            // Advancing lets it finish after all.
            await clock.advance(by: .milliseconds(300))
            try await keystroke.value()
            #expect(await model.results == ["swift"])
        }
    }

    /// A limit shorter than the default (5 s) is the one kept: a real-clock test, measured
    /// once the rest of the run is quiet (a parallel run can starve the waiting task for
    /// seconds), with seconds to spare. A wait that ignored its limit would take 5 s at least.
    @Test func realClockAStuckWaitGivesUpAtItsOwnLimitNotTheDefault() async {
        await measuredAlone {
            let clock = ManualClock()
            let sleeper = await clock.start { try await clock.sleep(for: .seconds(1)) }
            let wall = ContinuousClock()
            let started = wall.now
            await #expect(throws: ManualClock.Stuck.self) {
                try await sleeper.value(timeLimit: .milliseconds(200))
            }
            let waited = wall.now - started
            #expect(waited >= .milliseconds(200))
            #expect(waited < .seconds(3), "gave up after \(waited), not at its 200 ms limit")
            sleeper.cancel()
        }
    }

    /// Cancelling the task that awaits `value` cancels the started task with it: the sleep it
    /// was in throws, and nothing is left on the clock.
    @Test func cancellingTheWaitForAValueCancelsTheStartedTask() async {
        let clock = ManualClock()
        let sleeper = await clock.start { try await clock.sleep(for: .seconds(100)) }
        #expect(clock.sleeperCount == 1)
        let waiter = Task { try await sleeper.value() }
        waiter.cancel()
        #expect(await waiter.result.isCancellation)
        #expect(await finishes { _ = await sleeper.task.result })
        #expect(await sleeper.task.result.isCancellation)
        #expect(await eventually { clock.sleeperCount == 0 })
    }

    /// The time limit counts only while the clock stands still: a real-clock test, with room
    /// for a loaded machine (the clock moves every 10 ms, the limit is a second).
    @Test func realClockTheTimeLimitCountsOnlyWhileTheClockStandsStill() async throws {
        // Measured once the rest of the run is quiet: a mover task starved for a second by a
        // parallel run would leave the clock still.
        try await measuredAlone {
            let clock = ManualClock()
            let sleeper = await clock.start { try await clock.sleep(for: .seconds(1)) }
            let wall = ContinuousClock()
            let started = wall.now
            let mover = Task {
                // Three limits of real time in all, a millisecond of the clock every 10 ms.
                while wall.now - started < .seconds(3) {
                    try await Task.sleep(for: .milliseconds(10))
                    await clock.advance(by: .milliseconds(1))
                }
                await clock.advance(by: .seconds(1))
            }
            let outcome = Log<String>()
            let done = await finishes(within: .seconds(10)) {
                do {
                    try await sleeper.value(timeLimit: .seconds(1))
                    outcome.append("value")
                } catch {
                    outcome.append("\(error)")
                }
            }
            #expect(done)
            #expect(outcome.all == ["value"])
            #expect(wall.now - started >= .seconds(3), "the wait outlasted its limit, three times")
            try await mover.value
        }
    }
}

extension Result {
    /// Whether this is a failure with `CancellationError`.
    fileprivate var isCancellation: Bool {
        if case .failure(let error) = self { return error is CancellationError }
        return false
    }
}
