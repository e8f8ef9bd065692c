/// One decision a resilience helper made, as a registry's observers receive it: which helper,
/// under which key, at which instant, and what it decided.
///
/// Start receiving them with ``TempoRegistry/observe(bufferLimit:_:)``:
///
/// ```swift
/// TempoRegistry.shared.observe { event in
///     print(event)   // "12.5 seconds circuitBreaker payments: closed -> open"
/// }
/// ```
///
/// Events are values: they hold no reference into the engine and can be kept, sent elsewhere
/// or compared by their ``description``.
public struct TempoEvent: Sendable, CustomStringConvertible {
    /// The helper that decided, as ``TempoSnapshot`` names it.
    ///
    /// ```swift
    /// registry.observe { event in
    ///     if event.helper == .rateLimit { print(event) }
    /// }
    /// ```
    public let helper: TempoSnapshot.Kind
    /// The identifier, or else the call site as `fileID:line:column`: the key the snapshot
    /// lists the helper under.
    ///
    /// ```swift
    /// registry.observe { event in print("tempo.\(event.helper).\(event.key)") }
    /// ```
    public let key: String
    /// When the helper decided, on the registry's clock (the scale of
    /// ``TempoRegistry/now``).
    ///
    /// ```swift
    /// registry.observe { event in print("\(registry.now - event.at) ago") }
    /// ```
    public let at: Duration
    /// What the helper decided, with what is needed to act on it.
    ///
    /// ```swift
    /// registry.observe { event in
    ///     if case .breakerChanged(_, to: .open) = event.decision { print(event.key) }
    /// }
    /// ```
    public let decision: Decision

    /// Makes an event; the engine makes them, and tests of a forwarding observer can too.
    ///
    /// ```swift
    /// let sample = TempoEvent(
    ///     helper: .timeout, key: "search", at: .seconds(3),
    ///     decision: .timedOut(after: .seconds(2)))
    /// ```
    ///
    /// - Parameters:
    ///   - helper: The helper that decided.
    ///   - key: Its identifier or call site.
    ///   - at: The instant, on the registry's clock.
    ///   - decision: What it decided.
    public init(helper: TempoSnapshot.Kind, key: String, at: Duration, decision: Decision) {
        self.helper = helper
        self.key = key
        self.at = at
        self.decision = decision
    }

