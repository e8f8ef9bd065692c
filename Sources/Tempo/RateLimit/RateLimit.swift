/// How many permits a rate-limited key hands out: a token bucket of `permits` per `interval`
/// with at most `burst` at once, or a window limit of at most `permits` starts in any rolling
/// `interval` (``window(_:per:margin:)``).
///
/// A token bucket holds at most `burst` permits and refills continuously, one permit every
/// `interval / permits` (rounded up to the attosecond, so the rate is never exceeded). A full
/// bucket lets `burst` calls through at once; after that, calls are spaced by the refill. So in
/// any rolling window of `interval` (`[t, t + interval)`) it lets up to `permits + burst - 1`
/// calls through: the full bucket, then `permits - 1` refills. That is its average rate, not a
/// service's "`permits` per `interval`": for that, use ``window(_:per:margin:)``, which never
/// lets more than `permits` through in any window (and leaves room for the request's trip).
/// The bucket is the generic cell rate algorithm (GCRA): the key stores one instant, when its
/// bucket is full again, so a call costs the same whatever the numbers.
///
/// ```swift
/// // A service's "10 a second": never 11 in any 1.05 s (50 ms for the trip).
/// let service = RateLimit.window(10, per: .seconds(1))
/// // Smoothing your own load: one every 100 ms on average, up to 19 in a rolling second.
/// let smooth = RateLimit(10, per: .seconds(1))
/// // One every 100 ms, evenly spaced: up to 10 in a rolling second.
/// let even = RateLimit(10, per: .seconds(1), burst: 1)
/// ```
///
/// Every value is safe, and means:
/// - `interval` of zero or less: no limit; every call is admitted at once.
/// - `permits` of zero or less (with a positive `interval`): no permit is ever free; every call
///   that asks for one throws ``RateLimitError/cannotAdmit(weight:burst:)`` at once (in a task
///   already cancelled, `CancellationError`, as for any call).
/// - `burst` `nil`: `permits`. Below 1: 1 (calls are evenly spaced).
/// - Huge values saturate: `RateLimit(1, per: .seconds(Int64.max))` refills once in no
///   program's life, and `RateLimit(.max, per: .nanoseconds(1))` never waits. A `burst` whose
///   whole bucket would take more than half of `Duration`'s range to refill is capped to what
///   fits (at least 1) when calls are measured against it; ``RateLimitError/cannotAdmit(weight:burst:)``
///   and the snapshot report the capped burst, while ``burst`` keeps the value asked for.
public struct RateLimit: Sendable, Hashable, CustomStringConvertible {
    /// Whether two limits have the same permits, interval, burst, margin and hold (a token
    /// bucket never equals a window limit).
    ///
    /// ```swift
    /// // true: the burst defaults to the permits
    /// RateLimit(10, per: .seconds(1)) == RateLimit(10, per: .seconds(1), burst: 10)
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: A limit.
    ///   - rhs: Another limit.
    /// - Returns: `true` when permits, interval and burst are all equal.
    public static func == (lhs: RateLimit, rhs: RateLimit) -> Bool {
        (lhs.permits, lhs.interval, lhs.burst, lhs.margin, lhs.holdsOnRetryAfter)
            == (rhs.permits, rhs.interval, rhs.burst, rhs.margin, rhs.holdsOnRetryAfter)
    }

