import Synchronization

/// The stop switch of one `repeat` loop. Cancelling it is final: once ``cancel()`` returns,
/// ``claimRun()`` answers `false`, so no further iteration starts.
final class RepeatControl: Sendable {
    private struct State {
        var cancelled = false
        var task: Task<Void, Never>?
    }

    private let state = Lock(State())

    /// Connects the loop's task, cancelling it at once if the loop was already cancelled.
    func attach(_ task: Task<Void, Never>) {
        let cancelled = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// Stops the loop: no iteration starts after this returns; a sleeping loop wakes and ends.
    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }

    /// Whether the next iteration may start.
    func claimRun() -> Bool {
        state.withLock { !$0.cancelled } && !Task.isCancelled
    }
}

/// The running named repeats of a registry, kept in the registry itself (its
/// ``TempoRegistry/repeatsByName`` table): an entry lives only while its loop runs.
enum NamedRepeats {
    /// Makes `control` (or nothing) the loop named `name` and cancels the loop it replaces.
    static func replace(_ name: String, in registry: TempoRegistry, with control: RepeatControl?) {
        let old = registry.repeatsByName.withLock { table in
            if let control { return table.updateValue(control, forKey: name) }
            return table.removeLive(name)
        }
        old?.cancel()
    }

    /// Removes the entry for `name` if it is still `control`'s.
    static func remove(_ name: String, in registry: TempoRegistry, ifCurrent control: RepeatControl)
    {
        registry.repeatsByName.withLock { table in
            if table[name] === control { table.removeLive(name) }
        }
    }

    /// Cancels the loop named `name`; returns whether one was running.
    static func cancel(_ name: String, in registry: TempoRegistry) -> Bool {
        let control = registry.repeatsByName.withLock { $0.removeLive(name) }
        control?.cancel()
        return control != nil
    }

    /// Whether a loop named `name` is running.
    static func contains(_ name: String, in registry: TempoRegistry) -> Bool {
        registry.repeatsByName.withLock { $0[name] != nil }
    }
}
