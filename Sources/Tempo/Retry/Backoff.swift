/// How long `retry` waits between attempts, before jitter: constant, linear or exponential,
/// never above an optional maximum.
///
/// Every delay is computed with saturating arithmetic: growth that would overflow stops at the
/// maximum (or at the largest `Duration` when there is none), so no attempt count traps.
///
/// ```swift
/// let backoff = RetryBackoff.exponential(
///     initial: .milliseconds(100), multiplier: 2, maximum: .seconds(5))
/// backoff.delay(forRetry: 1)  // 100 ms
/// backoff.delay(forRetry: 4)  // 800 ms
/// backoff.delay(forRetry: 10) // 5 s (capped)
/// ```
public struct RetryBackoff: Sendable, Hashable {
    enum Growth: Sendable, Hashable {
        case constant
        case linear(Duration)
        case exponential(Double)
    }

    /// The first wait (after the first failure). Zero or negative waits retry at once.
    ///
    /// ```swift
    /// RetryBackoff.linear(initial: .seconds(1)).initial  // 1 s
    /// ```
    public let initial: Duration
    /// The longest wait, if any. It also caps a retry-after delay supplied by an error.
    ///
    /// ```swift
    /// RetryBackoff.exponential(initial: .seconds(1), maximum: .seconds(30)).maximum  // 30 s
    /// ```
    public let maximum: Duration?
    let growth: Growth

    /// The same wait after every failure.
    ///
    /// ```swift
    /// try await retry(4, backoff: .constant(.milliseconds(250))) { try await ping() }
    /// ```
    ///
    /// - Parameter delay: The wait after each failure; zero or negative retries at once.
    /// - Returns: A backoff whose every wait is `delay`, with no maximum.
    public static func constant(_ delay: Duration) -> RetryBackoff {
        RetryBackoff(initial: delay, maximum: nil, growth: .constant)
    }

    /// A wait that grows by `increment` (by default `initial`) after every failure:
    /// `initial`, `initial + increment`, `initial + 2 × increment`, ..., up to `maximum`.
    ///
    /// ```swift
    /// let backoff = RetryBackoff.linear(initial: .seconds(1), maximum: .seconds(5))
    /// // waits 1 s, 2 s, 3 s, 4 s, 5 s, 5 s, ...
    /// ```
    ///
    /// - Parameters:
    ///   - initial: The first wait; zero or negative counts as zero.
    ///   - increment: What each later wait adds; `nil` (the default) is `initial`. Zero or
    ///     negative adds nothing.
    ///   - maximum: The longest wait; `nil` (the default): no maximum.
    /// - Returns: The linear backoff.
    public static func linear(
        initial: Duration, increment: Duration? = nil, maximum: Duration? = nil
    ) -> RetryBackoff {
        RetryBackoff(initial: initial, maximum: maximum, growth: .linear(increment ?? initial))
    }

    /// A wait multiplied by `multiplier` after every failure:
    /// `initial`, `initial × multiplier`, `initial × multiplier²`, ..., up to `maximum`.
    /// A multiplier below 1 (or not a number) is taken as 1.
    ///
    /// ```swift
    /// let backoff = RetryBackoff.exponential(
    ///     initial: .milliseconds(100), maximum: .seconds(10))
    /// // waits 100 ms, 200 ms, 400 ms, ..., 10 s, 10 s, ...
    /// ```
    ///
    /// - Parameters:
    ///   - initial: The first wait; zero or negative counts as zero.
    ///   - multiplier: What each wait is multiplied by for the next. Defaults to 2; below 1
    ///     (or not a number) it is 1.
    ///   - maximum: The longest wait; `nil` (the default): no maximum.
    /// - Returns: The exponential backoff.
    public static func exponential(
        initial: Duration, multiplier: Double = 2, maximum: Duration? = nil
    ) -> RetryBackoff {
        let multiplier = multiplier >= 1 ? multiplier : 1
        return RetryBackoff(initial: initial, maximum: maximum, growth: .exponential(multiplier))
    }

    /// The wait before retry number `retry` (1 is the wait after the first failed attempt),
    /// before jitter: never negative, never above ``maximum``.
    ///
    /// ```swift
    /// RetryBackoff.linear(initial: .seconds(1)).delay(forRetry: 3)  // 3 s
    /// ```
    ///
    /// - Parameter retry: Which retry: 1 for the wait after the first failed attempt. Values
    ///   below 1 count as 1.
    /// - Returns: The wait, between zero and ``maximum`` (or the largest `Duration`).
    public func delay(forRetry retry: Int) -> Duration {
        let cap = cap
        let base = max(initial, .zero)
        let steps = max(retry, 1) - 1
        let raw: Duration
        switch growth {
        case .constant:
            raw = base
        case .linear(let increment):
            raw = base.adding(max(increment, .zero).saturatingMultiplied(by: steps))
        case .exponential(let multiplier):
            raw = Self.grow(base, by: multiplier, steps: steps, cap: cap)
        }
        return min(raw, cap)
    }

    /// The cap: ``maximum``, or the largest duration. Never negative.
    var cap: Duration { max(maximum ?? .saturatedMax, .zero) }

    /// `base × multiplier^steps`, stopping at `cap`.
    private static func grow(_ base: Duration, by multiplier: Double, steps: Int, cap: Duration)
        -> Duration
    {
        if base == .zero || multiplier == 1 || steps == 0 { return base }
        if multiplier == multiplier.rounded(), multiplier < 1e18 {
            // Exact integer arithmetic; at most ~127 doublings before reaching any cap.
            let factor = Int(multiplier)
            var value = base
            for _ in 0..<steps {
                value = value.saturatingMultiplied(by: factor)
                if value >= cap { return cap }
            }
            return value
        }
        let scaled = Double(base.attoseconds) * power(multiplier, Double(steps))
        guard scaled.isFinite, scaled < Double(cap.attoseconds) else { return cap }
        return Duration(attoseconds: Int128(scaled))
    }
}

/// `x^y` for the backoff, without Foundation: exact by squaring for integral `y`.
private func power(_ x: Double, _ y: Double) -> Double {
    var result = 1.0
    var base = x
    var exponent = y
    while exponent >= 1 {
        if exponent.truncatingRemainder(dividingBy: 2) == 1 { result *= base }
        base *= base
        exponent = (exponent / 2).rounded(.down)
        if !result.isFinite { return .infinity }
    }
    return result
}