    /// What a helper decided.
    ///
    /// Cases are added as the helpers gain decisions to report: switch over it with a
    /// `default`.
    ///
    /// ```swift
    /// registry.observe { event in
    ///     switch event.decision {
    ///     case .rateLimitAdmitted(let waited): print("waited \(waited)")
    ///     case .rateLimitRefused: print("refused")
    ///     default: break
    ///     }
    /// }
    /// ```
    public enum Decision: Sendable {
        /// A circuit breaker moved from one state to another: by a call's outcome, by a call
        /// that found its break over, or by hand. (The breaker's `onStateChange` is told the
        /// same change.)
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .breakerChanged(.closed, .open) = event.decision { print(event.key) }
        /// }
        /// ```
        case breakerChanged(from: CircuitBreakerState, to: CircuitBreakerState)
        /// A circuit breaker turned a call away without running it: it is open (a trial in
        /// `retryAfter`; `nil` when opened by hand, or half-open with its trial calls taken).
        /// The call threw ``CircuitBreakerError/open(retryAfter:)``.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .breakerRejected = event.decision { print(event) }
        /// }
        /// ```
        case breakerRejected(retryAfter: Duration?)
        /// A rate-limited call found no permit and joined the key's queue; a permit for it is
        /// expected in `estimatedWait` (calls ahead of it included).
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .rateLimitQueued(let wait) = event.decision { print(wait) }
        /// }
        /// ```
        case rateLimitQueued(estimatedWait: Duration)
        /// A rate-limited call that waited got its permit after `waited`. It is reported by the
        /// call's task when it resumes to start its operation, at the instant read there, so
        /// `waited` includes the time its task took to resume.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .rateLimitAdmitted(let waited) = event.decision { print(waited) }
        /// }
        /// ```
        case rateLimitAdmitted(waited: Duration)
        /// A rate-limited call was refused with ``RateLimitError/limited(retryAfter:)``: at
        /// once (`waited` zero: `.fail`, or `takeRatePermit`) or when its `maxWait` ran out.
        /// A permit is free in `retryAfter`.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .rateLimitRefused(let after, _) = event.decision { print(after) }
        /// }
        /// ```
        case rateLimitRefused(retryAfter: Duration, waited: Duration)
        /// An operation of a limit made with ``RateLimit/holdingOnRetryAfter(_:)`` failed with
        /// an error that asked to wait (``RetryAfterProviding``, such as a 429 with
        /// `Retry-After`): no call of the key is admitted for `for`.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .rateLimitHeld(let wait) = event.decision { print(wait) }
        /// }
        /// ```
        case rateLimitHeld(for: Duration)
        /// A shared limit's store (TempoRedis's `SharedRateLimiter`) failed: it was slow past
        /// its time limit, unreachable, or answered an error (`reason` says which). Reported
        /// when the store starts failing, not for every call while it does; the calls then
        /// fail closed, or go to the in-process limit the limiter falls back to
        /// (`fellBack` `true`).
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .storeFailed(let reason, _) = event.decision { print(reason) }
        /// }
        /// ```
        case storeFailed(reason: String, fellBack: Bool)
        /// A shared limit's store answered again after failing: calls are decided there again.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .storeRecovered = event.decision { print("store back") }
        /// }
        /// ```
        case storeRecovered
        /// A call found every slot of its concurrency limit taken and joined the queue: after
        /// it, `running` calls hold a slot and `queued` wait (this one included).
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .concurrencyLimitQueued(_, let queued) = event.decision { print(queued) }
        /// }
        /// ```
        case concurrencyLimitQueued(running: Int, queued: Int)
        /// A queued call got a slot after waiting `waited`.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .concurrencyLimitAdmitted(let waited) = event.decision { print(waited) }
        /// }
        /// ```
        case concurrencyLimitAdmitted(waited: Duration)
        /// A call was refused with ``ConcurrencyLimitError/queueFull(running:queued:)``: every
        /// slot and every queue place was taken.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .concurrencyLimitRefused = event.decision { print(event) }
        /// }
        /// ```
        case concurrencyLimitRefused(running: Int, queued: Int)
        /// A call gave up waiting for a slot, with ``ConcurrencyLimitError/queueTimedOut(_:)``:
        /// its `queueTimeout` ran out after `waited` in the queue, or, zero or less, turned it
        /// away at once without queueing it (`waited` zero).
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .concurrencyLimitTimedOut = event.decision { print(event) }
        /// }
        /// ```
        case concurrencyLimitTimedOut(waited: Duration)
        /// An attempt of `retry` failed with `error` and the next starts in `delay`: what
        /// `onRetry` is told. `attempt` is the one that failed (1-based).
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .retryScheduled(let attempt, let error, _) = event.decision {
        ///         print("attempt \(attempt) failed: \(error)")
        ///     }
        /// }
        /// ```
        case retryScheduled(attempt: Int, error: any Error, delay: Duration)
        /// `retry` stopped after attempt `attempt` failed with `error`, which it throws, for
        /// `reason`. (Cancellation is not reported: it is the caller's decision.)
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .retryStopped(_, _, .budgetRefused) = event.decision { print(event) }
        /// }
        /// ```
        case retryStopped(attempt: Int, error: any Error, reason: RetryStop)
        /// `hedge` started attempt `attempt` (2 or more): its delay passed with no attempt
        /// succeeding, or an attempt failed.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .hedgeStarted = event.decision { print(event) }
        /// }
        /// ```
        case hedgeStarted(attempt: Int)
        /// Attempt `attempt` of `hedge` succeeded first; the others are cancelled. Attempt 1
        /// means no hedge was needed.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .hedgeWon(let attempt) = event.decision, attempt > 1 { print(event) }
        /// }
        /// ```
        case hedgeWon(attempt: Int)
        /// Every one of the `attempts` attempts of `hedge` failed: it throws
        /// ``HedgingError/allAttemptsFailed(_:)``.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .hedgeFailed = event.decision { print(event) }
        /// }
        /// ```
        case hedgeFailed(attempts: Int)
        /// A `debounce` or `throttle` call (a ``Debouncer`` or ``Throttler`` included) will
        /// never run: a newer call replaced it, its mode dropped it, its group was cancelled
        /// (by identifier, by ``TempoRegistry/cancelAll()``, or by its ``Debouncer`` or
        /// ``Throttler`` going away), or the task a `Task`-returning call returned was
        /// cancelled before it ran. Every drop is reported, on every path, at the instant of
        /// the call, cancel or cancelled task that dropped it; a call is reported once, as
        /// dropped or as run (``callRan``).
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .callDropped = event.decision { print("\(event.helper) dropped") }
        /// }
        /// ```
        case callDropped
        /// A `debounce` or `throttle` call's operation was started: at once (a duration of zero
        /// or less included), when its instant came (its timer fired, or, the timer being
        /// late, the group's next call ran it first), flushed (``TempoRegistry/flushAll()`` and
        /// `onDeinit: .flush` included), or by a cancel that found its instant come. Every run
        /// is reported, on every path, at the instant it was decided.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .callRan = event.decision { print("\(event.key) ran") }
        /// }
        /// ```
        case callRan
        /// A `timeout` ran out: its operation was cancelled, and it throws
        /// ``TimeoutError/timedOut(_:)`` with `after`. A limit of zero or less reports this at
        /// once, without running the operation.
        ///
        /// ```swift
        /// registry.observe { event in
        ///     if case .timedOut(let after) = event.decision { print("gave up after \(after)") }
        /// }
        /// ```
        case timedOut(after: Duration)
    }

