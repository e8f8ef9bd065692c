/// Why `concurrencyLimit` did not run an operation.
///
/// ```swift
/// do {
///     let page = try await concurrencyLimit(4, queue: 16, identifier: "api") {
///         try await api.page(1)
///     }
///     print(page)
/// } catch ConcurrencyLimitError.queueFull(let running, let queued) {
///     print("busy: \(running) running, \(queued) waiting")
/// }
/// ```
public enum ConcurrencyLimitError: Error, Equatable, Hashable, Sendable {
    /// The limit was reached and the queue was full: the call was turned away at once. The
    /// values are the key's running and waiting calls when it arrived.
    ///
    /// ```swift
    /// let failure: any Error = ConcurrencyLimitError.queueFull(running: 4, queued: 16)
    /// if case .queueFull(let running, let queued)? = failure as? ConcurrencyLimitError {
    ///     print("busy: \(running) running, \(queued) waiting")
    /// }
    /// ```
    case queueFull(running: Int, queued: Int)
    /// The call waited its whole `queueTimeout` (the associated value) without getting a slot,
    /// or could not run at once and its `queueTimeout` was zero or negative.
    ///
    /// ```swift
    /// let failure: any Error = ConcurrencyLimitError.queueTimedOut(.seconds(2))
    /// let timedOut = (failure as? ConcurrencyLimitError) == .queueTimedOut(.seconds(2))
    /// ```
    case queueTimedOut(Duration)
    /// The call was waiting when its key was reset with
    /// ``resetConcurrencyLimit(identifier:)``.
    ///
    /// ```swift
    /// let failure: any Error = ConcurrencyLimitError.reset
    /// let wasReset = (failure as? ConcurrencyLimitError) == .reset
    /// ```
    case reset
    /// `limit` was zero or negative; the associated value is what was passed.
    ///
    /// ```swift
    /// // Throws ConcurrencyLimitError.invalidLimit(0): no call could ever run.
    /// _ = try? await concurrencyLimit(0) { "never" }
    /// ```
    case invalidLimit(Int)
    /// `queue` was negative; the associated value is what was passed.
    ///
    /// ```swift
    /// // Throws ConcurrencyLimitError.invalidQueueLimit(-1).
    /// _ = try? await concurrencyLimit(2, queue: -1) { "never" }
    /// ```
    case invalidQueueLimit(Int)
}

