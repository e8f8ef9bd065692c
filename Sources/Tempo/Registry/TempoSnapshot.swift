/// What a ``TempoRegistry`` holds at one moment: the answer to "which timers are still alive
/// in my app?". Made by ``TempoRegistry/snapshot()``.
///
/// Instants are offsets on the registry's clock from when the registry was made; ``now`` is
/// the reading the snapshot was taken at, so `entry.runsAt - snapshot.now` is the time left.
///
/// ```swift
/// let snapshot = TempoRegistry.shared.snapshot()
/// for entry in snapshot.entries where entry.kind == .debounce { print(entry.key) }
/// ```
public struct TempoSnapshot: Sendable, Hashable, CustomStringConvertible {
    /// The registry's clock reading when the snapshot was taken.
    public let now: Duration
    /// One entry per live key, sorted by kind and then key.
    public let entries: [Entry]

    /// Whether nothing is live.
    public var isEmpty: Bool { entries.isEmpty }

    /// What kind of helper a live entry belongs to.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case debounce, throttle, delay, `repeat`, retry, timeout, timing
        case concurrencyLimit
    }

    /// What a live entry is doing.
    public enum State: Sendable, Hashable {
        /// A debounce group: the pending call runs at `runsAt` (`nil`: nothing pending); after
        /// a `.runFirst` run the group stays quiet until `quietUntil`.
        case debounce(runsAt: Duration?, quietUntil: Duration?)
        /// A throttle group whose window is open until `windowClosesAt`; `trailingPending` when
        /// a trailing call waits for the window to close.
        case throttle(windowClosesAt: Duration, trailingPending: Bool)
        /// A pending `delay` or `execute`, due at `runsAt`.
        case delay(runsAt: Duration)
        /// A running `repeat`: `runs` iterations so far, the next at `nextRunAt`.
        case repeating(runs: Int, nextRunAt: Duration?)
        /// A running `retry`: attempt `attempt` of `maxAttempts`; waiting until `waitingUntil`
        /// between attempts.
        case retrying(attempt: Int, maxAttempts: Int, waitingUntil: Duration?)
        /// A running `timeout`, expiring at `deadline`.
        case timeout(deadline: Duration)
        /// A running `time` measurement, started at `startedAt`.
        case timing(startedAt: Duration)
        /// A concurrency limit: `running` calls hold a slot, `queued` more wait for one.
        case concurrencyLimit(running: Int, queued: Int)
    }

    /// One live key.
    public struct Entry: Sendable, Hashable {
        /// The helper.
        public let kind: Kind
        /// The identifier, or the call site as `fileID:line:column`.
        public let key: String
        /// What it is doing.
        public let state: State
    }

    /// One line per entry, times shown relative to ``now``.
    public var description: String {
        guard !entries.isEmpty else { return "(nothing live)" }
        return entries.map { entry in
            "\(entry.kind.rawValue)  \(entry.key)  \(Self.describe(entry.state, now: now))"
        }.joined(separator: "\n")
    }

    private static func describe(_ state: State, now: Duration) -> String {
        func at(_ instant: Duration) -> String {
            "\(formatDuration(instant)) (in \(formatDuration(instant.subtracting(now))))"
        }
        switch state {
        case .debounce(let runsAt, let quietUntil):
            if let runsAt { return "runs at \(at(runsAt))" }
            return "quiet until \(at(quietUntil ?? now))"
        case .throttle(let closesAt, let trailing):
            return "window closes at \(at(closesAt))" + (trailing ? ", trailing call pending" : "")
        case .delay(let runsAt):
            return "runs at \(at(runsAt))"
        case .repeating(let runs, let next):
            return "\(runs) runs" + (next.map { ", next at \(at($0))" } ?? "")
        case .retrying(let attempt, let maxAttempts, let waitingUntil):
            return "attempt \(attempt) of \(maxAttempts)"
                + (waitingUntil.map { ", waiting until \(at($0))" } ?? "")
        case .timeout(let deadline):
            return "expires at \(at(deadline))"
        case .timing(let startedAt):
            return "started at \(formatDuration(startedAt))"
        case .concurrencyLimit(let running, let queued):
            return "\(running) running, \(queued) queued"
        }
    }
}
