/// Runs `operation` once `duration` has passed, on `actorType`. Zero or less runs it at once.
///
/// Without a `by:` argument the call goes to the main-actor overload, which runs on the main
/// actor and whose closure may touch main-actor state. The pending delay appears in ``TempoRegistry/snapshot()`` under its call site until it runs.
///
/// ```swift
/// delay(
///     .seconds(2),
///     by: .ownedActor
/// ) {
///     cache.trim()
/// }
/// ```
///
/// This form returns nothing, and it is the one a closure that neither awaits nor throws
/// picks, so `let undo = delay(…, by: .taskContext) { print("x") }` gives `undo` the type
/// `()`. For a task to cancel, mark the closure asynchronous, which picks
/// ``delay(_:by:onError:fileID:line:column:operation:)``:
///
/// ```swift
/// let undo = delay(.seconds(5), by: .taskContext) { () async in print("sent") }
/// undo.cancel()   // never prints
/// ```
///
/// - Parameters:
///   - duration: How long to wait. Defaults to 1 second.
///   - actorType: Where the operation runs.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the pending delay.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run.
public func delay(
    _ duration: Duration = .seconds(1),
    by actorType: ActorType,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @Sendable () -> Void
) {
    TempoRegistry.current.delay(
        duration, key: GroupKey(nil, fileID, line, column), operation: .sync(operation, actorType))
}

/// Runs a main-actor operation once `duration` has passed. Zero or less runs it at once.
///
/// ```swift
/// delay(.seconds(3)) {
///     banner.isHidden = true
/// }
/// ```
///
/// This form returns nothing. For a task to cancel, call
/// ``delay(_:by:onError:fileID:line:column:operation:)`` with an asynchronous closure.
///
/// - Parameters:
///   - duration: How long to wait. Defaults to 1 second.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the pending delay.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run, on the main actor.
public func delay(
    _ duration: Duration = .seconds(1),
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @MainActor @Sendable () -> Void
) {
    TempoRegistry.current.delay(
        duration, key: GroupKey(nil, fileID, line, column), operation: .main(operation))
}

/// Runs an asynchronous, throwing operation once `duration` has passed, and returns its task.
///
/// A closure that awaits or throws picks this form; one that does neither picks a synchronous
/// form, which returns nothing, unless it is marked `() async in`.
///
/// Cancelling the task before the operation starts means it never runs. Errors go to
/// `onError`. Zero or less runs it at once. The operation runs isolated to `actorType`,
/// across its `await`s (see ``ActorType``).
///
/// `onError` runs right after the operation, on its actor, before the run counts as finished; a
/// handler written in main-actor code is isolated to the main actor and may update its state
/// (see ``ActorType``).
///
/// ```swift
/// let undo = delay(
///     .seconds(5), by: .taskContext
/// ) {
///     try await mail.send(draft)
/// }
/// // "Undo" tapped:
/// undo.cancel()
/// ```
///
/// - Parameters:
///   - duration: How long to wait. Defaults to 1 second.
///   - actorType: Where the operation runs, isolated to that actor across its `await`s.
///     Defaults to the main actor.
///   - onError: Called with any error the operation throws (`CancellationError` included), on
///     the operation's actor. `nil` (the default): errors are dropped.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the pending delay.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run.
/// - Returns: The task that waits, then runs the operation. It finishes when the operation
///   returns, or at once when it is cancelled before the operation starts; cancelling it while
///   the operation runs cancels the operation, as Swift cancellation does.
@discardableResult
public func delay(
    _ duration: Duration = .seconds(1),
    by actorType: ActorType = .mainActor,
    @_inheritActorContext onError: (nonisolated(nonsending) @Sendable (any Error) async -> Void)? =
        nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    scheduledTask(
        after: duration, by: actorType, onError: onError,
        key: GroupKey(nil, fileID, line, column), operation: operation)
}

/// A task that waits `duration` through the registry's delay table, then runs `operation`.
func scheduledTask(
    after duration: Duration,
    by actorType: ActorType,
    onError: ErrorHandler?,
    key: GroupKey,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    let registry = TempoRegistry.current
    return makeTicketedTask(
        after: duration, in: registry, by: actorType, onError: onError, operation: operation
    ) {
        registry.delay(duration, key: key, operation: $0)
    }
}
