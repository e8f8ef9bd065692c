// How `timeout` and `hedge` start an operation that runs on its caller's actor, in a child
// task. The child hops to the operation's actor first (read from the operation itself:
// `@isolated(any)`'s `isolation`), and decides there whether to start: not once its task is
// cancelled, and not once the call's `StartGate` is closed. A child that waited for a busy
// actor so ends without running the operation at all, instead of starting user code that is
// too late:
// - `timeout` closes the gate when its deadline passes, before it cancels the operation;
// - an operation that succeeds closes it, still on its actor, so a hedge's attempt queued
//   behind the winner on one actor (the main actor, say) finds it closed (for `timeout`, whose
//   one operation has then finished, the close changes nothing).
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

/// Runs `body` on `actor` (the operation's own: its `isolation`), unless the task is
/// cancelled, or `gate` closed, by the time it gets there; a `body` that returns closes
/// `gate`, still on `actor`. `body` calls the operation, which is isolated to `actor` too, so
/// nothing else runs on it between the check and the operation's start.
/// - Throws: ``NotStarted`` when `gate` was closed, `CancellationError` when the task was
///   cancelled, before it started; otherwise what `body` throws.
func startOnItsActor<Value: Sendable>(
    _ actor: isolated (any Actor)?, gate: StartGate,
    _ body: nonisolated(nonsending) () async throws -> Value
) async throws -> Value {
    if gate.isClosed { throw NotStarted() }
    try Task.checkCancellation()
    let value = try await body()
    gate.close()
    return value
}
