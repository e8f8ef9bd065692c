// The front doors of the rate limiter: wrap an operation, take a permit (waiting or not), and
// reset a key by identifier.

/// Runs `operation` once a permit of `limit` is free for its key, in the caller's task.
///
/// Calls are grouped by `identifier`, or, without one, by the call site
/// (`fileID:line:column`). Each key has a bucket of `limit.burst` permits that refills at
/// `limit.permits` per `limit.interval` (up to `permits + burst - 1` in a rolling `interval`;
/// see ``RateLimit``), or, for a ``RateLimit/window(_:per:margin:)`` limit, a window that holds
/// at most `limit.permits` starts; a call takes `weight` permits. A window limit holds a call's
/// slot from its admission until `operation` returns or throws, and counts it from that end
/// (a service counts the request when it arrives, at the latest then).
/// When they are free and nobody waits, the call takes them and runs `operation` at once: a
/// clock read, a lock and a table update, no `Task`. Otherwise `whenLimited` decides:
///
/// - ``RateLimitPolicy/wait`` (the default): the call waits in the key's queue, first in first
///   out, until its permits are free. It joins the queue before its actor is let go, so calls
///   made one after another on one actor wait in that order. Only the head of the queue is
///   admitted: a heavier waiter at the head is not overtaken by lighter ones behind it, nor by a
///   new call, even when their permits would be free. Cancelling the task ends the wait with
///   `CancellationError`: the waiter leaves the queue and takes nothing, and the waiters it
///   held up move on. A cancel that comes after the permit is granted but before the waiter's
///   task resumes ends it the same way: the operation does not start (a window gives its slot
///   back; a token bucket's permits stay spent). Once the operation has started, a cancel is
///   the operation's to handle.
/// - ``RateLimitPolicy/wait(atMost:)``: the same, but after that long without a permit the
///   call leaves the queue and throws ``RateLimitError/limited(retryAfter:)``.
/// - ``RateLimitPolicy/reject``: throws ``RateLimitError/limited(retryAfter:)`` at once.
///
/// A `weight` of zero or less takes nothing and runs at once; a `weight` above the burst can
/// never be admitted and throws ``RateLimitError/cannotAdmit(weight:burst:)`` at once. A task
/// already cancelled throws `CancellationError` without taking a permit or running, whatever
/// its weight. Errors of `operation`
/// are rethrown; its permits are spent either way (a permit counts calls started, not calls
/// that succeeded). With a limit made ``RateLimit/holdingOnRetryAfter(_:)``, an error that
/// carries a retry-after also holds the key's permits until then, for every caller. A key
/// whose bucket is full again and that has nobody waiting leaves the registry (at the latest
/// one whole bucket's refill later; a window limit's key, the instant its window is empty), so
/// an idle program's ``TempoRegistry/snapshot()`` is empty. The limit holds at either end of
/// the clock's range: at its last instant a key admits its burst and no more (its bucket never
/// fills again there, so the key stays).
///
/// The function is `nonisolated(nonsending)`, and so is `operation`: both run on the caller's
/// actor (or off any actor, for a caller on none), with no hop on the way in or out.
///
/// ```swift
/// // The service allows 10 requests
/// // a second: never 11 in any
/// // 1.05 s.
/// let service = RateLimit.window(
///     10, per: .seconds(1)
/// )
/// let answer = try await rateLimit(
///     service, identifier: "api"
/// ) {
///     try await api.ping()
/// }
/// ```
///
/// - Parameters:
///   - limit: The permits per interval and the burst.
///   - weight: How many permits this call takes. Defaults to 1.
///   - policy: Wait (at most how long) or reject when no permit is free.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run once admitted, in the caller's isolation.
/// - Returns: What `operation` returns.
/// - Throws: ``RateLimitError/limited(retryAfter:)`` when `policy` gives up waiting,
///   ``RateLimitError/cannotAdmit(weight:burst:)`` when `weight` exceeds the burst (or no
///   permit is ever free), `CancellationError` when the task is cancelled before its
///   operation starts, and whatever `operation` throws.
@inlinable
public nonisolated(nonsending) func rateLimit<Value>(
    _ limit: RateLimit,
    weight: Int = 1,
    whenLimited policy: RateLimitPolicy = .wait,
    identifier: String? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: nonisolated(nonsending) () async throws -> Value
) async throws -> Value {
    // The permit taken at once is decided synchronously, and this front door is inlinable: an
    // admitted call makes no `async` call of Tempo's before `operation`, and no generic frame.
    let permit = try RatePermitRequest(
        limit, weight: weight, policy: policy, identifier: identifier, fileID: fileID,
        line: line, column: column, untilEnd: true)
    if limit.holdsOnRetryAfter {
        return try await rateLimitListening(permit, limit, operation: operation)
    }
    guard permit.mustWait else {
        // A window holds the operation's slot until it ends, and records it then.
        if permit.holdsUntilEnd {
            defer { permit.endOperation() }
            return try await operation()
        }
        return try await operation()
    }
    return try await rateLimitAfterWaiting(permit, operation: operation)
}

