import Synchronization
import Tempo
import TempoTesting

// MARK: - hedge

/// What happened to one attempt of the hedging scenario, in milliseconds.
private struct AttemptRun: Sendable {
    var start: Int
    var end: Int?
    var outcome: String?
}

/// One hedged call on a manual clock, at most 3 attempts, 100 ms apart: attempt 1 is slow
/// (600 ms), attempt 2 fails after 150 ms and so starts attempt 3 at once, which succeeds after
/// 150 ms; attempt 1 is then cancelled. Every start, end and outcome is read from the clock in
/// the attempts.
func hedgeTimeline() async -> Timeline {
    let durations = [600, 150, 150]
    let clock = ManualClock()
    let registry = TempoRegistry(clock: clock)
    let runs = Mutex<[Int: AttemptRun]>([:])
    let call = Task {
        try await registry.withCurrent {
            try await hedge(maxAttempts: 3, after: .milliseconds(100)) { attempt in
                let start = clock.now.offset.milliseconds
                runs.withLock { $0[attempt] = AttemptRun(start: start) }
                func ended(_ outcome: String) {
                    let end = clock.now.offset.milliseconds
                    runs.withLock { $0[attempt]?.end = end }
                    runs.withLock { $0[attempt]?.outcome = outcome }
                }
                do {
                    try await clock.sleep(for: .milliseconds(durations[attempt - 1]))
                } catch {
                    ended("cancelled")
                    throw error
                }
                if attempt == 2 {
                    ended("fails")
                    throw Unavailable()
                }
                ended("succeeds")
                return attempt
            }
        }
    }
    await clock.waitForSleepers(2)  // the hedge timer and attempt 1
    let end = 700
    await clock.advance(to: ManualClock.Instant(offset: .milliseconds(end)))
    let winner = (try? await call.value) ?? 0
    let done = runs.withLock { $0 }
    let returned = done.values.compactMap(\.end).max() ?? end
    var rows: [Row] = []
    for attempt in done.keys.sorted() {
        let run = done[attempt]!
        let finish = run.end ?? end
        var items: [Item] = [
            .span(
                from: run.start, to: finish, label: run.outcome ?? "runs",
                style: run.outcome == "fails" ? .failure : .work),
            .mark(at: run.start, label: "\(attempt)", style: .call),
        ]
        if run.outcome == "cancelled" {
            items.append(.mark(at: finish, label: "×", style: .droppedCall))
        }
        rows.append(Row(name: "attempt \(attempt)", items: items))
    }
    rows.append(
        Row(
            name: "hedge",
            items: [
                .span(from: 0, to: returned, label: "waits for a success", style: .pending),
                .mark(at: returned, label: "\(winner)", style: .run),
            ]))
    return Timeline(
        name: "timeline-hedge",
        title: "hedge · maxAttempts 3, after 100 ms",
        subtitle:
            "attempt 2 starts at 100 ms; its failure starts 3 at once; 3 wins, 1 is cancelled",
        tick: 50, labelEvery: 2, end: end, rows: rows,
        legend: [
            (.call, "attempt starts"), (.work, "attempt running"), (.failure, "attempt failed"),
            (.droppedCall, "cancelled"), (.pending, "the call waits"), (.run, "returns"),
        ])
}
