// How `timeout` and `hedge` start an operation that runs on its caller's actor, in a child
// task: the child hops to the operation's actor first, and checks for cancellation once it is
// there. A child that waited for a busy actor until its task was cancelled (the deadline passed,
// another attempt won) so ends without running the operation at all, instead of starting user
// code that is already cancelled. The actor is read from the operation itself
// (`@isolated(any)`'s `isolation`), nothing else.

/// Runs `operation` on its own actor, unless the task is cancelled by the time it gets there.
/// - Throws: `CancellationError` when the task was cancelled before the operation started;
///   otherwise what the operation throws.
func startOnItsActor<Value: Sendable>(
    _ operation: @isolated(any) @Sendable () async throws -> Value
) async throws -> Value {
    try await startOn(operation.isolation, operation)
}

/// ``startOnItsActor(_:)`` for an operation that takes its attempt number.
func startOnItsActor<Value: Sendable>(
    _ operation: @isolated(any) @Sendable (Int) async throws -> Value, attempt: Int
) async throws -> Value {
    try await startOn(operation.isolation, operation, attempt)
}

private func startOn<Value: Sendable>(
    _ actor: isolated (any Actor)?, _ operation: @isolated(any) @Sendable () async throws -> Value
) async throws -> Value {
    try Task.checkCancellation()
    return try await operation()
}

private func startOn<Value: Sendable>(
    _ actor: isolated (any Actor)?,
    _ operation: @isolated(any) @Sendable (Int) async throws -> Value, _ attempt: Int
) async throws -> Value {
    try Task.checkCancellation()
    return try await operation(attempt)
}