/// A call of ``rateLimit(_:weight:whenLimited:identifier:fileID:line:column:operation:)`` that
/// asked for its permits at once: admitted (``mustWait`` is `false`), or told to wait.
@usableFromInline
struct RatePermitRequest: ~Copyable, Sendable {
    let key: GroupKey
    let weight: Int
    let outcome: RatePermitNow
    let maxWait: Duration?
    /// The permits were not free and the policy waits for them.
    @usableFromInline let mustWait: Bool
    /// A window limit's starts, taken for an operation, are held in flight until it ends:
    /// ``endOperation()`` records them (once the call is admitted).
    @usableFromInline let holdsUntilEnd: Bool

    /// Takes the permits now if they are free; throws when the policy refuses, the weight can
    /// never be admitted or the task is cancelled. `untilEnd`: the call wraps an operation, and
    /// a window limit holds its starts in flight until the operation ends.
    @usableFromInline
    init(
        _ limit: RateLimit, weight: Int, policy: RateLimitPolicy, identifier: String?,
        fileID: StaticString, line: UInt, column: UInt, untilEnd: Bool = false
    ) throws {
        let key = GroupKey(identifier, fileID, line, column)
        let outcome = try ratePermitNow(limit, weight, policy, key, untilEnd: untilEnd)
        self.key = key
        self.weight = weight
        self.outcome = outcome
        maxWait = policy.maxWait
        switch outcome {
        case .admitted:
            mustWait = false
            holdsUntilEnd = false
        case .admittedInWindow:
            mustWait = false
            holdsUntilEnd = true
        case .wait:
            mustWait = true
            holdsUntilEnd = false
        case .waitInWindow:
            mustWait = true
            holdsUntilEnd = untilEnd
        }
    }

    /// The operation of an admitted call returned or threw: a window limit that holds its
    /// starts until then records them now (nothing otherwise). Call it only once the call is
    /// admitted (a waiter that threw took nothing).
    @usableFromInline
    func endOperation() {
        guard holdsUntilEnd else { return }
        switch outcome {
        case .admittedInWindow(let registry, let ask), .waitInWindow(let registry, let ask):
            registry.endWindowOperation(key, ask: ask)
        case .admitted, .wait:
            break
        }
    }

    /// Waits in the key's queue for permits that were not free (returns at once when they
    /// were). Returns the work token of a waiter that a deterministic clock's timer admitted.
    nonisolated(nonsending) func waitIfNeeded() async throws -> SettleToken? {
        switch outcome {
        case .admitted, .admittedInWindow: return nil
        case .wait(let registry, let bucket):
            return try await registry.waitForRatePermit(
                key, weight: weight, bucket: bucket, maxWait: maxWait)
        case .waitInWindow(let registry, let ask):
            return try await registry.waitForPermit(
                WindowLimitEntry.self, key, WindowRequest(ask: ask, untilEnd: holdsUntilEnd),
                new: { _ in WindowLimitEntry(permits: ask.permits, span: ask.span) },
                maxWait: maxWait)
        }
    }
}

/// The rest of a call whose permits were not free: it waits for them in the key's queue, then
/// runs `operation`.
@usableFromInline
nonisolated(nonsending) func rateLimitAfterWaiting<Value>(
    _ permit: borrowing RatePermitRequest,
    operation: nonisolated(nonsending) () async throws -> Value
) async throws -> Value {
    guard let token = try await permit.waitIfNeeded() else {
        defer { permit.endOperation() }
        return try await operation()
    }
    // Admitted by a timer of a deterministic clock: the clock waits for the operation (and
    // for a window's record of its end, made first).
    defer { token.finish() }
    defer { permit.endOperation() }
    return try await SettleToken.$current.withValue(token) { try await operation() }
}

