// How `timeout` and `hedge` start an operation that runs on its caller's actor, in a child
// task. The child hops to the operation's actor first (read from the operation itself:
// `@isolated(any)`'s `isolation`), and decides there whether to start: not once its task is
// cancelled, and not once the call's `StartGate` is closed. A child that waited for a busy
// actor so ends without running the operation at all, instead of starting user code that is
// too late:
// - `timeout` closes the gate when its deadline passes, before it cancels the operation;
// - `hedge` closes it when an attempt succeeds, still on the attempt's actor, so an attempt
//   queued behind the winner on one actor (the main actor, say) finds it closed.
// The gate is an atomic flag: an operation that starts has read it open before it was
// closed, so it started before the deadline passed, or before another attempt had won.

import Synchronization

/// What `startOnItsActor` throws when the call's gate was closed before the operation started.
struct NotStarted: Error {}

/// Whether a call still starts operations: closed once, for good.
final class StartGate: Sendable {
    private let closed = Atomic<Bool>(false)

    /// No operation starts after this.
    func close() { closed.store(true, ordering: .sequentiallyConsistent) }

    /// Whether ``close()`` has been called.
    var isClosed: Bool { closed.load(ordering: .sequentiallyConsistent) }
}

/// Runs `operation` on its own actor, unless the task is cancelled, or `gate` closed, by the
/// time it gets there.
/// - Throws: ``NotStarted`` when `gate` was closed, `CancellationError` when the task was
///   cancelled, before it started; otherwise what the operation throws.
func startOnItsActor<Value: Sendable>(
    _ operation: @isolated(any) @Sendable () async throws -> Value, gate: StartGate
) async throws -> Value {
    try await startOn(operation.isolation, operation, gate)
}

/// ``startOnItsActor(_:gate:)`` for a hedge's attempt: an attempt that succeeds closes `gate`
/// before it leaves its actor.
func startOnItsActor<Value: Sendable>(
    _ operation: @isolated(any) @Sendable (Int) async throws -> Value, attempt: Int,
    gate: StartGate
) async throws -> Value {
    try await startOn(operation.isolation, operation, attempt, gate)
}

private func startOn<Value: Sendable>(
    _ actor: isolated (any Actor)?, _ operation: @isolated(any) @Sendable () async throws -> Value,
    _ gate: StartGate
) async throws -> Value {
    if gate.isClosed { throw NotStarted() }
    try Task.checkCancellation()
    return try await operation()
}

private func startOn<Value: Sendable>(
    _ actor: isolated (any Actor)?,
    _ operation: @isolated(any) @Sendable (Int) async throws -> Value, _ attempt: Int,
    _ gate: StartGate
) async throws -> Value {
    if gate.isClosed { throw NotStarted() }
    try Task.checkCancellation()
    let value = try await operation(attempt)
    gate.close()
    return value
}