    /// Hashes the permits, interval, burst, margin and hold, the parts ``==(_:_:)`` compares.
    ///
    /// ```swift
    /// let limits: Set = [RateLimit(10, per: .seconds(1)), RateLimit(1, per: .seconds(1))]
    /// ```
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(permits)
        hasher.combine(interval)
        hasher.combine(burst)
        hasher.combine(margin)
        hasher.combine(holdsOnRetryAfter)
    }

    /// The permits added per ``interval`` (for a window limit: the most starts in a window).
    ///
    /// ```swift
    /// let perSecond = RateLimit(10, per: .seconds(1)).permits   // 10
    /// ```
    public let permits: Int
    /// The time over which ``permits`` permits are added (for a window limit: the window, before
    /// its ``margin``).
    ///
    /// ```swift
    /// let window = RateLimit(10, per: .seconds(1)).interval   // 1 second
    /// ```
    public let interval: Duration
    /// The most permits the bucket holds: how many calls can pass at once (for a window limit:
    /// ``permits``, at least 1). It is the burst asked for, at least 1; a burst too large for
    /// `Duration`'s range is capped where calls are measured (see ``RateLimit``), not here.
    ///
    /// ```swift
    /// let atOnce = RateLimit(10, per: .seconds(1), burst: 0).burst   // 1: at least one
    /// ```
    public let burst: Int

    /// A token bucket: `permits` per `interval`, with at most `burst` at once (`nil`:
    /// `permits`); up to `permits + burst - 1` in any rolling `interval`.
    ///
    /// ```swift
    /// let search = RateLimit(5, per: .seconds(1), burst: 2)   // up to 6 in a rolling second
    /// ```
    ///
    /// - Parameters:
    ///   - permits: The permits added per `interval`; zero or less: no permit is ever free.
    ///   - interval: The time over which `permits` permits are added; zero or less: no limit.
    ///   - burst: The most permits the bucket holds; `nil` (the default) is `permits`, below 1
    ///     is 1.
    public init(_ permits: Int, per interval: Duration, burst: Int? = nil) {
        self.permits = permits
        self.interval = interval
        self.burst = max(burst ?? permits, 1)
        // Worked out once here, so that a call divides nothing.
        bucket = Self.bucket(permits: permits, interval: interval, burst: self.burst)
        margin = nil
        window = nil
    }

    /// The bucket a call is measured against, worked out by `bucket(permits:interval:burst:)`.
    let bucket: (refill: Duration, burst: Int)?

    /// For a window limit (``window(_:per:margin:)``), the time added to ``interval``: room for
    /// the request's trip when a permit is taken without an operation (a wrapped operation is
    /// counted when it ends, after its request arrived); `nil` for a token bucket.
    ///
    /// ```swift
    /// let trip = RateLimit.window(10, per: .seconds(1)).margin   // 50 ms
    /// ```
    public let margin: Duration?
    /// The window a window limit's call is measured against: `nil` for a token bucket, and for
    /// a window limit with no limit (an `interval` of zero or less).
    let window: WindowLimitSpan?
    /// Whether an operation's error that carries a retry-after holds the key until then, for
    /// every caller (see ``holdingOnRetryAfter(_:)``); `false` unless asked.
    ///
    /// ```swift
    /// let listens = RateLimit.window(10, per: .seconds(1)).holdingOnRetryAfter()
    ///     .holdsOnRetryAfter   // true
    /// ```
    public internal(set) var holdsOnRetryAfter = false

    /// The limit as text, such as `10 per 1.000 s, burst 10`, or for a window limit
    /// `10 in any 1.000 s, margin 50.0 ms`.
    ///
    /// ```swift
    /// print(RateLimit(10, per: .seconds(1)))
    /// ```
    public var description: String {
        if let margin {
            return "\(permits) in any \(formatDuration(interval)), margin \(formatDuration(margin))"
        }
        return "\(permits) per \(formatDuration(interval)), burst \(burst)"
    }

    /// The bucket a call is measured against: the time one permit takes to refill
    /// (`interval / permits`, rounded up) and the burst; `nil` when there is no limit
    /// (`interval` of zero or less), a burst of zero when no permit is ever added. The burst is
    /// capped so that a full bucket spans at most half of `Duration`'s range (a burst that
    /// lasts billions of years is no different from one that lasts longer), and at least 1, so
    /// the arithmetic on instants saturates only for a refill of that size.
    private static func bucket(permits: Int, interval: Duration, burst: Int) -> (
        refill: Duration, burst: Int
    )? {
        guard interval > .zero else { return nil }
        guard permits > 0 else { return (.saturatedMax, 0) }
        let (quotient, remainder) = interval.attoseconds.quotientAndRemainder(
            dividingBy: Int128(permits))
        let refill = remainder == 0 ? quotient : quotient + 1
        let cap = max(Int(clamping: Int128.max / 2 / refill), 1)
        return (Duration(attoseconds: refill), min(burst, cap))
    }
}

