// What visits every shard: `cancelAll()`, written once over the kinds that hold a caller's
// call (debounce, throttle, delay), and `snapshot()`, over every kind of entry.

extension TempoRegistry {
    /// Cancels every pending debounce, throttle and delay call of this registry. Operations
    /// already running go on; cancelled ones never start. Registered running work (repeat,
    /// retry, timeout, time) is not touched: cancel its task.
    ///
    /// A call whose instant has already come when `cancelAll()` is called (its timer is a little
    /// late on a busy clock) is not cancelled: it runs, as it would have a moment earlier.
    ///
    /// ```swift
    /// func userDidSignOut() { TempoRegistry.shared.cancelAll() }
    /// ```
    public func cancelAll() {
        let now = clock.now()
        var ended = EndedEntries()
        forEachShard { tables in
            ended.take(DebounceState<Operation>.self, from: &tables, at: now, registry: self)
            ended.take(ThrottleState<Operation>.self, from: &tables, at: now, registry: self)
            ended.take(DelayState.self, from: &tables, at: now, registry: self)
        }
        for timer in ended.timers { timer.cancel() }
        for (operation, stamp) in ended.dropped { operation.discard(reporting: stamp) }
        for (operation, stamp) in ended.due { operation.launch(clock, reporting: stamp) }
        pulseDrains()
    }

    /// What `cancelAll()` collects under the locks and carries out after them.
    private struct EndedEntries {
        var timers: [TimerRef] = []
        /// The calls that run and those dropped, each with the stamp of its decision.
        var due: [(Operation, CallStamp?)] = []
        var dropped: [(Operation, CallStamp?)] = []

        /// Ends every entry of one kind in a shard and empties its table.
        mutating func take<Entry: CallEntry>(
            _: Entry.Type, from tables: inout Tables, at now: Duration, registry: TempoRegistry
        ) {
            Entry.access(&tables) { table, _ in
                for (key, var slot) in table {
                    if let timer = slot.timer { timers.append(timer) }
                    let outcome = slot.state.cancel(at: now)
                    if let operation = outcome.due {
                        due.append((operation, registry.stamp(Entry.self, key, at: now)))
                    }
                    if let operation = outcome.dropped {
                        dropped.append((operation, registry.stamp(Entry.self, key, at: now)))
                    }
                }
                table.removeAll()
            }
        }
    }

    /// What is live in this registry now, per call site or identifier. Empty when idle.
    ///
    /// Each entry is read under its shard's lock, with the clock read once first; shards are
    /// read one after another, so a key that changes meanwhile in a shard not yet read shows
    /// its new state.
    ///
    /// ```swift
    /// print(TempoRegistry.shared.snapshot())
    /// // debounce  Search/SearchModel.swift:41:9  runs at 12.300 s (in 300.0 ms)
    /// ```
    ///
    /// - Returns: One entry per live key (debounce and throttle groups, pending delays, rate
    ///   limits, concurrency limits, retry budgets and circuit breakers, and `repeat`, `retry`,
    ///   `timeout`, `time` and `hedge` calls in progress), sorted by kind and key, with the clock
    ///   reading it was taken at.
    public func snapshot() -> TempoSnapshot {
        let now = clock.now()
        var entries: [TempoSnapshot.Entry] = []
        func add<Entry: TableEntry>(_: Entry.Type, from tables: inout Tables) {
            Entry.access(&tables) { table, _ in
                for (key, slot) in table where slot.state.isListed {
                    entries.append(slot.state.snapshotEntry(key: key, now: now))
                }
            }
        }
        forEachShard { tables in
            add(DebounceState<Operation>.self, from: &tables)
            add(ThrottleState<Operation>.self, from: &tables)
            add(DelayState.self, from: &tables)
            add(RunningWork.self, from: &tables)
            add(RateLimitEntry.self, from: &tables)
            add(WindowLimitEntry.self, from: &tables)
            add(ConcurrencyLimitState<LimitWaiter>.self, from: &tables)
            add(RetryBudgetState.self, from: &tables)
            add(BreakerState.self, from: &tables)
        }
        entries.sort { ($0.kind.rawValue, $0.key) < ($1.kind.rawValue, $1.key) }
        return TempoSnapshot(
            now: now, entries: entries, runningOperations: clock.work?.runningCount ?? 0,
            isDraining: isDraining)
    }
}
