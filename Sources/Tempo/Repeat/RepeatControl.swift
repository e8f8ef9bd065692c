/// The stop switch of one `repeat` loop.
///
/// The loop is either waiting for a tick or running an iteration; an iteration becomes running
/// only through ``claim()``, which the loop calls on the iteration's actor, right before the
/// operation. ``stop()`` is final: once it returns, ``claim()`` answers `false`, so no further
/// iteration starts. It never cancels an iteration that is running: that iteration finishes,
/// and the loop ends after it. A waiting loop is ended at once: its tick is disarmed, its
/// registry entry removed, and its task woken.
final class RepeatControl: Sendable {
    private enum Phase {
        case waiting
        case running
    }

    private struct State {
        var stopped = false
        var ended = false
        var phase = Phase.waiting
        var task: Task<Void, Never>?
        var cleanup: (@Sendable () -> Void)?
    }

    private let state = Lock(State())

    /// Connects the loop's task and what ends a waiting loop (``stop()`` runs it when the loop
    /// is not running an iteration). If the loop was stopped already, ends it now.
    func attach(_ task: Task<Void, Never>, cleanup: @escaping @Sendable () -> Void) {
        let stopped = state.withLock { state in
            if state.ended { return false }
            state.task = task
            state.cleanup = cleanup
            return state.stopped
        }
        if stopped {
            cleanup()
            task.cancel()
        }
    }

    /// Stops the loop: no iteration starts after this returns. A running iteration is left to
    /// finish; a waiting loop is ended now, and its task cancelled to wake it when `wake` is
    /// true (the loop's own cancellation handler passes `false`: its task is cancelled already).
    func stop(wake: Bool = true) {
        let waiting = state.withLock { state -> (Task<Void, Never>?, (@Sendable () -> Void)?)? in
            state.stopped = true
            guard state.phase == .waiting else { return nil }
            return (state.task, state.cleanup)
        }
        guard let (task, cleanup) = waiting else { return }
        cleanup?()
        // Wakes a loop asleep on an ordinary clock. No iteration is running to be cancelled.
        if wake { task?.cancel() }
    }

    /// The loop has ended (and cleaned up): drops the task and the cleanup, which refer back to
    /// this control, and keeps a late ``attach(_:cleanup:)`` from storing them.
    func detach() {
        state.withLock { state in
            state.ended = true
            state.task = nil
            state.cleanup = nil
        }
    }

    /// Claims the next iteration; `false` once the loop is stopped or its task cancelled. Called
    /// on the iteration's actor, right before the operation starts.
    func claim() -> Bool {
        state.withLock { state in
            guard !state.stopped, !Task.isCancelled else { return false }
            state.phase = .running
            return true
        }
    }

    /// The iteration has returned; answers whether the loop may go on.
    func endIteration() -> Bool {
        state.withLock { state in
            state.phase = .waiting
            return !state.stopped
        }
    }
}

/// The running named repeats of a registry, kept in the shard of the name's key (its
/// `namedRepeats` table), under the same lock as everything else filed under that name: an
/// entry lives only while its loop runs.
enum NamedRepeats {
    private static func withTable<R: Sendable>(
        _ name: String, in registry: TempoRegistry, _ body: (inout [String: RepeatControl]) -> R
    ) -> R {
        registry.withShard(of: GroupKey.name(name)) { body(&$0.namedRepeats) }
    }

    /// Makes `control` (or nothing) the loop named `name` and stops the loop it replaces.
    static func replace(_ name: String, in registry: TempoRegistry, with control: RepeatControl?) {
        let old = withTable(name, in: registry) { table in
            if let control { return table.updateValue(control, forKey: name) }
            return table.removeLive(name)
        }
        old?.stop()
    }

    /// Removes the entry for `name` if it is still `control`'s.
    static func remove(_ name: String, in registry: TempoRegistry, ifCurrent control: RepeatControl)
    {
        withTable(name, in: registry) { table in
            if table[name] === control { table.removeLive(name) }
        }
    }

    /// Stops the loop named `name`; returns whether one was running.
    static func cancel(_ name: String, in registry: TempoRegistry) -> Bool {
        let control = withTable(name, in: registry) { $0.removeLive(name) }
        control?.stop()
        return control != nil
    }

    /// Whether a loop named `name` is running.
    static func contains(_ name: String, in registry: TempoRegistry) -> Bool {
        withTable(name, in: registry) { $0[name] != nil }
    }
}