/// Waits until a permit of `limit` is free for its key and takes it, without wrapping an
/// operation; as ``rateLimit(_:weight:whenLimited:identifier:fileID:line:column:operation:)``
/// otherwise. Use it when the work that follows is not one closure.
///
/// ```swift
/// let uploads = RateLimit(
///     2, per: .seconds(1)
/// )
/// try await rateLimit(
///     uploads, identifier: "uploads"
/// )
/// ```
///
/// - Parameters:
///   - limit: The permits per interval and the burst.
///   - weight: How many permits this call takes. Defaults to 1.
///   - policy: Wait (at most how long) or reject when no permit is free.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
/// - Throws: ``RateLimitError/limited(retryAfter:)`` when `policy` gives up waiting,
///   ``RateLimitError/cannotAdmit(weight:burst:)`` when `weight` exceeds the burst (or no
///   permit is ever free), and `CancellationError` when the task is cancelled before its
///   task resumes with the permit.
public nonisolated(nonsending) func rateLimit(
    _ limit: RateLimit,
    weight: Int = 1,
    whenLimited policy: RateLimitPolicy = .wait,
    identifier: String? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column
) async throws {
    let permit = try RatePermitRequest(
        limit, weight: weight, policy: policy, identifier: identifier, fileID: fileID,
        line: line, column: column)
    try await permit.waitIfNeeded()?.finish()
}

/// Takes a permit of `limit` for its key now, or throws at once: the synchronous form, for code
/// that cannot wait (a button handler, a delegate callback).
///
/// As ``rateLimit(_:weight:whenLimited:identifier:fileID:line:column:operation:)``
/// with ``RateLimitPolicy/reject``: a call made while others wait is refused even when its
/// permits are free. Admitted or refused, it is a clock read, a lock and a table update: no
/// `Task` and, with its typed error, no allocation.
///
/// ```swift
/// func refreshTapped() {
///     do {
///         try takeRatePermit(RateLimit(1, per: .seconds(5)), identifier: "refresh")
///         print("refreshing")
///     } catch {
///         print("try again in \(error.retryAfter ?? .zero)")
///     }
/// }
/// ```
///
/// - Parameters:
///   - limit: The permits per interval and the burst.
///   - weight: How many permits this call takes. Defaults to 1; zero or less takes nothing.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
/// - Throws: ``RateLimitError/limited(retryAfter:)`` when the permits are not free now (or
///   others are waiting), ``RateLimitError/cannotAdmit(weight:burst:)`` when `weight`
///   exceeds the burst or no permit is ever free.
public func takeRatePermit(
    _ limit: RateLimit,
    weight: Int = 1,
    identifier: String? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column
) throws(RateLimitError) {
    if let window = limit.window {
        return try takeWindowPermit(window, weight, GroupKey(identifier, fileID, line, column))
    }
    guard weight > 0, let bucket = limit.bucket else { return }
    guard weight <= bucket.burst else {
        throw .cannotAdmit(weight: weight, burst: bucket.burst)
    }
    let key = GroupKey(identifier, fileID, line, column)
    try TempoRegistry.withCurrentRegistry { registry throws(RateLimitError) in
        if case .limited(let after) = registry.enterRateLimit(key, weight: weight, bucket: bucket) {
            registry.reportRefused(key, retryAfter: after)
            throw .limited(retryAfter: after)
        }
    }
}

/// Fills the bucket of the rate limit `identifier` now (for a window limit: empties its window):
/// the calls waiting there are admitted as the full bucket allows, first in first out, and the
/// rest wait on. Does nothing when nothing is live for `identifier`. A window limit's running
/// operations keep their slots until they end, and are counted then, so no more than its
/// permits hold a slot at once, across the reset too.
///
/// ```swift
/// resetRateLimit(identifier: "api")   // the server's quota was reset
/// ```
///
/// - Parameter identifier: The identifier the rate-limited calls were made with.
public func resetRateLimit(identifier: String) {
    TempoRegistry.current.resetRateLimit(identifier: identifier)
}

