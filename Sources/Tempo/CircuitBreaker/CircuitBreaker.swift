// The front doors of the circuit breaker: wrap an operation, and open, close or reset a
// breaker by identifier.

/// Runs `operation` unless its circuit breaker is open, in the caller's task and isolation,
/// and counts how it ended.
///
/// Calls are grouped by `identifier`, or, without one, by the call site
/// (`fileID:line:column`); each key has one breaker, which lives in the current registry and
/// measures time on its clock.
///
/// - **Closed** (at first): the call runs. Its outcome goes into the key's window (see
///   ``CircuitBreakerPolicy/window``). When the window holds at least
///   ``CircuitBreakerPolicy/minimumCalls`` calls and failures are at least
///   ``CircuitBreakerPolicy/failureRatio`` of them, the breaker opens.
/// - **Open**: the call throws ``CircuitBreakerError/open(retryAfter:)`` at once, without
///   running `operation`; `retryAfter` is the time left of the break.
/// - **Half-open**: the first call after the break finds it half-open. The breaker admits
///   ``CircuitBreakerPolicy/trialCalls`` trial calls and rejects the others as an open one
///   does (with a `nil` `retryAfter`). When every trial succeeds it closes (with an empty
///   window); when one fails it opens again, for a longer break if
///   ``CircuitBreakerPolicy/maximumBreakDuration`` is set.
///
/// An error is ignored, a failure or a success. Ignored are Tempo's own refusals (every
/// ``RateLimitError``, ``ConcurrencyLimitError`` and ``CircuitBreakerError``, thrown by a
/// helper inside the breaker that did not call its operation), cancellation, and what
/// ``CircuitBreakerPolicy/isIgnored`` marks; of the other errors, a failure is what
/// ``CircuitBreakerPolicy/isFailure`` says is one, and a success the rest. An ignored outcome
/// counts neither way in any state: a closed breaker's window is left as it was, and an
/// ignored trial frees its slot for another call without closing or reopening the breaker.
/// Cancellation is a call that throws `CancellationError`, or throws while its task is
/// cancelled; a task already cancelled throws `CancellationError` without touching the
/// breaker. A call counts only in the state it was admitted in: one admitted
/// while closed that ends after the breaker opened counts for nothing.
///
/// The state-change callback (``CircuitBreakerPolicy/onStateChange``) runs once per change,
/// synchronously on the task (and actor) of the call that made it, or of the caller of
/// ``openCircuitBreaker(identifier:)``, ``closeCircuitBreaker(identifier:)`` or
/// ``resetCircuitBreaker(identifier:)``, after the registry's lock is released: it may call
/// Tempo. Changes made at the same moment on different tasks may reach it in either order.
///
/// The function is `nonisolated(nonsending)`, and so is `operation`: both run on the caller's
/// actor (or off any actor, for a caller on none), with no hop on the way in or out.
///
/// Admission and the outcome are each at most a clock read, a lock and a table update: no
/// `Task`; a time window's breaker has one timer, for leaving. The breaker shows in
/// ``TempoRegistry/snapshot()`` as
/// ``TempoSnapshot/State/circuitBreaker(state:failures:calls:reopensAt:)`` while it is live: it
/// leaves the registry when it is closed, none of its calls of that state is running and its
/// window holds no failure (successes alone never open it, so it forgets them: the next call
/// starts a new breaker with an empty window), or at ``resetCircuitBreaker(identifier:)``. A
/// failure keeps it until it leaves the window (a time window's ages out; a count window's is
/// pushed out by later outcomes) or the breaker opens; see <doc:CircuitBreaker>. Calls of one key should pass
/// the same policy;
/// each call is judged by its own, and a call whose ``CircuitBreakerPolicy/window`` differs
/// from the breaker's empties the window.
///
/// ```swift
/// let policy = CircuitBreakerPolicy(
///     failureRatio: 0.5,
///     breakDuration: .seconds(10)
/// )
/// let user =
///     try await circuitBreaker(
///         policy,
///         identifier: "users"
///     ) {
///         try await api.user(id)
///     }
/// ```
///
/// - Parameters:
///   - policy: When the breaker opens, for how long, and how it tries again.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The call to protect.
/// - Returns: What `operation` returns.
/// - Throws: ``CircuitBreakerError/open(retryAfter:)`` when the breaker rejects the call,
///   ``CircuitBreakerError/invalidPolicy(_:)`` when `policy` cannot be used,
///   `CancellationError` when the task is cancelled before the call, and whatever
///   `operation` throws.
@inlinable
public nonisolated(nonsending) func circuitBreaker<Value>(
    _ policy: CircuitBreakerPolicy = CircuitBreakerPolicy(),
    identifier: String? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: nonisolated(nonsending) () async throws -> Value
) async throws -> Value {
    // Inlinable, so a call is specialized in the caller's module: a synchronous admission,
    // the operation, and a synchronous record of its outcome, with no generic `async` frame.
    let call = try CircuitBreakerCall(
        policy, identifier: identifier, fileID: fileID, line: line, column: column)
    let value: Value
    do {
        value = try await operation()
    } catch {
        call.ended(throwing: error, policy: policy)
        throw error
    }
    call.succeeded(policy: policy)
    return value
}

