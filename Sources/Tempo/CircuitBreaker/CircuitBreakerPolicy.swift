// The settings of a circuit breaker, its three states, and the error of a rejected call.

/// When a circuit breaker opens, how long it stays open, and how it tries again.
///
/// A closed breaker counts the outcomes of its calls in a sliding ``window``. Once the window
/// holds at least ``minimumCalls`` calls and the share of failures in it is at least
/// ``failureRatio``, the breaker opens: calls are rejected at once, for ``breakDuration``.
/// Then it is half-open: it admits ``trialCalls`` trial calls; when all of them succeed it
/// closes, when one fails it opens again, each time for twice the previous break when
/// ``maximumBreakDuration`` is set (up to it), for ``breakDuration`` again when it is `nil`.
/// Each error a call throws is a failure, a success or ignored (neither): see ``isFailure``
/// and ``isIgnored``; Tempo's own refusals and cancellation are always ignored.
///
/// ```swift
/// let policy = CircuitBreakerPolicy(
///     failureRatio: 0.5, window: .lastCalls(20), minimumCalls: 10,
///     breakDuration: .seconds(5), maximumBreakDuration: .seconds(60))
/// ```
///
/// Out-of-range settings are not trapped: a ``window`` of fewer than one call or a zero or
/// negative duration, a ``failureRatio`` that is not in `0 < ratio <= 1` (NaN included) and
/// ``trialCalls`` below one make the call throw ``CircuitBreakerError/invalidPolicy(_:)``
/// without running. ``minimumCalls`` below one means one, and above the count of a
/// ``Window/lastCalls(_:)`` window (which never holds more) that count; a negative
/// ``breakDuration`` means zero (half-open at the next call); a ``maximumBreakDuration`` below
/// ``breakDuration`` means ``breakDuration``.
public struct CircuitBreakerPolicy: Sendable {
    /// Which calls the failure ratio is measured over.
    ///
    /// ```swift
    /// let byCount = CircuitBreakerPolicy.Window.lastCalls(50)
    /// let byTime = CircuitBreakerPolicy.Window.lastDuration(.seconds(30))
    /// ```
    public enum Window: Sendable, Hashable {
        /// The outcomes of the last `count` calls that ended while the breaker was closed.
        ///
        /// ```swift
        /// let window = CircuitBreakerPolicy.Window.lastCalls(20)
        /// ```
        case lastCalls(Int)
        /// The outcomes of the calls that ended in the last `duration` (on the registry's
        /// clock) while the breaker was closed: a call that ended at `t` leaves the window at
        /// `t + duration`.
        ///
        /// ```swift
        /// let window = CircuitBreakerPolicy.Window.lastDuration(.seconds(10))
        /// ```
        case lastDuration(Duration)
    }

