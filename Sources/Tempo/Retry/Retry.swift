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
/// ```swift
/// struct ServiceUnavailable: RetryAfterProviding {
///     var retryAfter: Duration?   // parsed from the Retry-After header
/// }
/// ```
public protocol RetryAfterProviding: Error {
    /// How long the server asked to wait, or `nil` to use the backoff.
    ///
    /// ```swift
    /// var retryAfter: Duration? { seconds.map { .seconds($0) } }
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
/// once. An error conforming to ``RetryAfterProviding`` chooses its own wait.
///
/// The retry appears in ``TempoRegistry/snapshot()`` under its call site while it runs.
///
/// ```swift
/// let user = try await retry(3, every: .milliseconds(300)) { try await api.user(id) }
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
///   - clock: The clock to wait on; `nil` (the default) is the current registry's clock.
///   - isolation: The actor the attempts run on: the caller's, filled in for you.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the retry.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: One attempt.
/// - Returns: The value of the first attempt that succeeds.
/// - Throws: The last attempt's error when every attempt failed; `CancellationError` when the
///   caller is cancelled (or an attempt throws it); ``RetryError/invalidAttemptCount(_:)``
///   when `maxAttempts` is zero or negative.
public func retry<Value>(
    _ maxAttempts: Int = 3,
    every delay: Duration = .seconds(1),
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
        shouldRetry: nil, onRetry: nil, clock: HelperClock(clock),
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
///
/// ```swift
/// let data = try await retry(
///     5,
///     backoff: .exponential(
///         initial: .milliseconds(200), multiplier: 2, maximum: .seconds(5)),
///     jitter: .equal,
///     shouldRetry: { !($0 is DecodingError) },
///     onRetry: { attempt, error, wait in
///         log("attempt \(attempt) failed: \(error); in \(wait)")
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
///     wait chosen (zero included). `nil` (the default): nothing is told.
///   - clock: The clock to wait on; `nil` (the default) is the current registry's clock.
///   - isolation: The actor the attempts run on: the caller's, filled in for you.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the retry.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: One attempt.
/// - Returns: The value of the first attempt that succeeds.
/// - Throws: The last attempt's error when every attempt failed, or the error `shouldRetry`
///   declined; `CancellationError` when the caller is cancelled (or an attempt throws it);
///   ``RetryError/invalidAttemptCount(_:)`` when `maxAttempts` is zero or negative.
public func retry<Value>(
    _ maxAttempts: Int = 3,
    backoff: RetryBackoff,
    jitter: RetryJitter = .none,
    random: some RandomNumberGenerator = SystemRandomNumberGenerator(),
    shouldRetry: ((any Error) -> Bool)? = nil,
    onRetry: ((_ attempt: Int, _ error: any Error, _ delay: Duration) -> Void)? = nil,
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
        shouldRetry: shouldRetry, onRetry: onRetry, clock: HelperClock(clock),
        site: HelperSite(fileID, line, column), operation: operation)
}

/// The one retry loop behind every overload.
private func runRetry<Value>(
    isolation: isolated (any Actor)? = #isolation,
    maxAttempts: Int,
    backoff: RetryBackoff,
    jitter: RetryJitter,
    random: inout some RandomNumberGenerator,
    shouldRetry: ((any Error) -> Bool)?,
    onRetry: ((Int, any Error, Duration) -> Void)?,
    clock: HelperClock,
    site: HelperSite,
    operation: () async throws -> Value
) async throws -> Value {
    guard maxAttempts > 0 else { throw RetryError.invalidAttemptCount(maxAttempts) }
    let registry = clock.registry
    var attempt = 1
    let id = site.begin(
        .retry, in: registry,
        state: .retrying(attempt: attempt, maxAttempts: maxAttempts, waitingUntil: nil))
    defer { registry.endRunningWork(id) }
    var previous = max(backoff.initial, .zero)
    while true {
        do {
            try Task.checkCancellation()
            return try await operation()
        } catch {
            if error is CancellationError { throw error }
            if Task.isCancelled { throw CancellationError() }
            guard attempt < maxAttempts, shouldRetry?(error) ?? true else { throw error }
            var wait = jitter.delay(
                forRetry: attempt, backoff: backoff, previous: previous, using: &random)
            if let provider = error as? any RetryAfterProviding, let after = provider.retryAfter {
                wait = min(max(after, .zero), backoff.cap)
            }
            previous = wait
            onRetry?(attempt, error, wait)
            if wait > .zero {
                let deadline = clock.now().adding(wait)
                registry.updateRunningWork(
                    id,
                    .retrying(
                        attempt: attempt, maxAttempts: maxAttempts,
                        waitingUntil: clock.registryInstant(deadline)))
                try await clock.sleep(until: deadline)
            }
            try Task.checkCancellation()
            attempt += 1
            registry.updateRunningWork(
                id, .retrying(attempt: attempt, maxAttempts: maxAttempts, waitingUntil: nil))
        }
    }
}
