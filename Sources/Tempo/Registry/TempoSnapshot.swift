/// What a ``TempoRegistry`` holds at one moment: the answer to "which timers are still alive
/// in my app?". Made by ``TempoRegistry/snapshot()``.
///
/// Instants are offsets on the registry's clock from when the registry was made (on a
/// `TempoTesting.ManualClock`, the clock's own offsets); ``now`` is the reading the snapshot
/// was taken at, so `entry.runsAt - snapshot.now` is the time left.
///
/// ```swift
/// let snapshot = TempoRegistry.shared.snapshot()
/// for entry in snapshot.entries where entry.kind == .debounce { print(entry.key) }
/// ```
public struct TempoSnapshot: Sendable, Hashable, CustomStringConvertible {
    /// The registry's clock reading when the snapshot was taken: an offset like
    /// ``TempoRegistry/now``, on the same scale as the entries' instants.
    ///
    /// ```swift
    /// let snapshot = registry.snapshot()
    /// for entry in snapshot.entries {
    ///     if case .delay(let runsAt) = entry.state { print(runsAt - snapshot.now) }
    /// }
    /// ```
    public let now: Duration
    /// One entry per live key, sorted by kind (its raw value) and then key.
    ///
    /// ```swift
    /// let retrying = registry.snapshot().entries.filter { $0.kind == .retry }.count
    /// ```
    public let entries: [Entry]
    /// How many operations the registry launched were still running when the snapshot was
    /// taken: trailing calls running on their actors, granted `Task`-returning calls, awaited
    /// calls' runs, operations that are running a drain included. What
    /// ``TempoRegistry/drain(within:)`` waits for, besides pending calls (a drain called from
    /// inside an operation waits for those that are not draining).
    ///
    /// ```swift
    /// let busy = registry.snapshot().runningOperations > 0
    /// ```
    public let runningOperations: Int
    /// Whether a ``TempoRegistry/drain(within:)`` was in progress: calls left pending then run
    /// at once.
    ///
    /// ```swift
    /// if registry.snapshot().isDraining { print("shutting down") }
    /// ```
    public let isDraining: Bool

    init(now: Duration, entries: [Entry], runningOperations: Int = 0, isDraining: Bool = false) {
        self.now = now
        self.entries = entries
        self.runningOperations = runningOperations
        self.isDraining = isDraining
    }

    /// Whether nothing is live: the registry holds no group, no pending delay and no running
    /// work.
    ///
    /// ```swift
    /// let registry = TempoRegistry(clock: clock)
    /// await registry.withCurrent {
    ///     throttle(.seconds(5), by: .taskContext) { save() }
    ///     await clock.advance(by: .seconds(5))
    /// }
    /// #expect(registry.snapshot().isEmpty)   // the window has closed
    /// ```
    public var isEmpty: Bool { entries.isEmpty }

    /// One line per entry, `kind  key  state`, times shown as offsets with the time left from
    /// ``now``; `(nothing live)` when empty.
    ///
    /// ```swift
    /// print(registry.snapshot())
    /// // throttle  scroll  window closes at 2.100 s (in 100.0 ms), trailing call pending
    /// ```
    public var description: String {
        var lines = entries.map { entry in
            "\(entry.kind.rawValue)  \(entry.key)  \(Self.describe(entry.state, now: now))"
        }
        if isDraining {
            let running =
                runningOperations == 1 ? "1 operation" : "\(runningOperations) operations"
            lines.insert("draining: \(running) running", at: 0)
        }
        return lines.isEmpty ? "(nothing live)" : lines.joined(separator: "\n")
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
        case .rateLimit(let tokens, let next, let waiters):
            return "\(tokens) permits free, next at \(at(next)), \(waiters) waiting"
        case .concurrencyLimit(let running, let queued):
            return "\(running) running, \(queued) queued"
        case .retryBudget(let balance, let calls, let retries):
            let shown = (balance * 100).rounded(.down) / 100
            return "balance \(shown) retries, \(calls) calls, \(retries) retries"
        case .circuitBreaker(let state, let failures, let calls, let reopensAt):
            return "\(state.rawValue), \(failures) of \(calls) calls failed"
                + (reopensAt.map { ", half-open at \(at($0))" } ?? "")
        case .hedge(let started, let inFlight, let next):
            return "\(started) attempts started, \(inFlight) in flight"
                + (next.map { ", next hedge at \(at($0))" } ?? "")
        }
    }
}
