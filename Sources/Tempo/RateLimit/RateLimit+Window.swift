// The window limit: at most N calls in any rolling window (a wrapped operation counted when it
// ends), the form that keeps a client under a service's published "N requests per W".

/// What a window limit's call is measured against: at most `permits` slots taken at once, a
/// slot held from the call's admission until `span` (the window plus its margin) after the
/// instant the call is counted.
struct WindowLimitSpan: Sendable, Hashable {
    var permits: Int
    var span: Duration
}

extension RateLimit {
    /// At most `permits` calls counted in any rolling window of `interval`, plus `margin`, a
    /// call that wraps an operation counted when it ends: the limit to use when a service
    /// publishes "`permits` requests per `interval`".
    ///
    /// Each call holds a slot from its admission until `interval + margin` after the instant
    /// it is counted, and a call is admitted when it finds a slot free: up to `permits` calls
    /// pass at once, and the next one when the oldest of the last `permits` counted is
    /// `interval + margin` old (exactly then: what ends comes first, as everywhere in Tempo).
    /// A call that wraps an operation (`rateLimit(_:…) { … }`), admitted at once or as a
    /// waiter, is counted at the instant the operation returns or throws: a service counts a
    /// request when it arrives, before the operation that sent it returns, so it never counts
    /// more than `permits` in any `interval`, however late the task resumed or the request
    /// travelled. Its slot is busy for the operation's duration plus `interval` plus `margin`.
    /// A call without an operation (``takeRatePermit(_:weight:identifier:fileID:line:column:)``,
    /// or `rateLimit` without a closure) is counted at its admission, a waiter when its task
    /// resumes. A waiter cancelled before its operation starts gives its slot back. A weight
    /// counts as that many calls, held and counted together. It is used with the same
    /// functions as a token bucket
    /// (``rateLimit(_:weight:whenLimited:identifier:fileID:line:column:operation:)``,
    /// ``takeRatePermit(_:weight:identifier:fileID:line:column:)``, ``resetRateLimit(identifier:)``),
    /// waits first in first out or refuses with the time a slot is free, in the same way.
    ///
    /// The margin is the room between the limit's count and the server's. For a call that wraps
    /// its operation it covers only the server's own rounding; for a call without one it is
    /// room for the request's trip: a server counts arrivals, and a request sent a little
    /// later after its permit than the one `permits` before it can arrive a little sooner. Its
    /// default, ``defaultMargin(for:)``, is 5% of `interval`, at least 50 ms and at most 1 s.
    ///
    /// ```swift
    /// let github = RateLimit.window(10, per: .seconds(1))   // never 11 in any 1.05 s
    /// try await rateLimit(github, identifier: "github") {
    ///     try await api.ping()
    /// }
    /// ```
    ///
    /// A key remembers at most `permits` instants, those of its last counts (runs counted at
    /// one instant are kept as one), and only those in the window, so its memory is bounded by
    /// the limit and by the calls of the last window, whichever is smaller. Every value is safe:
    /// - `interval` of zero or less: no limit; every call is admitted at once.
    /// - `permits` of zero or less (with a positive `interval`): every call that asks for a
    ///   permit throws ``RateLimitError/cannotAdmit(weight:burst:)`` at once (`burst` 0; in a task
    ///   already cancelled, `CancellationError`, as for any call).
    /// - `margin` below zero: zero. A window plus margin beyond `Duration`'s range saturates.
    ///
    /// - Parameters:
    ///   - permits: The most calls counted in any window, running operations included; also
    ///     the most that can pass at once.
    ///   - interval: The window, as the service counts it.
    ///   - margin: Added to the window, for what the service counts differently (for a call
    ///     without an operation, the request's trip); `nil` (the default) is
    ///     ``defaultMargin(for:)``.
    /// - Returns: The window limit.
    public static func window(
        _ permits: Int, per interval: Duration, margin: Duration? = nil
    ) -> RateLimit {
        RateLimit(windowOf: permits, per: interval, margin: margin ?? defaultMargin(for: interval))
    }

    /// The margin ``window(_:per:margin:)`` adds by default: 5% of `interval`, at least 50 ms
    /// and at most 1 s (zero for an `interval` of zero or less).
    ///
    /// A call that wraps its operation is counted when the operation ends, after its request
    /// arrived, and leaves the margin only the server's own rounding. For a call without an
    /// operation, counted at its admission, the margin must cover the spread of the requests'
    /// trips: how much sooner one request can reach the server after its permit than the
    /// request `permits` before it did. That spread does not grow with the window, so the
    /// floor is absolute (50 ms covered the spread of local clients on a loaded machine, see
    /// <doc:RateLimitingWindow#How-the-default-margin-was-measured>) and the ceiling keeps a
    /// long window from waiting seconds for nothing; 5% keeps 95% of the allowed rate for
    /// windows of a second and more (a call that wraps its operation also holds its slot for
    /// the operation's duration).
    /// Pass your own margin when your trips spread wider (a distant server, a connection pool
    /// that queues requests) or for a short window whose rate matters more.
    ///
    /// ```swift
    /// let trip = RateLimit.defaultMargin(for: .seconds(1))   // 50 ms
    /// let long = RateLimit.defaultMargin(for: .seconds(60))  // 1 s
    /// ```
    ///
    /// - Parameter interval: The window.
    /// - Returns: The margin.
    public static func defaultMargin(for interval: Duration) -> Duration {
        guard interval > .zero else { return .zero }
        return min(max(interval / 20, .milliseconds(50)), .seconds(1))
    }

    /// Whether this is a window limit, made by ``window(_:per:margin:)``.
    ///
    /// ```swift
    /// let rolling = RateLimit.window(10, per: .seconds(1)).isWindow   // true
    /// ```
    public var isWindow: Bool { margin != nil }

    private init(windowOf permits: Int, per interval: Duration, margin: Duration) {
        self.permits = permits
        self.interval = interval
        burst = max(permits, 1)
        bucket = nil
        let margin = max(margin, .zero)
        self.margin = margin
        window =
            interval > .zero
            ? WindowLimitSpan(permits: max(permits, 0), span: interval.adding(margin)) : nil
    }
}

extension RateLimit {
    /// What a limit measures a call against, for a store outside the process (TempoRedis):
    /// nothing, a window of `permits` starts in `span` (the interval and its margin), or a
    /// bucket whose permit refills in `refill`, at most `burst` at once (zero: no permit is
    /// ever free).
    package enum Measure: Sendable, Equatable {
        case unlimited
        case window(permits: Int, span: Duration)
        case bucket(refill: Duration, burst: Int)
    }

    /// What a call of this limit is measured against (see ``Measure``).
    package var measure: Measure {
        if margin != nil {
            guard let window else { return .unlimited }
            return .window(permits: window.permits, span: window.span)
        }
        guard let bucket else { return .unlimited }
        return .bucket(refill: bucket.refill, burst: bucket.burst)
    }
}
