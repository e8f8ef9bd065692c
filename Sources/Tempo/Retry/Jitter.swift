/// How `retry` randomises each wait, to keep many clients from retrying in lockstep.
///
/// With `d` the backoff's delay for this retry, `base` its ``RetryBackoff/initial`` delay and
/// `cap` its ``RetryBackoff/maximum``:
/// - ``none``: `d`
/// - ``full``: `random(0, d)`
/// - ``equal``: `d/2 + random(0, d/2)`
/// - ``decorrelated``: `min(cap, random(base, previous × 3))`, `previous` being the last wait
///   chosen (initially `base`); the backoff's growth is not used.
///
/// `random(a, b)` draws one `UInt64` `r` from the random source and returns
/// `a + (b − a) × r / 2⁶⁴` (in attoseconds, rounded down), so a seeded source gives an exact,
/// reproducible schedule.
///
/// ```swift
/// try await retry(
///     5, backoff: .exponential(initial: .milliseconds(100)), jitter: .full
/// ) {
///     try await api.fetch()
/// }
/// ```
public struct RetryJitter: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case none, full, equal, decorrelated
    }

    let kind: Kind

    /// No randomness: wait exactly the backoff's delay.
    ///
    /// ```swift
    /// try await retry(3, backoff: .constant(.seconds(1)), jitter: .none) {
    ///     try await ping()
    /// }
    /// ```
    public static let none = RetryJitter(kind: .none)
    /// `random(0, d)`: anywhere between no wait and the backoff's delay.
    ///
    /// ```swift
    /// try await retry(5, backoff: .exponential(initial: .milliseconds(50)), jitter: .full) {
    ///     try await api.fetch()
    /// }
    /// ```
    public static let full = RetryJitter(kind: .full)
    /// `d/2 + random(0, d/2)`: at least half the backoff's delay.
    ///
    /// ```swift
    /// try await retry(
    ///     5, backoff: .exponential(initial: .milliseconds(50)), jitter: .equal
    /// ) {
    ///     try await api.fetch()
    /// }
    /// ```
    public static let equal = RetryJitter(kind: .equal)
    /// `min(cap, random(base, previous × 3))`, after the AWS architecture blog's
    /// "decorrelated jitter".
    ///
    /// ```swift
    /// try await retry(
    ///     8, backoff: .exponential(initial: .milliseconds(50), maximum: .seconds(5)),
    ///     jitter: .decorrelated
    /// ) {
    ///     try await api.fetch()
    /// }
    /// ```
    public static let decorrelated = RetryJitter(kind: .decorrelated)

    /// The wait before retry number `retry`, given the previous wait chosen.
    func delay(
        forRetry retry: Int, backoff: RetryBackoff, previous: Duration,
        using random: inout some RandomNumberGenerator
    ) -> Duration {
        switch kind {
        case .none:
            return backoff.delay(forRetry: retry)
        case .full:
            return uniform(.zero, backoff.delay(forRetry: retry), using: &random)
        case .equal:
            let delay = backoff.delay(forRetry: retry)
            let half = Duration(attoseconds: delay.attoseconds / 2)
            return half.adding(uniform(.zero, half, using: &random))
        case .decorrelated:
            let base = max(backoff.initial, .zero)
            let upper = max(previous, base).saturatingMultiplied(by: 3)
            return min(backoff.cap, uniform(base, upper, using: &random))
        }
    }
}

/// `lower + (upper − lower) × r / 2⁶⁴` for one draw `r`; `lower` when `upper <= lower`.
/// Both bounds must be non-negative.
func uniform(
    _ lower: Duration, _ upper: Duration, using random: inout some RandomNumberGenerator
) -> Duration {
    guard upper > lower else { return lower }
    let span = UInt128(upper.attoseconds - lower.attoseconds)
    let draw = UInt128(random.next())
    let high = span >> 64
    let low = span & UInt128(UInt64.max)
    let offset = high * draw + (low * draw) >> 64
    return Duration(attoseconds: lower.attoseconds + Int128(offset))
}
