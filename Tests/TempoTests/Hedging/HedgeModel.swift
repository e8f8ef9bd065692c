/// A reference model of a hedged call, in whole milliseconds: what starts, ends and is
/// cancelled when, and how the call ends, for a schedule of attempt durations and outcomes.
/// Written from the rules in `hedge`'s documentation, independently of the engine.
struct HedgeModel {
    var maxAttempts: Int
    var delay: Int
    /// Attempt `n` runs `scripts[n - 1].duration` ms, then succeeds or fails.
    var scripts: [(duration: Int, succeeds: Bool)]
    /// When the caller is cancelled, if it is.
    var cancelAt: Int?

    enum Outcome: Equatable {
        case value(Int)
        case allFailed([Int])
        case cancelled
    }

    /// The events and the outcome, or `nil` when two things happen at the same instant (the
    /// engine may then take them in either order, so the schedule decides nothing).
    func run() -> (events: [AttemptEvent], outcome: Outcome, end: Int)? {
        var events: [AttemptEvent] = []
        var started = 0
        var running: [Int: Int] = [:]  // attempt -> when it ends
        var failures: [Int] = []
        var nextHedge: Int?
        func start(_ count: Int, at now: Int) {
            for _ in 0..<count {
                started += 1
                events.append(.started(started, at: .milliseconds(now)))
                running[started] = now + scripts[started - 1].duration
            }
            nextHedge = started < maxAttempts ? now + delay : nil
        }
        func cancelRunning(at now: Int) {
            for attempt in running.keys.sorted() {
                events.append(.cancelled(attempt, at: .milliseconds(now)))
            }
            running = [:]
        }
        start(delay > 0 ? 1 : maxAttempts, at: 0)
        while true {
            var candidates = running.values.map { $0 }
            if let nextHedge { candidates.append(nextHedge) }
            if let cancelAt { candidates.append(cancelAt) }
            guard let now = candidates.min() else { return nil }
            guard candidates.filter({ $0 == now }).count == 1 else { return nil }
            if now == cancelAt {
                cancelRunning(at: now)
                return (events, .cancelled, now)
            }
            if now == nextHedge {
                start(1, at: now)
                continue
            }
            let attempt = running.first { $0.value == now }!.key
            running[attempt] = nil
            if scripts[attempt - 1].succeeds {
                events.append(.succeeded(attempt, at: .milliseconds(now)))
                cancelRunning(at: now)
                return (events, .value(attempt), now)
            }
            events.append(.failed(attempt, at: .milliseconds(now)))
            failures.append(attempt)
            if started < maxAttempts {
                start(1, at: now)
            } else if running.isEmpty {
                return (events, .allFailed(failures.sorted()), now)
            }
        }
    }
}