/// What a call found when it asked for its permit at once.
enum RatePermitNow: Sendable {
    /// Admitted (or nothing to take): go on.
    case admitted
    /// A window limit's starts, admitted in flight until the operation ends: go on, and record
    /// them in `registry`'s window when it does.
    case admittedInWindow(TempoRegistry, WindowLimitEntry.Ask)
    /// Not free, and the policy waits: wait in `registry`'s queue, with this bucket.
    case wait(TempoRegistry, (refill: Duration, burst: Int))
    /// A window limit's starts did not fit, and the policy waits: wait in `registry`'s queue.
    case waitInWindow(TempoRegistry, WindowLimitEntry.Ask)
}

/// Takes `weight` permits of `limit` for `key` in the current registry now, if they are free,
/// or says the call must wait; throws when the policy refuses, the weight can never be admitted
/// or the task is cancelled. Synchronous, so an admitted call makes no `async` call of its own.
@inline(__always)
func ratePermitNow(
    _ limit: RateLimit, _ weight: Int, _ policy: RateLimitPolicy, _ key: GroupKey,
    untilEnd: Bool = false
) throws -> RatePermitNow {
    // First: a cancelled task does not run, whatever its weight (nothing to take, or more
    // than can ever be admitted).
    try Task.checkCancellation()
    if let window = limit.window {
        return try windowPermitNow(window, weight, policy, key, untilEnd: untilEnd)
    }
    guard weight > 0, let bucket = limit.bucket else { return .admitted }
    guard weight <= bucket.burst else {
        throw RateLimitError.cannotAdmit(weight: weight, burst: bucket.burst)
    }
    let registry = TempoRegistry.current
    guard case .limited(let after) = registry.enterRateLimit(key, weight: weight, bucket: bucket)
    else { return .admitted }
    if policy.maxWait == .zero {
        registry.reportRefused(key, retryAfter: after)
        throw RateLimitError.limited(retryAfter: after)
    }
    return .wait(registry, bucket)
}

/// ``ratePermitNow(_:_:_:_:untilEnd:)`` for a window limit, in a task that is not cancelled.
/// With `untilEnd` (the call wraps an operation) the starts admitted are held in flight until
/// the operation ends.
func windowPermitNow(
    _ window: WindowLimitSpan, _ weight: Int, _ policy: RateLimitPolicy, _ key: GroupKey,
    untilEnd: Bool = false
) throws -> RatePermitNow {
    guard weight > 0 else { return .admitted }
    guard weight <= window.permits else {
        throw RateLimitError.cannotAdmit(weight: weight, burst: window.permits)
    }
    let registry = TempoRegistry.current
    let ask = WindowLimitEntry.Ask(weight: weight, permits: window.permits, span: window.span)
    guard case .limited(let after) = registry.enterWindowLimit(key, ask: ask, untilEnd: untilEnd)
    else { return untilEnd ? .admittedInWindow(registry, ask) : .admitted }
    if policy.maxWait == .zero {
        registry.reportRefused(key, retryAfter: after)
        throw RateLimitError.limited(retryAfter: after)
    }
    return .waitInWindow(registry, ask)
}

/// ``takeRatePermit(_:weight:identifier:fileID:line:column:)`` for a window limit.
func takeWindowPermit(
    _ window: WindowLimitSpan, _ weight: Int, _ key: GroupKey
) throws(RateLimitError) {
    guard weight > 0 else { return }
    guard weight <= window.permits else {
        throw .cannotAdmit(weight: weight, burst: window.permits)
    }
    let ask = WindowLimitEntry.Ask(weight: weight, permits: window.permits, span: window.span)
    try TempoRegistry.withCurrentRegistry { registry throws(RateLimitError) in
        if case .limited(let after) = registry.enterWindowLimit(key, ask: ask) {
            registry.reportRefused(key, retryAfter: after)
            throw .limited(retryAfter: after)
        }
    }
}

extension TempoRegistry {
    /// Reports a call refused at once, without waiting.
    @inline(__always)
    func reportRefused(_ key: GroupKey, retryAfter: Duration) {
        guard events.isObserved else { return }
        events.report(.rateLimit, key, .rateLimitRefused(retryAfter: retryAfter, waited: .zero))
    }
}