/// What a rate-limited call does when no permit is free.
///
/// ```swift
/// try await rateLimit(RateLimit(10, per: .seconds(1)), whenLimited: .reject) {
///     try await ping()
/// }
/// ```
public struct RateLimitPolicy: Sendable, Hashable {
    /// How long a call may wait for its permit: `nil` as long as it takes, zero not at all.
    package let maxWait: Duration?

    /// Waits, first in first out, as long as it takes (cancelling the task stops the wait).
    ///
    /// ```swift
    /// try await rateLimit(RateLimit(2, per: .seconds(1)), whenLimited: .wait) {
    ///     try await api.ping()
    /// }
    /// ```
    public static let wait = RateLimitPolicy(maxWait: nil)

    /// Waits at most `limit`, then throws ``RateLimitError/limited(retryAfter:)``. Zero or less
    /// is ``reject``.
    ///
    /// ```swift
    /// let policy = RateLimitPolicy.wait(atMost: .seconds(2))
    /// ```
    ///
    /// - Parameter limit: The longest a call waits for its permits.
    /// - Returns: The policy.
    public static func wait(atMost limit: Duration) -> RateLimitPolicy {
        RateLimitPolicy(maxWait: max(limit, .zero))
    }

    /// Does not wait: throws ``RateLimitError/limited(retryAfter:)`` at once.
    ///
    /// ```swift
    /// try await rateLimit(RateLimit(2, per: .seconds(1)), whenLimited: .reject) {
    ///     try await api.ping()
    /// }
    /// ```
    public static let reject = RateLimitPolicy(maxWait: .zero)
}

/// Why a rate-limited call did not get its permit.
///
/// It conforms to ``RetryAfterProviding``, so `retry` around a rejecting call waits exactly
/// until a permit is free:
///
/// ```swift
/// let answer = try await retry(3) {
///     try await rateLimit(RateLimit(1, per: .seconds(1)), whenLimited: .reject) {
///         "sent"
///     }
/// }
/// ```
public enum RateLimitError: Error, Equatable, Hashable, Sendable, RetryAfterProviding {
    /// No permit was free (``RateLimitPolicy/reject``), or none came within the maximum wait.
    /// `retryAfter` is how long a call of the same weight made now would wait, counting the
    /// calls already waiting, if no other call came and none gave up.
    ///
    /// ```swift
    /// let failure: any Error = RateLimitError.limited(retryAfter: .seconds(1))
    /// if case .limited(let after)? = failure as? RateLimitError {
    ///     print("try again in \(after)")
    /// }
    /// ```
    case limited(retryAfter: Duration)
    /// The call asks for more permits than the bucket ever holds (`weight` above `burst`, or a
    /// limit of zero permits, whose burst is zero): it can never be admitted.
    ///
    /// ```swift
    /// // Throws RateLimitError.cannotAdmit(weight: 5, burst: 2).
    /// try? takeRatePermit(RateLimit(2, per: .seconds(1)), weight: 5)
    /// ```
    case cannotAdmit(weight: Int, burst: Int)

    /// The wait `retry` takes before its next attempt: `retryAfter` for ``limited(retryAfter:)``,
    /// `nil` (the backoff's own wait) for ``cannotAdmit(weight:burst:)``.
    ///
    /// ```swift
    /// let wait = RateLimitError.limited(retryAfter: .milliseconds(250)).retryAfter
    /// ```
    public var retryAfter: Duration? {
        if case .limited(let after) = self { return after }
        return nil
    }
}