    /// Why `retry` stopped before a success.
    ///
    /// ```swift
    /// registry.observe { event in
    ///     if case .retryStopped(_, _, .attemptsExhausted) = event.decision { print(event) }
    /// }
    /// ```
    public enum RetryStop: Sendable, Hashable, CustomStringConvertible {
        /// The failed attempt was the last one allowed.
        ///
        /// ```swift
        /// let reason = TempoEvent.RetryStop.attemptsExhausted   // retry(3) after attempt 3
        /// ```
        case attemptsExhausted
        /// `shouldRetry` said not to retry this error.
        ///
        /// ```swift
        /// let reason = TempoEvent.RetryStop.notRetryable   // shouldRetry returned false
        /// ```
        case notRetryable
        /// The retry budget shared under `budget` (its identifier, or the call site for a
        /// budget without one) had no retry left.
        ///
        /// ```swift
        /// let reason = TempoEvent.RetryStop.budgetRefused(budget: "api")
        /// ```
        case budgetRefused(budget: String)
        /// The wait would have ended at or after the call's start plus its `timeBudget` (or
        /// the clock woke past it).
        ///
        /// ```swift
        /// let reason = TempoEvent.RetryStop.timeBudgetExhausted
        /// ```
        case timeBudgetExhausted

        /// The reason in a few words.
        ///
        /// ```swift
        /// print(TempoEvent.RetryStop.attemptsExhausted)   // "attempts exhausted"
        /// ```
        public var description: String {
            switch self {
            case .attemptsExhausted: "attempts exhausted"
            case .notRetryable: "not retryable"
            case .budgetRefused(let budget): "budget \(budget) refused"
            case .timeBudgetExhausted: "time budget exhausted"
            }
        }
    }

    /// One line: the instant, the helper, the key, and the decision, as in
    /// `2.0 seconds rateLimit api: refused after 0.0 seconds, free in 0.5 seconds` (durations
    /// as `Duration` prints them).
    ///
    /// ```swift
    /// registry.observe { event in print(event.description) }
    /// ```
    public var description: String {
        "\(at) \(helper) \(key): \(decision)"
    }
}
