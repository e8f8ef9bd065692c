import Synchronization
import Tempo
import TempoTesting

/// What a `repeat` or `retry` run did: spans of work and of waiting, in milliseconds.
final class SpanLog: Sendable {
    struct Span: Sendable {
        var from: Int
        var to: Int
        var label: String
        var failed: Bool
    }

    private let state = Mutex<(runs: [Span], waits: [Span], finished: Bool)>(([], [], false))

    func run(_ span: Span) { state.withLock { $0.runs.append(span) } }
    func wait(_ span: Span) { state.withLock { $0.waits.append(span) } }
    func finish() { state.withLock { $0.finished = true } }

    var runs: [Span] { state.withLock { $0.runs } }
    var waits: [Span] { state.withLock { $0.waits } }
    var finished: Bool { state.withLock { $0.finished } }
}

/// Moves `clock` one `step` at a time, each time once the work is asleep on it again, until
/// `log` says the work is over. Every deadline of these scenarios is a multiple of `step`, so
/// each one is reached exactly and the work reads the clock at its own deadline.
func drive(_ clock: ManualClock, step: Duration, until log: SpanLog) async {
    while !log.finished {
        await clock.waitForSleepers(1)
        if log.finished { break }
        await clock.advance(by: step)
    }
}

/// An error for the attempts that fail.
struct Unavailable: Error {}

// MARK: - repeat

/// How long each iteration of the repeat scenarios takes: the third overruns the interval.
private let iterationTimes: [Duration] = [
    .milliseconds(300), .milliseconds(300), .milliseconds(1_400), .milliseconds(300),
    .milliseconds(300),
]

func repeatTimeline(_ mode: RepeatMode) async -> Timeline {
    let clock = ManualClock()
    let log = SpanLog()
    let interval = Duration.seconds(1)
    let count = Mutex(0)
    let loop = `repeat`(
        every: interval, mode: mode, times: iterationTimes.count, by: .taskContext, clock: clock
    ) {
        let index = count.withLock { value -> Int in
            defer { value += 1 }
            return value
        }
        let start = clock.now.offset.milliseconds
        try await clock.sleep(for: iterationTimes[index])
        log.run(
            .init(
                from: start, to: clock.now.offset.milliseconds, label: "#\(index + 1)",
                failed: false))
    }
    let parker = Task {
        await loop.value
        log.finish()
        try? await clock.sleep(for: .seconds(86_400))  // asleep, so `drive` sees the end
    }
    await drive(clock, step: .milliseconds(100), until: log)
    parker.cancel()
    _ = await parker.result

    let runs = log.runs
    var waits: [Item] = []
    var dueMarks: [Item] = []
    var previousEnd = 0
    for (index, run) in runs.enumerated() {
        waits.append(
            .span(
                from: previousEnd, to: run.from, label: SVG.timeLabel(run.from - previousEnd),
                style: .wait))
        dueMarks.append(.mark(at: run.from, label: "\(index + 1)", style: .call))
        previousEnd = run.to
    }
    var skipped: [Item] = []
    if mode == .fixedRate {
        // Grid ticks that came while an iteration was still running: the loop skips them.
        let step = interval.milliseconds
        let starts = Set(runs.map(\.from))
        var tick = step
        while tick < (runs.last?.from ?? 0) {
            if !starts.contains(tick) {
                skipped.append(.mark(at: tick, label: "–", style: .droppedCall))
            }
            tick += step
        }
    }
    let end = ((runs.last?.to ?? 0) / 1_000 + 1) * 1_000
    let fixedRate = mode == .fixedRate
    return Timeline(
        name: fixedRate ? "timeline-repeat-fixedrate" : "timeline-repeat-fixeddelay",
        title: fixedRate ? "repeat · .fixedRate" : "repeat · .fixedDelay (the default)",
        subtitle: fixedRate
            ? "every 1 s, 5 times, the third run takes 1.4 s: runs start on the 1 s grid; a tick that comes during a run is skipped"
            : "every 1 s, 5 times, the third run takes 1.4 s: each wait of 1 s starts when the previous run ends",
        tick: 250, labelEvery: 4, end: end,
        rows: [
            Row(name: "starts", items: dueMarks + skipped),
            Row(name: "waits", items: waits),
            Row(
                name: "runs",
                items: runs.map { .span(from: $0.from, to: $0.to, label: $0.label, style: .work) }),
        ],
        legend: fixedRate
            ? [
                (.call, "run starts"), (.droppedCall, "tick skipped"), (.wait, "wait"),
                (.work, "run"),
            ]
            : [(.call, "run starts"), (.wait, "wait"), (.work, "run")])
}

// MARK: - retry

func retryTimeline() async -> Timeline {
    let clock = ManualClock()
    let log = SpanLog()
    let attempts = 5
    let backoff = RetryBackoff.exponential(
        initial: .milliseconds(200), multiplier: 2, maximum: .seconds(1))
    let task = Task {
        let counter = Mutex(0)
        _ = try? await retry(
            attempts, backoff: backoff,
            onRetry: { _, _, delay in
                let now = clock.now.offset.milliseconds
                log.wait(
                    .init(
                        from: now, to: now + delay.milliseconds,
                        label: SVG.timeLabel(delay.milliseconds), failed: false))
            },
            clock: clock
        ) {
            let attempt = counter.withLock { value -> Int in
                value += 1
                return value
            }
            let start = clock.now.offset.milliseconds
            try await clock.sleep(for: .milliseconds(100))
            let failed = attempt < attempts
            log.run(
                .init(
                    from: start, to: clock.now.offset.milliseconds, label: "#\(attempt)",
                    failed: failed))
            if failed { throw Unavailable() }
        }
        log.finish()
        try? await clock.sleep(for: .seconds(86_400))
    }
    await drive(clock, step: .milliseconds(100), until: log)
    task.cancel()
    _ = await task.result

    let runs = log.runs
    let end = ((runs.last?.to ?? 0) / 500 + 1) * 500
    return Timeline(
        name: "timeline-retry-exponential",
        title: "retry · exponential backoff",
        subtitle:
            "5 attempts of 100 ms, the first four fail; waits from 200 ms, doubling, at most 1 s",
        tick: 100, labelEvery: 5, end: end,
        rows: [
            Row(
                name: "attempts",
                items: runs.map {
                    .span(
                        from: $0.from, to: $0.to, label: $0.label,
                        style: $0.failed ? .failure : .work)
                }),
            Row(
                name: "waits",
                items: log.waits.map {
                    .span(from: $0.from, to: $0.to, label: $0.label, style: .wait)
                }),
        ],
        legend: [
            (.failure, "failed attempt"), (.wait, "wait (backoff)"),
            (.work, "successful attempt"),
        ])
}
