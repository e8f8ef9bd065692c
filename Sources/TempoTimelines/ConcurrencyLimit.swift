import Synchronization
import Tempo
import TempoTesting

// MARK: - concurrencyLimit

/// One call of the concurrency-limit scenario: when it is made, how long its operation takes,
/// and its queue timeout.
private struct LimitCall: Sendable {
    var name: String
    var at: Int
    var work: Int
    var queueTimeout: Int?
}

/// What one call did in the run.
private struct LimitRun: Sendable {
    var start: Int?
    var end: Int?
    var error: ConcurrencyLimitError?
}

/// Limit 2, queue 2: calls a to f run through one identifier on a manual clock, each made at its
/// instant once the previous ones have entered the limit. Starts and ends are read from the
/// clock inside the operations; how each call ended is what it threw.
func concurrencyLimitTimeline() async -> Timeline {
    let calls = [
        LimitCall(name: "a", at: 0, work: 1_000),
        LimitCall(name: "b", at: 0, work: 1_500),
        LimitCall(name: "c", at: 250, work: 1_000),
        LimitCall(name: "d", at: 500, work: 500, queueTimeout: 750),
        LimitCall(name: "e", at: 750, work: 500),
        LimitCall(name: "f", at: 1_250, work: 750),
    ]
    let clock = ManualClock()
    let registry = TempoRegistry(clock: clock)
    let runs = LimitRuns(count: calls.count)
    let end = 2_500
    await registry.withCurrent {
        var tasks: [Task<Void, Never>] = []
        for instant in stride(from: 0, to: end, by: 250) {
            await clock.advance(to: ManualClock.Instant(offset: .milliseconds(instant)))
            for (index, call) in calls.enumerated() where call.at == instant {
                let before = limitCount(registry)
                tasks.append(
                    Task {
                        do {
                            try await concurrencyLimit(
                                2, queue: 2,
                                queueTimeout: call.queueTimeout.map { .milliseconds($0) },
                                identifier: "api"
                            ) {
                                runs.withLock { $0[index].start = clock.now.offset.milliseconds }
                                try await clock.sleep(for: .milliseconds(call.work))
                                runs.withLock { $0[index].end = clock.now.offset.milliseconds }
                            }
                        } catch {
                            runs.withLock { $0[index].error = error as? ConcurrencyLimitError }
                        }
                    })
                // The call has entered once the key counts it, or it was turned away.
                while limitCount(registry) == before, runs.withLock({ $0[index].error == nil }) {
                    await Task.yield()
                }
            }
        }
        await clock.advance(to: ManualClock.Instant(offset: .milliseconds(end)))
        for task in tasks { await task.value }
    }
    let done = runs.withLock { $0 }
    var rows: [Row] = []
    for (call, run) in zip(calls, done) {
        var items: [Item] = []
        let ran = run.start != nil
        if let start = run.start, let finish = run.end {
            if start > call.at {
                items.append(.span(from: call.at, to: start, label: "waits", style: .pending))
            }
            items.append(.span(from: start, to: finish, label: "runs", style: .work))
        } else if case .queueTimedOut? = run.error, let timeout = call.queueTimeout {
            // It waited its whole queue timeout: the error says so.
            items.append(
                .span(from: call.at, to: call.at + timeout, label: "times out", style: .failure))
        }
        items.append(.mark(at: call.at, label: call.name, style: ran ? .call : .droppedCall))
        let note =
            switch run.error {
            case .queueFull?: " (queue full)"
            case .queueTimedOut?: " (timeout \(SVG.timeLabel(call.queueTimeout ?? 0)))"
            default: ""
            }
        rows.append(Row(name: call.name + note, items: items))
    }
    return Timeline(
        name: "timeline-concurrencylimit",
        title: "concurrencyLimit · 2 at once, 2 waiting",
        subtitle:
            "a and b run; c and d wait in order; e finds the queue full; d gives up; f waits for b",
        tick: 250, labelEvery: 2, end: end, rows: rows,
        legend: [
            (.call, "call"), (.droppedCall, "call that never ran"), (.pending, "waiting"),
            (.work, "running"), (.failure, "waited its queue timeout"),
        ])
}

/// What every call did, shared with the calls' tasks.
private final class LimitRuns: Sendable {
    private let runs: Mutex<[LimitRun]>
    init(count: Int) { runs = Mutex(Array(repeating: LimitRun(), count: count)) }
    func withLock<R>(_ body: (inout [LimitRun]) -> R) -> R { runs.withLock { body(&$0) } }
}

/// Running plus waiting calls of the scenario's key.
private func limitCount(_ registry: TempoRegistry) -> Int {
    for entry in registry.snapshot().entries where entry.kind == .concurrencyLimit {
        if case .concurrencyLimit(let running, let queued) = entry.state { return running + queued }
    }
    return 0
}