/// A call of ``circuitBreaker(_:identifier:fileID:line:column:operation:)`` its breaker
/// admitted, until its outcome is recorded.
@usableFromInline
struct CircuitBreakerCall: ~Copyable, Sendable {
    // Neither the registry nor the policy is kept: the outcome is recorded in the caller's
    // task, where ``TempoRegistry/current`` is still the registry the call entered (a scope
    // the operation opened has ended), and the front door hands the policy back. Keeping them
    // would retain the registry and copy the policy, closures included, on every call (the
    // "`circuitBreaker`, through a closed breaker" row).
    let key: GroupKey
    let admitted: (epoch: UInt64, breakerID: UInt64)

    /// Checks the policy and the task's cancellation, then asks the breaker: throws when the
    /// call may not run.
    @usableFromInline
    init(
        _ policy: CircuitBreakerPolicy, identifier: String?, fileID: StaticString, line: UInt,
        column: UInt
    ) throws {
        if let problem = policy.problem { throw CircuitBreakerError.invalidPolicy(problem) }
        try Task.checkCancellation()
        let key = GroupKey(identifier, fileID, line, column)
        let entered = TempoRegistry.withCurrentRegistry {
            $0.enterCircuitBreaker(key, policy: policy)
        }
        switch entered.admission {
        case .run(let epoch):
            self.key = key
            admitted = (epoch, entered.breakerID)
        case .rejected(let after):
            throw CircuitBreakerError.open(retryAfter: after)
        }
    }

    /// The operation returned: a success.
    @usableFromInline
    func succeeded(policy: CircuitBreakerPolicy) {
        TempoRegistry.withCurrentRegistry {
            $0.recordCircuitBreaker(key, .success, admitted: admitted, policy: policy)
        }
    }

    /// The operation threw `error`: a failure, a success or ignored, as the policy classifies
    /// it (ignored when the task was cancelled).
    @usableFromInline
    func ended(throwing error: any Error, policy: CircuitBreakerPolicy) {
        let outcome = policy.outcome(of: error, cancelled: Task.isCancelled)
        TempoRegistry.withCurrentRegistry {
            $0.recordCircuitBreaker(key, outcome, admitted: admitted, policy: policy)
        }
    }
}

/// Opens the circuit breaker `identifier` now and holds it open until
/// ``closeCircuitBreaker(identifier:)`` or ``resetCircuitBreaker(identifier:)``: its calls
/// throw ``CircuitBreakerError/open(retryAfter:)`` with a `nil` `retryAfter`, and no break
/// ends on its own. Opens a new breaker when none is live for `identifier`.
///
/// ```swift
/// openCircuitBreaker(identifier: "payments")   // maintenance window
/// ```
///
/// - Parameter identifier: The identifier the breaker's calls are made with.
public func openCircuitBreaker(identifier: String) {
    TempoRegistry.current.openCircuitBreaker(identifier: identifier)
}

/// Closes the circuit breaker `identifier` now, whatever its state: its window starts empty,
/// its next break is the policy's first, and calls still running from before count for
/// nothing. So it is equivalent to a new breaker and leaves the registry. Does nothing when no
/// breaker is live for `identifier`.
///
/// ```swift
/// closeCircuitBreaker(identifier: "payments")   // the service is back
/// ```
///
/// - Parameter identifier: The identifier the breaker's calls are made with.
public func closeCircuitBreaker(identifier: String) {
    TempoRegistry.current.closeCircuitBreaker(identifier: identifier)
}

/// Forgets the circuit breaker `identifier`: it leaves the registry (and its snapshot), and
/// the next call starts a new, closed one. The state-change callback is told if it was not
/// closed. Calls still running from before count for nothing. Does nothing when no breaker
/// is live for `identifier`.
///
/// ```swift
/// resetCircuitBreaker(identifier: "payments")
/// ```
///
/// - Parameter identifier: The identifier the breaker's calls are made with.
public func resetCircuitBreaker(identifier: String) {
    TempoRegistry.current.resetCircuitBreaker(identifier: identifier)
}
