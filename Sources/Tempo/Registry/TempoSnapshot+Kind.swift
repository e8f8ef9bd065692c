extension TempoSnapshot {
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
}