/// Runs `operation` once at most `limit` calls of its key are running, in the caller's task
/// and isolation, and returns its value or rethrows its error: a bulkhead.
///
/// Calls are grouped by call site, or by `identifier` when given (use one identifier for the
/// calls that reach one service). For each key:
/// - A call runs at once when fewer than `limit` run and nobody waits.
/// - Otherwise it waits in the key's queue, first come first served, when fewer than `queue`
///   wait (the default is no bound). It waits at most `queueTimeout` (default: as long as it
///   takes) on the current registry's clock, then throws
///   ``ConcurrencyLimitError/queueTimedOut(_:)``; a zero or negative `queueTimeout` means "do
///   not wait": a call that cannot run at once throws that error at once.
/// - Beyond that the call throws ``ConcurrencyLimitError/queueFull(running:queued:)`` at once.
/// - The slot is released when the operation ends, by returning or throwing (an operation
///   whose task is cancelled keeps its slot until it ends), and goes straight to the first
///   waiter, in the same step under the registry's lock: a call made meanwhile cannot take it
///   (no barging), and a call never overtakes one that waits.
/// - Cancelling a waiting call removes it from the queue at once and throws
///   `CancellationError`; it takes no slot (one handed a slot as it is cancelled gives the slot
///   on and does not run). A caller cancelled before the call throws `CancellationError`
///   without entering the queue.
/// - An operation that calls `concurrencyLimit` again with its own key waits for a slot like
///   any other caller, while holding one: with a `limit` of 1 (or every slot held by such
///   calls) it waits for itself, until its `queueTimeout`, or forever without one. Nest limits
///   of different keys only.
/// - `limit <= 0` throws ``ConcurrencyLimitError/invalidLimit(_:)`` and a negative `queue`
///   ``ConcurrencyLimitError/invalidQueueLimit(_:)``, without running. `Int.max` is a valid
///   limit or queue, and any `queueTimeout` is safe.
///
/// Calls that share a key should pass the same limits. When they differ, each call is judged
/// by its own: it runs once fewer than its own `limit` run, and joins the queue while fewer
/// than its own `queue` wait.
///
/// The function is `nonisolated(nonsending)`, and so is `operation`: both run on the caller's
/// actor (or off any actor, for a caller on none), with no hop on the way in or out.
///
/// An admitted call costs a lock and a table update, and its release another: no task, no
/// timer. A waiting call costs one small allocation, and the key's one timer when it has a
/// `queueTimeout`. The key shows in ``TempoRegistry/snapshot()`` with its running and waiting
/// calls while any runs or waits, and leaves the registry when the last one ends.
///
/// ```swift
/// let bytes =
///     try await concurrencyLimit(
///         4, identifier: "downloads"
///     ) {
///         try await api.download()
///     }
/// ```
///
/// On a `ManualClock`, an advance waits for a limited operation that is running (until it
/// ends or sleeps on the clock), as it does for the operations the engine launches, so the
/// slot it frees reaches the next waiter before the advance returns. Do not advance the clock
/// from inside a limited operation.
///
/// - Parameters:
///   - limit: The most operations of the key that run at once; zero or less throws
///     ``ConcurrencyLimitError/invalidLimit(_:)``.
///   - queue: The most calls that wait for a slot; beyond it a call is turned away. Defaults
///     to no bound; negative throws ``ConcurrencyLimitError/invalidQueueLimit(_:)``.
///   - queueTimeout: The longest a call waits for a slot; `nil` (the default): as long as it
///     takes; zero or less: not at all.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run once it has a slot, in the caller's task and isolation.
/// - Returns: What `operation` returns.
/// - Throws: ``ConcurrencyLimitError`` when the call is turned away, times out in the queue,
///   is reset or gets invalid limits; `CancellationError` when the task is cancelled before
///   the call runs; and whatever `operation` throws.
@inlinable
public nonisolated(nonsending) func concurrencyLimit<Value>(
    _ limit: Int,
    queue: Int = .max,
    queueTimeout: Duration? = nil,
    identifier: String? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: nonisolated(nonsending) () async throws -> Value
) async throws -> Value {
    // Inlinable so that the usual call, admitted at once on an ordinary clock, is specialized
    // in the caller's module: one synchronous entry, the operation, one release, and no
    // generic `async` frame of its own.
    let call = try ConcurrencyLimitCall(
        limit, queue: queue, queueTimeout: queueTimeout, identifier: identifier,
        fileID: fileID, line: line, column: column)
    guard call.runsNow else {
        return try await concurrencyLimitWaitingOrTracked(
            call, queueTimeout: queueTimeout, operation: operation)
    }
    defer { call.release() }
    return try await operation()
}

/// A call of ``concurrencyLimit(_:queue:queueTimeout:identifier:fileID:line:column:operation:)``
/// that has entered its key: admitted, or queued with a waiter. Not copyable: the front door
/// moves it, so the usual call costs no retains for it.
@usableFromInline
struct ConcurrencyLimitCall: ~Copyable, Sendable {
    let key: GroupKey
    /// What a call that waits, or that a deterministic clock tracks, keeps; `nil` for a call
    /// admitted at once on an ordinary clock, which keeps nothing but its key: it gives its
    /// slot back to ``TempoRegistry/current``, the same registry, since the call runs its
    /// operation in its own task and a scope the operation opens has ended by then. Keeping
    /// the registry would retain and release the shared registry on every call.
    let slow: Slow?

    /// The rest of a call that waits or is tracked.
    final class Slow: Sendable {
        /// The registry the call entered (a cancellation handler, on another thread, needs it).
        let registry: TempoRegistry
        let admission: TempoRegistry.LimitAdmission
        /// The work token of the caller's task, when a deterministic clock tracks it.
        let callerToken: SettleToken?

        init(
            registry: TempoRegistry, admission: TempoRegistry.LimitAdmission,
            callerToken: SettleToken?
        ) {
            self.registry = registry
            self.admission = admission
            self.callerToken = callerToken
        }
    }

    /// Admitted at once on an ordinary clock (nothing to track): the usual case, which the
    /// inlined front door runs itself.
    @usableFromInline var runsNow: Bool { slow == nil }

