// The idle entry a shard keeps, for the two kinds whose key is most often used one call at a
// time: a concurrency limit (nothing running, nobody waiting) and a circuit breaker (closed,
// nothing running, no failure). Without it, such a key would make its entry and remove it
// again on every call. The rule, for each of the two kinds, in each shard:
// - The shard names at most one key (`keptIdleLimit`, `keptIdleBreaker`). Only the named
//   key's entry stays in its table when it goes idle, without a timer; any other entry that
//   goes idle leaves its table.
// - When another key of the shard goes idle it takes the name, and the entry named before
//   leaves its table if it is idle (one live again just loses the name, and leaves when it
//   next goes idle).
// - Neither `count` nor `snapshot()` sees a kept idle entry: for the registry, it has left.
// The name is the only record of which entry is kept: an entry carries no flag of its own.

extension TempoRegistry.Tables {
    /// Makes `key`, whose entry in `table` has just gone idle, the one whose idle entry the
    /// shard keeps (`kept`); the entry named before leaves `table` if it is idle.
    @inline(__always)
    static func keep<State>(
        _ key: GroupKey, in table: inout [GroupKey: TempoRegistry.Slot<State>],
        kept: inout GroupKey?, isIdle: (inout TempoRegistry.Slot<State>) -> Bool
    ) {
        // The usual case, the key kept already, compared in place: `kept != key` wraps `key`
        // in an optional, a copy of its name retained and released on every call.
        if case .some(let current) = kept, current == key { return }
        if let previous = kept, let index = table.index(forKey: previous),
            isIdle(&table.values[index])
        {
            table.removeLive(at: index)
        }
        kept = key
    }

    /// 1 when the entry of `keptIdleLimit` is in its table and idle, else 0.
    var keptIdleLimitCount: Int {
        guard let key = keptIdleLimit, let slot = concurrencyLimits[key], slot.state.isIdle else {
            return 0
        }
        return 1
    }

    /// 1 when the breaker of `keptIdleBreaker` is in its table and has left the registry.
    var keptIdleBreakerCount: Int {
        guard let key = keptIdleBreaker, let slot = circuitBreakers[key], slot.state.isFresh
        else { return 0 }
        return 1
    }
}
