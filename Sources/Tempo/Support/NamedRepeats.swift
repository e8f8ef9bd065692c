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

/// The running named repeats of every registry, keyed by registry and name. An entry lives
/// only while its loop runs, and the loop keeps its registry alive, so the registry's
/// `ObjectIdentifier` cannot be reused while an entry names it.
enum NamedRepeats {
    private struct Key: Hashable {
        let registry: ObjectIdentifier
        let name: String
    }

    private static let table = Lock<[Key: RepeatControl]>([:])

    /// Makes `control` (or nothing) the loop named `name` and cancels the loop it replaces.
    static func replace(_ name: String, in registry: TempoRegistry, with control: RepeatControl?) {
        let key = Key(registry: ObjectIdentifier(registry), name: name)
        let old = table.withLock { table in
            if let control { return table.updateValue(control, forKey: key) }
            return table.removeValue(forKey: key)
        }
        old?.cancel()
    }

    /// Removes the entry for `name` if it is still `control`'s.
    static func remove(_ name: String, in registry: TempoRegistry, ifCurrent control: RepeatControl)
    {
        let key = Key(registry: ObjectIdentifier(registry), name: name)
        table.withLock { table in
            if table[key] === control { table[key] = nil }
        }
    }

    /// Cancels the loop named `name`; returns whether one was running.
    static func cancel(_ name: String, in registry: TempoRegistry) -> Bool {
        let key = Key(registry: ObjectIdentifier(registry), name: name)
        let control = table.withLock { $0.removeValue(forKey: key) }
        control?.cancel()
        return control != nil
    }

    /// Whether a loop named `name` is running.
    static func contains(_ name: String, in registry: TempoRegistry) -> Bool {
        let key = Key(registry: ObjectIdentifier(registry), name: name)
        return table.withLock { $0[key] != nil }
    }
}