    /// Checks the arguments and the task's cancellation, then enters the key: the call runs,
    /// waits, or is turned away (thrown).
    @usableFromInline
    init(
        _ limit: Int, queue: Int, queueTimeout: Duration?, identifier: String?,
        fileID: StaticString, line: UInt, column: UInt
    ) throws {
        guard limit > 0 else { throw ConcurrencyLimitError.invalidLimit(limit) }
        guard queue >= 0 else { throw ConcurrencyLimitError.invalidQueueLimit(queue) }
        try Task.checkCancellation()
        let key = GroupKey(identifier, fileID, line, column)
        slow = try TempoRegistry.withCurrentRegistry {
            registry throws(ConcurrencyLimitError) -> Slow? in
            // On a deterministic clock the call is work an advance waits for: the task's own
            // token if it carries one of this clock (it runs an operation the engine launched),
            // else a new one.
            let host = registry.clock.host
            let callerToken = SettleToken.current(of: host)
            let admission = try registry.enterConcurrencyLimit(
                key, limit: limit, queueLimit: queue, queueTimeout: queueTimeout,
                callerToken: callerToken)
            if case .run = admission, host == nil { return nil }
            return Slow(registry: registry, admission: admission, callerToken: callerToken)
        }
        self.key = key
    }

    /// Gives the slot of a call admitted at once back: to the head of the queue, or the key,
    /// left idle, becomes its shard's kept idle entry.
    @usableFromInline
    func release() {
        TempoRegistry.withCurrentRegistry { $0.releaseConcurrencyLimit(key) }
    }
}

/// The rest of a call that waits for its slot, or that a deterministic clock tracks.
@usableFromInline
nonisolated(nonsending) func concurrencyLimitWaitingOrTracked<Value>(
    _ call: borrowing ConcurrencyLimitCall, queueTimeout: Duration?,
    operation: nonisolated(nonsending) () async throws -> Value
) async throws -> Value {
    // A call that comes here keeps its registry (the fallback is the same registry).
    let registry = call.slow?.registry ?? TempoRegistry.current
    let key = call.key
    var token: SettleToken?
    switch call.slow?.admission ?? .run {
    case .run:
        if call.slow?.callerToken == nil { token = registry.clock.settleToken() }
    case .wait(let waiter, let id):
        let (verdict, given) = await withTaskCancellationHandler {
            await waiter.wait()
        } onCancel: {
            registry.withdrawConcurrencyLimit(key, id: id)
        }
        token = given
        switch verdict {
        case .admitted:
            // Admitted and cancelled at about the same time: the slot goes on to the next.
            if Task.isCancelled {
                registry.releaseConcurrencyLimit(key)
                token?.finish()
                throw CancellationError()
            }
        case .timedOut:
            token?.finish()
            throw ConcurrencyLimitError.queueTimedOut(queueTimeout ?? .zero)
        case .reset:
            token?.finish()
            throw ConcurrencyLimitError.reset
        case .cancelled:
            token?.finish()
            throw CancellationError()
        }
    }
    defer {
        // Released first, so a waiter it admits is tracked before this call's work ends.
        registry.releaseConcurrencyLimit(key)
        token?.finish()
    }
    guard let token else { return try await operation() }
    return try await SettleToken.$current.withValue(token) { try await operation() }
}

/// Empties the queue of the concurrency limit `identifier`: each waiting call throws
/// ``ConcurrencyLimitError/reset``. Calls already running go on and keep their slots until
/// they end, so the limit holds across a reset; calls made after it queue and run as usual.
/// Does nothing when nothing runs or waits under `identifier`.
///
/// ```swift
/// func userDidSignOut() { resetConcurrencyLimit(identifier: "api") }
/// ```
///
/// - Parameter identifier: The identifier the limited calls were made with.
public func resetConcurrencyLimit(identifier: String) {
    TempoRegistry.current.resetConcurrencyLimit(identifier: identifier)
}

extension TempoRegistry {
    /// Empties the queue of the concurrency limit `identifier` in this registry; see
    /// ``Tempo/resetConcurrencyLimit(identifier:)``.
    ///
    /// ```swift
    /// registry.resetConcurrencyLimit(identifier: "api")
    /// ```
    ///
    /// - Parameter identifier: The identifier the limited calls were made with.
    public func resetConcurrencyLimit(identifier: String) {
        resetConcurrencyLimit(.name(identifier))
    }
}
