/// The error `retry` throws, before running anything, when its arguments are invalid.
///
/// ```swift
/// do {
///     _ = try await retry(0) { try await ping() }
/// } catch RetryError.invalidAttemptCount(let n) {
///     print("bad attempt count \(n)")
/// }
/// ```
public enum RetryError: Error, Equatable, Hashable, Sendable {
    /// `maxAttempts` was zero or negative; the associated value is what was passed.
    ///
    /// ```swift
    /// try await retry(0) { 1 }  // throws RetryError.invalidAttemptCount(0)
    /// ```
    case invalidAttemptCount(Int)
}

/// An error that says how long to wait before trying again, such as an HTTP 503 or 429 with a
/// `Retry-After` header.
///
/// When an attempt of `retry` fails with such an error and ``retryAfter`` is not `nil`, that
/// delay replaces the backoff and jitter for this one wait, capped by the backoff's
/// ``RetryBackoff/maximum`` (a negative value retries at once).
///
/// ``HTTPStatusError`` is one, made from a response's status code and `Retry-After` header:
///
/// ```swift
/// // A 503 with `Retry-After: 120`: `retry` starts its next attempt 120 s later.
/// throw HTTPStatusError(status: 503, retryAfterHeader: "120")
/// ```
public protocol RetryAfterProviding: Error {
    /// How long the server asked to wait, or `nil` to use the backoff.
    ///
    /// ```swift
    /// let error: any Error = HTTPStatusError(status: 429, retryAfterHeader: "3")
    /// let wait = (error as? any RetryAfterProviding)?.retryAfter  // .seconds(3)
    /// ```
    var retryAfter: Duration? { get }
}

/// Runs `operation` until it succeeds, at most `maxAttempts` times in all, waiting `delay`
/// after each failure that has attempts left, on the current registry's clock.
///
/// `retry(3, every: .milliseconds(300))` is three attempts: the first at once, the next two
/// each 300 ms after a failure. The first success returns; after the last failure its error is
/// thrown. `CancellationError` is never retried; cancelling the caller during an attempt or a
/// wait throws `CancellationError`. Attempts never overlap. `maxAttempts <= 0` throws
/// ``RetryError/invalidAttemptCount(_:)`` without running. A zero or negative delay retries at
/// once. An error conforming to ``RetryAfterProviding`` chooses its own wait. A `budget`
/// (``RetryBudget``) caps the retries shared under its identifier, and `timeBudget` the time
/// in which retries may start; when either allows no more, the last error is thrown at once.
///
/// The retry appears in ``TempoRegistry/snapshot()`` under its call site while it runs.
///
/// ```swift
/// let user = try await retry(
///     3, every: .milliseconds(300)
/// ) {
///     try await api.user(id)
/// }
/// ```
///
/// Pass `clock:` to measure on another clock: `nil`, the default, is the current registry's clock.
///
/// ```swift
/// let clock = ManualClock()
/// let value = try await retry(3, every: .seconds(1), clock: clock) { try await flaky() }
/// ```
///
/// - Parameters:
///   - maxAttempts: How many attempts in all, the first included. Defaults to 3.
///   - delay: The wait after each failure that has attempts left. Defaults to 1 second.
///   - budget: The ``RetryBudget`` every retry must withdraw from; `nil` (the default): none.
///   - timeBudget: How long after the call retries may start; `nil` (the default): no limit.
///   - clock: The clock to wait on; `nil` (the default) is the current registry's clock.
///   - isolation: The actor the attempts run on: the caller's, filled in for you.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the retry.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: One attempt.
/// - Returns: The value of the first attempt that succeeds.
/// - Throws: The last attempt's error when every attempt failed, or when `budget` or
///   `timeBudget` allowed no more; `CancellationError` when the caller is cancelled (or an attempt throws it); ``RetryError/invalidAttemptCount(_:)``
///   when `maxAttempts` is zero or negative.
public func retry<Value>(
    _ maxAttempts: Int = 3,
    every delay: Duration = .seconds(1),
    budget: RetryBudget? = nil,
    timeBudget: Duration? = nil,
    clock: (any Clock<Duration>)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: () async throws -> Value
) async throws -> Value {
    var random = SystemRandomNumberGenerator()
    return try await runRetry(
        maxAttempts: maxAttempts, backoff: .constant(delay), jitter: .none, random: &random,
        shouldRetry: nil, onRetry: nil, budget: budget, timeBudget: timeBudget,
        clock: HelperClock(clock),
        site: HelperSite(fileID, line, column), operation: operation)
}

