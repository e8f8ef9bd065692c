import Tempo
import TempoTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The random schedules of `ModelCheckTests`, made through the awaited forms (`debounceResult`,
// `throttleResult`, `Debouncer.result`, `Throttler.result`), each operation running for a few
// ticks on the clock, with and without latest wins. Checked: the runs are the reference
// model's; every caller is settled; each caller gets what `expectedOutcomes` says (its own
// value, never another call's); and with latest wins no run hands over its value once a newer
// run of its group has started.
//
// Run one seed alone: `TEMPO_MODEL_SEED=1234 swift test --filter AwaitedModelCheck`.

/// A counter that orders events across tasks.
private final class Sequence: Sendable {
    private let value = Lock(0)
    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}

/// What one run did: when it started, and when its operation returned (nil: it did not).
private struct RunEvents: Sendable {
    var op: Int
    var time: Int
    var started: Int
    var ended: Int?
}

private func ticks(_ duration: Duration) -> Int { Int(duration / .milliseconds(1)) }

/// How long operation `op` of schedule `seed` runs, in ticks: 0 to 4.
private func runLength(_ op: Int, _ seed: UInt64) -> Int {
    var random = SplitMix64(seed: seed &+ UInt64(op) &* 0x9E37)
    return Int(random.next() % 5)
}

@MainActor
private func runAwaited(_ schedule: Schedule, scoped: Bool, latestWins: Bool) async -> (
    runs: [[RunEvents]], outcomes: [[(op: Int, outcome: Outcome<Int>)]]
) {
    let clock = ManualClock()
    let registry = TempoRegistry(clock: clock)
    return await registry.withCurrent {
        let order = Sequence()
        let logs = schedule.groups.map { _ in Log<RunEvents>() }
        let endLogs = schedule.groups.map { _ in Log<(op: Int, ended: Int)>() }
        let debouncers = schedule.groups.map { spec -> Debouncer? in
            guard scoped, case .debounce(let option, let maxWait) = spec.mode else { return nil }
            return Debouncer(
                .milliseconds(spec.duration), by: .taskContext, option: option,
                maxWait: maxWait.map { .milliseconds($0) })
        }
        let throttlers = schedule.groups.map { spec -> Throttler? in
            guard scoped, case .throttle(let option) = spec.mode else { return nil }
            return Throttler(.milliseconds(spec.duration), by: .taskContext, option: option)
        }
        var callers: [[(op: Int, task: Task<Int, any Error>)]] = schedule.groups.map { _ in [] }
        for action in schedule.actions {
            switch action {
            case .call(let index, let op):
                let spec = schedule.groups[index]
                let log = logs[index]
                let length = runLength(op, schedule.seed)
                let ends = endLogs[index]
                let operation: @Sendable () async throws -> Int = {
                    log.append(RunEvents(op: op, time: ticks(registry.now), started: order.next()))
                    if length > 0 { try await clock.sleep(for: .milliseconds(length)) }
                    ends.append((op, order.next()))
                    return op
                }
                let duration = Duration.milliseconds(spec.duration)
                let task: Task<Int, any Error>
                switch spec.mode {
                case .debounce(let option, let maxWait):
                    if let debouncer = debouncers[index] {
                        task = await started {
                            try await debouncer.result(latestWins: latestWins) {
                                try await operation()
                            }
                        }
                    } else {
                        task = await started {
                            try await debounceResult(
                                duration, identifier: spec.name, by: .taskContext,
                                option: option, maxWait: maxWait.map { .milliseconds($0) },
                                latestWins: latestWins
                            ) { try await operation() }
                        }
                    }
                case .throttle(let option):
                    if let throttler = throttlers[index] {
                        task = await started {
                            try await throttler.result(latestWins: latestWins) {
                                try await operation()
                            }
                        }
                    } else {
                        task = await started {
                            try await throttleResult(
                                duration, identifier: spec.name, by: .taskContext,
                                option: option, latestWins: latestWins
                            ) { try await operation() }
                        }
                    }
                }
                callers[index].append((op, task))
            case .advance(let ticks): await clock.advance(by: .milliseconds(ticks))
            case .flush(let index):
                if let debouncer = debouncers[index] {
                    debouncer.flush()
                } else if let throttler = throttlers[index] {
                    throttler.flush()
                } else if case .debounce = schedule.groups[index].mode {
                    flushDebounce(identifier: schedule.groups[index].name)
                } else {
                    flushThrottle(identifier: schedule.groups[index].name)
                }
            case .cancel(let index):
                if let debouncer = debouncers[index] {
                    debouncer.cancel()
                } else if let throttler = throttlers[index] {
                    throttler.cancel()
                } else if case .debounce = schedule.groups[index].mode {
                    cancelDebounce(identifier: schedule.groups[index].name)
                } else {
                    cancelThrottle(identifier: schedule.groups[index].name)
                }
            case .cancelAll: registry.cancelAll()
            }
        }
        // Every caller is settled: an unsettled one hangs here, and the time limit fails it.
        var outcomes: [[(op: Int, outcome: Outcome<Int>)]] = []
        for group in callers {
            var settled: [(op: Int, outcome: Outcome<Int>)] = []
            for (op, task) in group { settled.append((op, await Outcome(task))) }
            outcomes.append(settled)
        }
        let runs = zip(logs, endLogs).map { log, ends in
            log.all.map { run in
                var run = run
                run.ended = ends.all.first { $0.op == run.op }?.ended
                return run
            }
        }
        return (runs, outcomes)
    }
}

@MainActor @Suite(.timeLimit(.minutes(10))) struct AwaitedModelCheckTests {
    @Test func awaitedCallersAreSettledAsTheReferenceModelSays() async {
        var failures = 0
        var configurations: [String: Int] = [:]
        for seed in ModelCheckTests.seeds(2_000, offset: 0x5E5) {
            let schedule = Schedule(seed: seed)
            let scoped = seed % 2 == 1
            let latestWins = (seed / 2) % 2 == 1
            configurations["scoped \(scoped) latestWins \(latestWins)", default: 0] += 1
            var model = runModel(schedule)
            model.sortRunsWithinInstants()
            let engine = await runAwaited(schedule, scoped: scoped, latestWins: latestWins)
            var problems: [String] = []
            for index in schedule.groups.indices {
                // The runs: the same calls at the same instants (within an instant, in any
                // order: each run is a task of its own).
                let ran = engine.runs[index].map { Trace.Run(time: $0.time, op: $0.op) }
                    .sorted { ($0.time, $0.op) < ($1.time, $1.op) }
                if latestWins {
                    // A run overtaken before its operation started does not run it: only a run
                    // released at the same instant as a newer one of its group can be.
                    let missing = model.runs[index].filter { !ran.contains($0) }
                    let admitted = missing.allSatisfy { run in
                        model.runs[index].contains { $0.op != run.op && $0.time == run.time }
                            && engine.outcomes[index].contains {
                                $0.op == run.op && $0.outcome == .overtaken
                            }
                    }
                    if !ran.allSatisfy(model.runs[index].contains) || !admitted {
                        problems.append("#\(index) runs model \(model.runs[index]) engine \(ran)")
                    }
                } else if ran != model.runs[index] {
                    problems.append("#\(index) runs model \(model.runs[index]) engine \(ran)")
                }
                let expected = expectedOutcomes(
                    ops: engine.outcomes[index].map(\.op), runs: model.runs[index],
                    length: { runLength($0, seed) }, latestWins: latestWins)
                for (op, outcome) in engine.outcomes[index]
                where !expected[op]!.admits(outcome, op: op) {
                    problems.append("#\(index) op\(op): expected \(expected[op]!), got \(outcome)")
                }
                guard latestWins else { continue }
                // No run ended, and handed over its value, after a newer run had started.
                let runs = engine.runs[index]
                for run in runs {
                    guard let ended = run.ended,
                        engine.outcomes[index].contains(where: {
                            $0.op == run.op && $0.outcome == .value(run.op)
                        })
                    else { continue }
                    // Within one instant, the order in which runs were released is not the
                    // order their operations started: a run released first, and overtaken, may
                    // start its operation after a newer one did. Such a run is not newer.
                    if let newer = runs.first(where: { other in
                        other.started > run.started && other.started < ended
                            && !(other.time == run.time
                                && engine.outcomes[index].contains {
                                    $0.op == other.op && $0.outcome == .overtaken
                                })
                    }) {
                        problems.append("#\(index) op\(run.op) delivered after op\(newer.op) began")
                    }
                }
            }
            if !problems.isEmpty {
                failures += 1
                Issue.record(
                    Comment(
                        rawValue: "\(schedule), scoped \(scoped), latestWins \(latestWins):\n"
                            + problems.joined(separator: "\n")
                            + "\nReplay: TEMPO_MODEL_SEED=\(seed) swift test --filter AwaitedModelCheck"
                    ))
                if failures >= 3 { break }
            }
        }
        if getenv("TEMPO_MODEL_SEED") == nil {
            #expect(configurations.count == 4 && configurations.values.allSatisfy { $0 >= 400 })
        }
    }
}
