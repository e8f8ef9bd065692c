extension TempoSnapshot {
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
}
