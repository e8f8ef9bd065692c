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
    /// calls' runs. What ``TempoRegistry/drain(within:)`` waits for, besides pending calls.
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

    /// What kind of helper a live entry belongs to. The raw value is the name the
    /// ``description`` prints.
    ///
    /// ```swift
    /// let groups = registry.snapshot().entries.filter { $0.kind == .debounce }
    /// ```
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A debounce group (free `debounce` or a ``Debouncer``) with a pending call or an open
        /// quiet window; its state is ``State/debounce(runsAt:quietUntil:)``.
        ///
        /// ```swift
        /// let debouncing = registry.snapshot().entries.contains { $0.kind == .debounce }
        /// ```
        case debounce
        /// A throttle group (free `throttle` or a ``Throttler``) whose window is open; its
        /// state is ``State/throttle(windowClosesAt:trailingPending:)``.
        ///
        /// ```swift
        /// let throttling = registry.snapshot().entries.contains { $0.kind == .throttle }
        /// ```
        case throttle
        /// A `delay` or `execute` waiting for its time, one entry per call; its state is
        /// ``State/delay(runsAt:)``.
        ///
        /// ```swift
        /// let delays = registry.snapshot().entries.filter { $0.kind == .delay }.count
        /// ```
        case delay
        /// A `repeat` loop that has not ended; its state is
        /// ``State/repeating(runs:nextRunAt:)``.
        ///
        /// ```swift
        /// let loops = registry.snapshot().entries.filter { $0.kind == .repeat }.count
        /// ```
        case `repeat`
        /// A `retry` call in progress, attempting or waiting between attempts; its state is
        /// ``State/retrying(attempt:maxAttempts:waitingUntil:)``.
        ///
        /// ```swift
        /// let retries = registry.snapshot().entries.filter { $0.kind == .retry }.count
        /// ```
        case retry
        /// A `timeout` call whose operation is running; its state is
        /// ``State/timeout(deadline:)``.
        ///
        /// ```swift
        /// let racing = registry.snapshot().entries.filter { $0.kind == .timeout }.count
        /// ```
        case timeout
        /// A `time` or `measure` call whose operation is running; its state is
        /// ``State/timing(startedAt:)``.
        ///
        /// ```swift
        /// let timed = registry.snapshot().entries.filter { $0.kind == .timing }.count
        /// ```
        case timing
        /// A rate-limited key (``rateLimit(_:weight:whenLimited:identifier:fileID:line:column:operation:)``)
        /// whose bucket is not full or that has callers waiting; its state is
        /// ``State/rateLimit(tokens:nextPermitAt:waiters:)``.
        ///
        /// ```swift
        /// let limited = registry.snapshot().entries.filter { $0.kind == .rateLimit }.count
        /// ```
        case rateLimit
        /// A concurrency-limited key
        /// (``concurrencyLimit(_:queue:queueTimeout:identifier:fileID:line:column:operation:)``)
        /// with calls running or queued; its state is
        /// ``State/concurrencyLimit(running:queued:)``.
        ///
        /// ```swift
        /// let limited = registry.snapshot().entries.filter { $0.kind == .concurrencyLimit }
        /// ```
        case concurrencyLimit
        /// A ``RetryBudget`` key with calls or retries in its window; its state is
        /// ``State/retryBudget(balance:calls:retries:)``.
        ///
        /// ```swift
        /// let budgets = registry.snapshot().entries.filter { $0.kind == .retryBudget }
        /// ```
        case retryBudget
        /// A circuit breaker (``circuitBreaker(_:identifier:fileID:line:column:operation:)``),
        /// from its first call until it is reset or leaves (closed, none of its calls of that
        /// state running, no failure in its window); its state is
        /// ``State/circuitBreaker(state:failures:calls:reopensAt:)``.
        ///
        /// ```swift
        /// let breakers = registry.snapshot().entries.filter { $0.kind == .circuitBreaker }
        /// ```
        case circuitBreaker
        /// A hedged call (``hedge(maxAttempts:after:identifier:fileID:line:column:operation:)``)
        /// that is running; its state is
        /// ``State/hedge(attemptsStarted:inFlight:nextHedgeAt:)``.
        ///
        /// ```swift
        /// let hedging = registry.snapshot().entries.filter { $0.kind == .hedge }.count
        /// ```
        case hedge
    }

    /// What a live entry is doing. Instants are on the registry's clock, like
    /// ``TempoSnapshot/now``.
    ///
    /// ```swift
    /// for entry in registry.snapshot().entries {
    ///     if case .throttle(_, trailingPending: true) = entry.state { print(entry.key) }
    /// }
    /// ```
    public enum State: Sendable, Hashable {
        /// A debounce group: the pending call runs at `runsAt` (`nil`: nothing pending); until
        /// `quietUntil` (`nil`: no such window) a new call does not run at once, the window a
        /// `.runFirst` run or a `.leading` call opens.
        ///
        /// ```swift
        /// if case .debounce(let runsAt?, _) = registry.snapshot().entries.first?.state {
        ///     print("runs at \(runsAt)")
        /// }
        /// ```
        case debounce(runsAt: Duration?, quietUntil: Duration?)
        /// A throttle group whose window is open until `windowClosesAt`; `trailingPending` when
        /// a trailing call waits for the window to close.
        ///
        /// ```swift
        /// if case .throttle(let closesAt, _) = registry.snapshot().entries.first?.state {
        ///     print("window closes at \(closesAt)")
        /// }
        /// ```
        case throttle(windowClosesAt: Duration, trailingPending: Bool)
        /// A pending `delay` or `execute`, due at `runsAt`.
        ///
        /// ```swift
        /// if case .delay(let runsAt) = registry.snapshot().entries.first?.state {
        ///     print("runs at \(runsAt)")
        /// }
        /// ```
        case delay(runsAt: Duration)
        /// A running `repeat`: `runs` iterations finished so far; the next starts at
        /// `nextRunAt`, or `nil` while an iteration runs.
        ///
        /// ```swift
        /// if case .repeating(let runs, _) = registry.snapshot().entries.first?.state {
        ///     print("\(runs) runs")
        /// }
        /// ```
        case repeating(runs: Int, nextRunAt: Duration?)
        /// A running `retry` allowed `maxAttempts` attempts: attempt `attempt` (1-based) is
        /// running, or, when `waitingUntil` is set, has failed and the next starts then.
        ///
        /// ```swift
        /// let state = registry.snapshot().entries.first?.state
        /// if case .retrying(let attempt, let maxAttempts, _) = state {
        ///     print("attempt \(attempt) of \(maxAttempts)")
        /// }
        /// ```
        case retrying(attempt: Int, maxAttempts: Int, waitingUntil: Duration?)
        /// A running `timeout`, expiring at `deadline`.
        ///
        /// ```swift
        /// if case .timeout(let deadline) = registry.snapshot().entries.first?.state {
        ///     print("gives up at \(deadline)")
        /// }
        /// ```
        case timeout(deadline: Duration)
        /// A running `time` or `measure` call, started at `startedAt`.
        ///
        /// ```swift
        /// if case .timing(let start) = registry.snapshot().entries.first?.state {
        ///     print("running for \(registry.now - start)")
        /// }
        /// ```
        case timing(startedAt: Duration)
        /// A rate-limited key: `tokens` permits free now, the next single permit free at
        /// `nextPermitAt` (``TempoSnapshot/now`` when one is free), `waiters` calls waiting.
        ///
        /// ```swift
        /// let state = registry.snapshot().entries.first?.state
        /// if case .rateLimit(let tokens, _, let waiters) = state {
        ///     print("\(tokens) free, \(waiters) waiting")
        /// }
        /// ```
        case rateLimit(tokens: Int, nextPermitAt: Duration, waiters: Int)
        /// A concurrency limit: `running` calls hold a slot, `queued` more wait for one.
        ///
        /// ```swift
        /// let state = registry.snapshot().entries.first?.state
        /// if case .concurrencyLimit(let running, let queued) = state {
        ///     print("\(running) running, \(queued) queued")
        /// }
        /// ```
        case concurrencyLimit(running: Int, queued: Int)
        /// A retry budget: `calls` calls and `retries` retries counted in its window leave
        /// `balance` retries (a retry goes ahead while it is at least 1; it can be below zero
        /// once deposits have expired).
        ///
        /// ```swift
        /// let state = registry.snapshot().entries.first?.state
        /// if case .retryBudget(let balance, let calls, let retries) = state {
        ///     print("\(balance) left after \(calls) calls and \(retries) retries")
        /// }
        /// ```
        case retryBudget(balance: Double, calls: Int, retries: Int)
        /// A circuit breaker, as a call made now would find it. Closed: `calls` outcomes in
        /// its window, `failures` of them failures. Half-open: `calls` trial calls admitted
        /// (an open breaker whose break is over shows as half-open, with none). Open: zero
        /// and zero, and the break ends at `reopensAt` (`nil`: opened by hand).
        ///
        /// ```swift
        /// let state = registry.snapshot().entries.first?.state
        /// if case .circuitBreaker(.open, _, _, let reopensAt?) = state {
        ///     print("trial call at \(reopensAt)")
        /// }
        /// ```
        case circuitBreaker(
            state: CircuitBreakerState, failures: Int, calls: Int, reopensAt: Duration?)
        /// A hedged call: `attemptsStarted` attempts have started, `inFlight` of them are still
        /// running, and the next starts at `nextHedgeAt` unless one succeeds first (`nil` when
        /// no attempt is left to start).
        ///
        /// ```swift
        /// let state = registry.snapshot().entries.first?.state
        /// if case .hedge(let started, let inFlight, _) = state {
        ///     print("\(started) attempts started, \(inFlight) in flight")
        /// }
        /// ```
        case hedge(attemptsStarted: Int, inFlight: Int, nextHedgeAt: Duration?)
    }

    /// One live key: which helper, under which name, doing what.
    ///
    /// ```swift
    /// for entry in registry.snapshot().entries {
    ///     print(entry.kind, entry.key, entry.state)
    /// }
    /// ```
    public struct Entry: Sendable, Hashable {
        /// The helper.
        ///
        /// ```swift
        /// let kinds = Set(registry.snapshot().entries.map(\.kind))
        /// ```
        public let kind: Kind
        /// The identifier, or else the call site as `fileID:line:column`; a ``Debouncer`` or
        /// ``Throttler`` shows as `instance #n`.
        ///
        /// ```swift
        /// let saving = registry.snapshot().entries.contains { $0.key == "save" }
        /// ```
        public let key: String
        /// What it is doing.
        ///
        /// ```swift
        /// let states = registry.snapshot().entries.map(\.state)
        /// ```
        public let state: State
    }

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