    /// The share of failures in the window, from just above 0 to 1, at or above which the
    /// breaker opens. Defaults to 0.5.
    ///
    /// ```swift
    /// var policy = CircuitBreakerPolicy()
    /// policy.failureRatio = 0.25
    /// ```
    public var failureRatio: Double
    /// The calls the ratio is measured over. Defaults to the last 20 calls.
    ///
    /// ```swift
    /// var policy = CircuitBreakerPolicy()
    /// policy.window = .lastDuration(.seconds(30))
    /// ```
    public var window: Window
    /// The fewest calls the window must hold before the breaker can open. Defaults to 10.
    /// Below one it is one; above the count of a ``Window/lastCalls(_:)`` window it is that
    /// count, so `.lastCalls(5)` with the default opens once 5 calls are in.
    ///
    /// ```swift
    /// var policy = CircuitBreakerPolicy()
    /// policy.minimumCalls = 5
    /// ```
    public var minimumCalls: Int
    /// How long the breaker stays open before it admits trial calls. Defaults to 5 seconds.
    ///
    /// ```swift
    /// var policy = CircuitBreakerPolicy()
    /// policy.breakDuration = .seconds(30)
    /// ```
    public var breakDuration: Duration
    /// `nil` (the default): every break lasts ``breakDuration``. Otherwise each time a trial
    /// fails and the breaker opens again, the break is twice the previous one, up to this;
    /// it is back to ``breakDuration`` once the breaker closes.
    ///
    /// ```swift
    /// var policy = CircuitBreakerPolicy()
    /// policy.maximumBreakDuration = .seconds(120)   // 5, 10, 20, 40, 80, 120, 120 s
    /// ```
    public var maximumBreakDuration: Duration?
    /// How many trial calls a half-open breaker admits; it closes once all of them succeed.
    /// Defaults to 1.
    ///
    /// ```swift
    /// var policy = CircuitBreakerPolicy()
    /// policy.trialCalls = 3
    /// ```
    public var trialCalls: Int
    /// Whether an error the operation threw counts as a failure; an error it does not count is
    /// a success (the service answered). Defaults to counting every error.
    ///
    /// It is asked only about errors that are not ignored (see ``isIgnored``): never about
    /// `CancellationError`, an error thrown by a cancelled task, Tempo's own refusals
    /// (``RateLimitError``, ``ConcurrencyLimitError``, ``CircuitBreakerError``) or an error
    /// ``isIgnored`` returns `true` for. So what it returns can neither count a refusal as a
    /// failure nor close a half-open breaker on one.
    ///
    /// ```swift
    /// var policy = CircuitBreakerPolicy()
    /// policy.isFailure = { !($0 is DecodingError) }
    /// ```
    public var isFailure: @Sendable (any Error) -> Bool
    /// Whether an error the operation threw is ignored: counted neither as a failure nor as a
    /// success, in every state. A closed breaker leaves an ignored outcome out of its window;
    /// a half-open breaker's trial that ends ignored frees its trial slot (the next call may be
    /// the trial) and neither closes nor reopens the breaker. Defaults to `{ _ in false }`:
    /// only what is ignored always.
    ///
    /// Ignored always, whatever this and ``isFailure`` return, and passed to neither, are the
    /// errors that say nothing about the service:
    /// - Tempo's refusals, thrown in place of calling the operation inside the breaker: every
    ///   ``RateLimitError``, every ``ConcurrencyLimitError`` and every ``CircuitBreakerError``
    ///   (an inner breaker's), and TempoRedis's `SharedLimitStoreError` (a shared limit's store
    ///   failed, so the call was not made).
    /// - `CancellationError`, and any error thrown while the caller's task is cancelled.
    ///
    /// So an error is ignored when it is one of those or this returns `true` for it; any other
    /// error is a failure when ``isFailure`` returns `true` for it and a success when it
    /// returns `false`. Setting either predicate never undoes the defaults.
    ///
    /// It is a second predicate, not one classifier with three answers, so that every policy
    /// written with ``isFailure`` compiles unchanged and keeps its meaning for the errors that
    /// predicate is asked about: the third class is one more question, asked first.
    ///
    /// ```swift
    /// struct Maintenance: Error {}   // our own gate said no; the service was not asked
    /// var policy = CircuitBreakerPolicy()
    /// policy.isIgnored = { $0 is Maintenance }
    /// ```
    public var isIgnored: @Sendable (any Error) -> Bool
    /// Called once per change of state with the old state and the new one; see
    /// ``circuitBreaker(_:identifier:fileID:line:column:operation:)`` for when and
    /// where it runs. Defaults to `nil`. To see every breaker's changes in one place, and
    /// their rejections, observe the registry instead
    /// (``TempoEvent/Decision/breakerChanged(from:to:)``, reported after this is called; see
    /// <doc:ObservingDecisions>).
    ///
    /// ```swift
    /// var policy = CircuitBreakerPolicy()
    /// policy.onStateChange = { old, new in print("breaker: \(old) -> \(new)") }
    /// ```
    public var onStateChange: (@Sendable (CircuitBreakerState, CircuitBreakerState) -> Void)?

    /// A policy; every parameter has a default.
    ///
    /// ```swift
    /// let policy = CircuitBreakerPolicy(failureRatio: 0.3, breakDuration: .seconds(10))
    /// ```
    ///
    /// - Parameters:
    ///   - failureRatio: The share of failures at or above which the breaker opens.
    ///   - window: The calls the ratio is measured over.
    ///   - minimumCalls: The fewest calls in the window before the breaker can open.
    ///   - breakDuration: How long the breaker stays open before trial calls.
    ///   - maximumBreakDuration: `nil` for a fixed break; otherwise the break doubles at each
    ///     reopening, up to this.
    ///   - trialCalls: The trial calls of a half-open breaker.
    ///   - isFailure: Which errors count as failures; the others count as successes, but for
    ///     the ignored ones.
    ///   - isIgnored: Which errors count neither way, beyond Tempo's refusals and
    ///     cancellation, which are always ignored.
    ///   - onStateChange: Told each change of state (old, new).
    public init(
        failureRatio: Double = 0.5,
        window: Window = .lastCalls(20),
        minimumCalls: Int = 10,
        breakDuration: Duration = .seconds(5),
        maximumBreakDuration: Duration? = nil,
        trialCalls: Int = 1,
        isFailure: @escaping @Sendable (any Error) -> Bool = { _ in true },
        isIgnored: @escaping @Sendable (any Error) -> Bool = { _ in false },
        onStateChange: (@Sendable (CircuitBreakerState, CircuitBreakerState) -> Void)? = nil
    ) {
        self.failureRatio = failureRatio
        self.window = window
        self.minimumCalls = minimumCalls
        self.breakDuration = breakDuration
        self.maximumBreakDuration = maximumBreakDuration
        self.trialCalls = trialCalls
        self.isFailure = isFailure
        self.isIgnored = isIgnored
        self.onStateChange = onStateChange
    }