/// Runs `operation` until it succeeds, at most `maxAttempts` times in all, waiting after each
/// failure as `backoff` and `jitter` say, on the current registry's clock.
///
/// - A failure is retried when attempts are left and `shouldRetry` (default: always) says so;
///   `CancellationError` never is, whatever `shouldRetry` says, and cancelling the caller during
///   an attempt or a wait throws `CancellationError`.
/// - Before each wait `onRetry` is told the attempt that failed (1-based), its error and the
///   wait chosen.
/// - An error conforming to ``RetryAfterProviding`` with a non-`nil` delay sets that wait
///   itself, capped by `backoff`'s maximum.
/// - `random` is copied for this call; pass a seeded generator for a reproducible schedule.
/// - `budget` (``RetryBudget``): the call deposits when its first attempt starts, and each
///   retry must withdraw one retry from the balance shared under the budget's identifier; a
///   retry it refuses is not made, `onRetry` is not told, and the last error is thrown.
/// - `timeBudget`: no attempt starts, and no wait ends, at or after the call's start plus
///   `timeBudget`. A wait that would end there or later is not slept: the last error is thrown
///   at once. The running attempt is not cut short; bound each attempt with `timeout`.
///
/// ```swift
/// let data = try await retry(
///     5,
///     backoff: .exponential(
///         initial:
///             .milliseconds(200),
///         multiplier: 2,
///         maximum: .seconds(5)
///     ),
///     jitter: .equal,
///     shouldRetry: {
///         !($0 is DecodingError)
///     },
///     onRetry: { n, error, wait in
///         log("attempt \(n) failed")
///         log(error)
///         log("retry in \(wait)")
///     }
/// ) {
///     try await api.download(url)
/// }
/// ```
///
/// Pass `clock:` to measure on another clock: `nil`, the default, is the current registry's clock.
///
/// ```swift
/// let clock = ManualClock()
/// let task = Task {
///     try await retry(4, backoff: .linear(initial: .seconds(1)), clock: clock) {
///         try await f()
///     }
/// }
/// ```
///
/// - Parameters:
///   - maxAttempts: How many attempts in all, the first included. Defaults to 3.
///   - backoff: The wait after each failure, before jitter.
///   - jitter: How each wait is randomised. Defaults to ``RetryJitter/none``.
///   - random: The source `jitter` draws from, copied for this call; a seeded generator gives
///     a reproducible schedule. Defaults to `SystemRandomNumberGenerator`.
///   - shouldRetry: Asked, when attempts are left, whether to retry after this error; `nil`
///     (the default) retries every error but `CancellationError`.
///   - onRetry: Told before each wait the attempt that failed (1-based), its error and the
///     wait chosen (zero included). `nil` (the default): nothing is told. A registry's
///     observer is told the same, for every `retry`, as
///     ``TempoEvent/Decision/retryScheduled(attempt:error:delay:)``, and why a retry stopped
///     (<doc:ObservingDecisions>).
///   - budget: The ``RetryBudget`` every retry must withdraw from; `nil` (the default): none.
///     A retry it refuses is not retried, and `onRetry` is not told.
///   - timeBudget: How long after the call retries may start: no attempt starts, and no wait
///     ends, at or after the call's start plus `timeBudget` (zero or negative: the first
///     attempt only). `nil` (the default): no limit.
///   - clock: The clock to wait on; `nil` (the default) is the current registry's clock.
///   - isolation: The actor the attempts run on: the caller's, filled in for you.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the retry.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: One attempt.
/// - Returns: The value of the first attempt that succeeds.
/// - Throws: The last attempt's error when every attempt failed, or when `budget` or
///   `timeBudget` allowed no more, or the error `shouldRetry` declined; `CancellationError` when the caller is cancelled (or an attempt throws it);
///   ``RetryError/invalidAttemptCount(_:)`` when `maxAttempts` is zero or negative.
public func retry<Value>(
    _ maxAttempts: Int = 3,
    backoff: RetryBackoff,
    jitter: RetryJitter = .none,
    random: some RandomNumberGenerator = SystemRandomNumberGenerator(),
    shouldRetry: ((any Error) -> Bool)? = nil,
    onRetry: ((_ attempt: Int, _ error: any Error, _ delay: Duration) -> Void)? = nil,
    budget: RetryBudget? = nil,
    timeBudget: Duration? = nil,
    clock: (any Clock<Duration>)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: () async throws -> Value
) async throws -> Value {
    var random = random
    return try await runRetry(
        maxAttempts: maxAttempts, backoff: backoff, jitter: jitter, random: &random,
        shouldRetry: shouldRetry, onRetry: onRetry, budget: budget, timeBudget: timeBudget,
        clock: HelperClock(clock),
        site: HelperSite(fileID, line, column), operation: operation)
}
