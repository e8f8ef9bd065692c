// Running work in the registry: `repeat`, `retry`, `timeout` and `time` time themselves (they
// sleep on their clock in their own task), and enter the registry as a record of what they are
// doing, so that `snapshot()` and `liveKeyCount` show them. A record has no timer and no call
// waiting; `cancelAll` leaves it alone (cancel the work's task instead).

/// What a piece of running work is doing now.
struct RunningWork: Sendable {
    var kind: TempoSnapshot.Kind
    var key: GroupKey
    var state: TempoSnapshot.State
}

extension RunningWork: TableEntry {
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [UInt64: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R { body(&tables.running, &tables.ids) }

    func snapshotEntry(key: UInt64, now: Duration) -> TempoSnapshot.Entry {
        TempoSnapshot.Entry(kind: kind, key: self.key.description, state: state)
    }
}

extension TempoRegistry {
    /// Records running work so it appears in ``snapshot()``; returns its id for
    /// ``updateRunningWork(_:_:)`` and ``endRunningWork(_:)``. A lock, no await, no task.
    func beginRunningWork(
        _ kind: TempoSnapshot.Kind, identifier: String?, fileID: StaticString, line: UInt,
        column: UInt, state: TempoSnapshot.State
    ) -> UInt64 {
        let key = GroupKey(identifier, fileID, line, column)
        return insertNew(RunningWork(kind: kind, key: key, state: state), in: shard(key))
    }

    /// Updates what running work is doing.
    func updateRunningWork(_ id: UInt64, _ state: TempoSnapshot.State) {
        modify(RunningWork.self, id) { $0.state = state }
    }

    /// Removes the record of running work that ended.
    func endRunningWork(_ id: UInt64) {
        remove(RunningWork.self, id)
    }
}
