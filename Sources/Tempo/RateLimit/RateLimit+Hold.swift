// A limiter that listens: an operation's error that carries a retry-after (a 429 or 503 with
// `Retry-After`) holds the key's permits until then, for every caller of the key.

extension RateLimit {
    /// This limit, listening to the service: when an operation run through it (the wrapping
    /// `rateLimit`) throws an error that carries a retry-after (``RetryAfterProviding``, such
    /// as a 429 with `Retry-After`), the key's permits are held until then for every caller of
    /// the key. Waiters wait until that instant at least, a refused call is told that time, and
    /// a fleet of callers backs off at once instead of each learning it by failing.
    ///
    /// A `CancellationError`, an error with no retry-after (or one of zero or less), and a
    /// ``RateLimitError`` (the limiter's own refusal, not the service's word) change nothing.
    /// A later hold extends an earlier one, never shortens it; ``resetRateLimit(identifier:)``
    /// ends it. Once the hold ends, a window limit admits as its window allows, and a token
    /// bucket has one permit at that instant (the rest refill from there), or later when its
    /// own refill comes later: a hold never makes a bucket admit sooner than it would have.
    /// A call of weight zero or less takes nothing, so it runs at once during a hold too.
    ///
    /// ```swift
    /// let github = RateLimit.window(10, per: .seconds(1)).holdingOnRetryAfter()
    /// try await rateLimit(github, identifier: "github") {
    ///     try await api.ping()   // a 429 with Retry-After: 30 holds "github" for 30 s
    /// }
    /// ```
    ///
    /// - Parameter holds: Whether the limit listens; `true` by default.
    /// - Returns: The limit, listening or not.
    public func holdingOnRetryAfter(_ holds: Bool = true) -> RateLimit {
        var limit = self
        limit.holdsOnRetryAfter = holds
        return limit
    }
}

/// The rest of a call of a limit that listens: waits for its permit if it must, then runs
/// `operation`, holding the key when it throws an error that carries a retry-after.
@usableFromInline
nonisolated(nonsending) func rateLimitListening<Value>(
    _ permit: borrowing RatePermitRequest, _ limit: RateLimit,
    operation: nonisolated(nonsending) () async throws -> Value
) async throws -> Value {
    let key = permit.key
    return try await rateLimitAfterWaiting(permit) {
        try await runListening(limit, key, operation)
    }
}

/// Runs `operation`, and holds `key` of `limit` when it throws an error that carries a
/// retry-after; rethrows.
nonisolated(nonsending) func runListening<Value>(
    _ limit: RateLimit, _ key: GroupKey,
    _ operation: nonisolated(nonsending) () async throws -> Value
) async throws -> Value {
    do {
        return try await operation()
    } catch {
        if !(error is CancellationError), !(error is RateLimitError),
            let after = (error as? any RetryAfterProviding)?.retryAfter, after > .zero
        {
            TempoRegistry.current.holdRateLimit(limit, key, for: after)
        }
        throw error
    }
}

extension TempoRegistry {
    /// Holds `key` of `limit` for `after` from now: no call is admitted before then.
    func holdRateLimit(_ limit: RateLimit, _ key: GroupKey, for after: Duration) {
        let now = clock.now()
        let until = now.adding(after)
        if let window = limit.window, window.permits > 0 {
            _ = enter(
                WindowLimitEntry.self, key,
                new: { WindowLimitEntry(permits: window.permits, span: window.span) }
            ) { state in
                state.hold(until: until)
                return RateLimitCall(outcome: (), timerWake: state.wake(at: now))
            }
        } else if let bucket = limit.bucket, bucket.burst > 0 {
            _ = enter(
                RateLimitEntry.self, key,
                new: { RateLimitEntry(now: now, refill: bucket.refill, burst: bucket.burst) }
            ) { state in
                state.hold(until: until, at: now)
                return RateLimitCall(outcome: (), timerWake: state.wake(at: now))
            }
        } else {
            return
        }
        if events.isObserved { events.report(.rateLimit, key, .rateLimitHeld(for: after), at: now) }
    }
}
