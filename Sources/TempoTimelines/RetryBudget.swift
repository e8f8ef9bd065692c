import Synchronization
import Tempo
import TempoTesting

// MARK: - retry with a RetryBudget

/// What one `retry` call of the budget scenario did: its attempts, its waits, and the instant
/// it gave up.
private struct BudgetRun: Sendable {
    var attempts: [(from: Int, to: Int)] = []
    var waits: [(from: Int, to: Int)] = []
    var gaveUp: Int?
}

/// Six calls to a dependency that is down, 300 ms apart, each `retry(3, every: 100 ms)` through
/// one `RetryBudget` of ratio 0.5 and no allowance, on a manual clock. Every attempt takes
/// 100 ms and fails; each call deposits half a retry, so a retry goes ahead every second call.
/// The spans are read from the clock inside the attempts and `onRetry`.
func retryBudgetTimeline() async -> Timeline {
    // The first call starts at 100 ms, not 0, so that it too is released by an advance of the
    // clock (which waits for it to sleep) and not by a task racing the first advance.
    let starts = [100, 400, 700, 1_000, 1_300, 1_600]
    let clock = ManualClock()
    let registry = TempoRegistry(clock: clock)
    let runs = Mutex([BudgetRun](repeating: BudgetRun(), count: starts.count))
    let budget = RetryBudget(identifier: "api", ratio: 0.5, minimumPerSecond: 0)
    let end = 2_000
    await registry.withCurrent {
        // Each call starts at its instant through `execute`, so every advance of the clock
        // waits for the work it released until it sleeps on the clock again or ends.
        let tasks = starts.enumerated().map { index, start in
            execute(with: .milliseconds(start), on: .taskContext) {
                _ = try? await retry(
                    3, backoff: .constant(.milliseconds(100)),
                    onRetry: { _, _, wait in
                        let now = clock.now.offset.milliseconds
                        runs.withLock { $0[index].waits.append((now, now + wait.milliseconds)) }
                    },
                    budget: budget
                ) {
                    let from = clock.now.offset.milliseconds
                    try await clock.sleep(for: .milliseconds(100))
                    let to = clock.now.offset.milliseconds
                    runs.withLock { $0[index].attempts.append((from, to)) }
                    throw BudgetScenarioError()
                }
                runs.withLock { $0[index].gaveUp = clock.now.offset.milliseconds }
            }
        }
        for instant in stride(from: 100, through: end, by: 100) {
            await clock.advance(to: ManualClock.Instant(offset: .milliseconds(instant)))
        }
        for task in tasks { await task.value }
    }
    let done = runs.withLock { $0 }
    let names = ["a", "b", "c", "d", "e", "f"]
    var rows: [Row] = []
    for (index, run) in done.enumerated() {
        var items: [Item] = []
        for (number, attempt) in run.attempts.enumerated() {
            items.append(
                .span(from: attempt.from, to: attempt.to, label: "#\(number + 1)", style: .failure))
        }
        for wait in run.waits {
            items.append(.span(from: wait.from, to: wait.to, label: "", style: .wait))
        }
        if let gaveUp = run.gaveUp {
            items.append(.mark(at: gaveUp, label: "✕", style: .droppedCall))
        }
        items.append(.mark(at: starts[index], label: names[index], style: .call))
        let retries = run.attempts.count - 1
        rows.append(
            Row(
                name: names[index] + (retries == 0 ? " (refused)" : " (1 retry)"),
                items: items))
    }
    return Timeline(
        name: "timeline-retry-budget",
        title: "retry · RetryBudget(ratio: 0.5, minimumPerSecond: 0)",
        subtitle:
            "every attempt fails; each call deposits half a retry, so every second call may retry once",
        tick: 100, labelEvery: 5, end: end, rows: rows,
        legend: [
            (.call, "call"), (.failure, "failed attempt"), (.wait, "wait before a retry"),
            (.droppedCall, "retry refused: the last error is thrown"),
        ])
}

/// The dependency of the scenario is down.
private struct BudgetScenarioError: Error {}