    /// Why the policy cannot be used, or `nil` when it can.
    var problem: String? {
        switch window {
        case .lastCalls(let count) where count < 1:
            return "window of \(count) calls: at least 1 is needed"
        case .lastDuration(let duration) where duration <= .zero:
            return "window of \(duration): a positive duration is needed"
        default:
            break
        }
        guard failureRatio > 0, failureRatio <= 1 else {
            return "failure ratio \(failureRatio): it must be above 0 and at most 1"
        }
        guard trialCalls >= 1 else { return "\(trialCalls) trial calls: at least 1 is needed" }
        return nil
    }

    /// The calls the window must hold before the breaker can open: ``minimumCalls``, at least
    /// one, and at most the count of a ``Window/lastCalls(_:)`` window (which never holds more).
    var requiredCalls: Int {
        let minimum = max(minimumCalls, 1)
        guard case .lastCalls(let count) = window else { return minimum }
        return min(minimum, max(count, 1))
    }

    /// How a call that threw `error` counts: ignored when it is one of Tempo's refusals or a
    /// cancellation (`cancelled`: the task is cancelled), or when ``isIgnored`` says so; else
    /// a failure or a success as ``isFailure`` says. The predicates are not asked about what
    /// is ignored always.
    func outcome(of error: any Error, cancelled: Bool) -> BreakerState.Outcome {
        if cancelled || error is CancellationError || Self.isRefusal(error) { return .ignored }
        if isIgnored(error) { return .ignored }
        return isFailure(error) ? .failure : .success
    }

    /// One of Tempo's refusals: an error a helper throws in place of calling its operation.
    static func isRefusal(_ error: any Error) -> Bool {
        error is RateLimitError || error is ConcurrencyLimitError || error is CircuitBreakerError
            || error is any TempoRefusal
    }

    /// The break after `previous` (`nil`: the breaker opens from closed).
    func nextBreak(after previous: Duration?) -> Duration {
        let base = max(breakDuration, .zero)
        guard let previous, let maximum = maximumBreakDuration else { return base }
        let cap = max(maximum, base)
        return min(max(previous, base).saturatingMultiplied(by: 2), cap)
    }
}

/// The state of a circuit breaker.
///
/// ```swift
/// let policy = CircuitBreakerPolicy(onStateChange: { old, new in
///     if new == .open { print("stopped calling (was \(old))") }
/// })
/// ```
public enum CircuitBreakerState: String, Sendable, Hashable, CaseIterable {
    /// Calls run, and their outcomes are counted in the window.
    ///
    /// ```swift
    /// let calling = CircuitBreakerState.closed
    /// ```
    case closed
    /// Calls are rejected at once with ``CircuitBreakerError/open(retryAfter:)``.
    ///
    /// ```swift
    /// let rejecting = CircuitBreakerState.open
    /// ```
    case open
    /// The break is over: a set number of trial calls run, and decide whether the breaker
    /// closes or opens again; other calls are rejected as by an open breaker.
    ///
    /// ```swift
    /// let trying = CircuitBreakerState.halfOpen
    /// ```
    case halfOpen
}

/// Why a circuit breaker did not run a call.
///
/// It conforms to ``RetryAfterProviding``: `retry` around an open breaker waits until the
/// breaker admits a trial call (capped by its backoff's maximum) instead of calling again at
/// once, and its attempts are rejected without reaching the operation while it is open.
///
/// ```swift
/// let answer = try await retry(5, backoff: .exponential(initial: .seconds(1))) {
///     try await circuitBreaker(identifier: "api") { try await api.ping() }
/// }
/// ```
public enum CircuitBreakerError: Error, Hashable, Sendable, RetryAfterProviding {
    /// The breaker is open, or half-open with all its trial calls taken. `retryAfter` is how
    /// long until it admits a trial call; `nil` when that is not known: the trial calls are
    /// running, or the breaker was opened by hand (``openCircuitBreaker(identifier:)``).
    ///
    /// ```swift
    /// let failure: any Error = CircuitBreakerError.open(retryAfter: .seconds(3))
    /// if case .open(let after?)? = failure as? CircuitBreakerError {
    ///     print("trial call in \(after)")
    /// }
    /// ```
    case open(retryAfter: Duration?)
    /// The policy cannot be used (see ``CircuitBreakerPolicy``); the text says why. Nothing
    /// ran and the breaker was not touched.
    ///
    /// ```swift
    /// let bad = CircuitBreakerPolicy(failureRatio: .nan)
    /// _ = try? await circuitBreaker(bad) { "never" }   // throws .invalidPolicy
    /// ```
    case invalidPolicy(String)

    /// The wait `retry` takes before its next attempt: the time until a trial call is
    /// admitted, or `nil` (the backoff's own wait) when that is not known.
    ///
    /// ```swift
    /// let wait = CircuitBreakerError.open(retryAfter: .seconds(2)).retryAfter
    /// ```
    public var retryAfter: Duration? {
        if case .open(let after) = self { return after }
        return nil
    }
}

/// An error another library of this package throws in place of calling the operation (such as
/// TempoRedis's `SharedLimitStoreError`): a breaker ignores it, as it does Tempo's own.
package protocol TempoRefusal: Error {}
