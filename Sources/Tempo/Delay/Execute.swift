/// Runs an asynchronous operation on the chosen actor, after an optional wait, and returns its
/// task. The operation stays isolated to that actor across its `await`s (see ``ActorType``).
/// Cancelled before it starts, the operation never runs.
///
/// ```swift
/// execute(
///     with: .milliseconds(200),
///     on: .ownedActor
/// ) {
///     await cache.warm()
/// }
/// ```
///
/// - Parameters:
///   - delay: How long to wait first. Defaults to zero: start at once.
///   - actorType: Where the operation runs. Leave the argument out to run on the main actor:
///     the call then goes to the main-actor overload.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the pending wait.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run.
/// - Returns: The task that waits, then runs the operation: it finishes when the operation
///   returns, or, cancelled before the operation starts, without running it.
@discardableResult
public func execute(
    with delay: Duration = .zero,
    on actorType: ActorType,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: nonisolated(nonsending) @escaping @Sendable () async -> Void
) -> Task<Void, Never> {
    scheduledTask(
        after: delay, by: actorType, onError: nil, key: GroupKey(nil, fileID, line, column),
        operation: operation)
}

/// Runs an asynchronous main-actor operation after an optional wait, and returns its task.
/// Cancelled before it starts, the operation never runs.
///
/// ```swift
/// execute(with: .seconds(1)) {
///     await viewModel.reload()
/// }
/// ```
///
/// - Parameters:
///   - delay: How long to wait first. Defaults to zero: start at once.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the pending wait.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run, on the main actor.
/// - Returns: The task that waits, then runs the operation: it finishes when the operation
///   returns, or, cancelled before the operation starts, without running it.
@discardableResult
public func execute(
    with delay: Duration = .zero,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @MainActor @Sendable () async -> Void
) -> Task<Void, Never> {
    scheduledTask(
        after: delay, by: .mainActor, onError: nil, key: GroupKey(nil, fileID, line, column),
        operation: { await operation() })
}
