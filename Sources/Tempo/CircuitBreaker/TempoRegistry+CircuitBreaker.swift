// The registry's part of `circuitBreaker`: the key's entry in each shard's table, a call's
// admission and its outcome (each a lock and a table update), and the manual controls. The
// state-change callback runs after the lock is released. A closed breaker with no call of its
// state running and no failure in its window leaves its table: at the outcome or control that
// made it so, or, for a time window, on the timer that wakes when its newest failure has aged
// out.

extension CircuitBreakerEntry: CallFreeEntry {
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [GroupKey: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R { body(&tables.circuitBreakers, &tables.ids) }

    // A breaker's break ends when a call or a reading finds it over; its only timer is that of
    // a closed breaker's time window, which wakes when the newest failure has aged out.
    mutating func timerFired(at now: Duration) -> (run: Operation?, next: Duration?) {
        age(at: now)
        guard let next = nextWake, next > now else { return (nil, nil) }
        return (nil, next)
    }

    /// Fresh at `now`: it leaves. Otherwise it stays when its timer ends (open, half-open, a
    /// call running, or a failure that ages only at the end of the range).
    func isIdle(at now: Duration) -> Bool {
        var aged = self
        aged.age(at: now)
        return aged.isFresh
    }

    func keepsWhenTimerEnds(at now: Duration) -> Bool { !isIdle(at: now) }

    /// The shard's kept idle breaker is not listed: it has left the registry.
    var isListed: Bool { !(isKept && isFresh) }

    func snapshotEntry(key: GroupKey, now: Duration) -> TempoSnapshot.Entry {
        let reading = reading(at: now)
        return TempoSnapshot.Entry(
            kind: .circuitBreaker, key: key.description,
            state: .circuitBreaker(
                state: reading.state, failures: reading.failures, calls: reading.calls,
                reopensAt: reading.reopensAt))
    }
}

extension TempoRegistry.Tables {
    /// 1 when the breaker of `keptIdleBreaker` is in its table and has left the registry.
    var keptIdleBreakerCount: Int {
        guard let key = keptIdleBreaker, let slot = circuitBreakers[key], slot.state.isKept,
            slot.state.isFresh
        else { return 0 }
        return 1
    }
}

extension TempoRegistry {
    /// A call arrives at the breaker of `key`: it runs (with the breaker's generation and the
    /// epoch to report its outcome in) or is rejected. A lock and a table update (a new entry
    /// when none is live: a healthy breaker used one call at a time makes one per call); the
    /// clock is read only when the breaker is open.
    @inline(__always)
    func enterCircuitBreaker(
        _ key: GroupKey, policy: CircuitBreakerPolicy
    ) -> (admission: CircuitBreakerEntry.Admission, generation: UInt64) {
        var change: CircuitBreakerEntry.Change?
        let admitted = shard(key).tables.withLock { tables in
            CircuitBreakerEntry.access(&tables) {
                table, ids -> (CircuitBreakerEntry.Admission, UInt64) in
                let index = Self.breakerIndex(key, in: &table, ids: &ids, window: policy.window)
                let admission = table.values[index].state.admit(
                    at: { clock.now() }, policy: policy, change: &change)
                return (admission, table.values[index].state.generationInPlace)
            }
        }
        change?.notify()
        return admitted
    }

    /// The index of `key`'s breaker, made when none is live. A new breaker takes a new
    /// generation (never reused), so a call admitted by a breaker since reset or gone counts
    /// for nothing in the one that replaced it.
    @inline(__always)
    private static func breakerIndex(
        _ key: GroupKey, in table: inout [GroupKey: Slot<CircuitBreakerEntry>],
        ids: inout IDSource, window: CircuitBreakerPolicy.Window
    ) -> [GroupKey: Slot<CircuitBreakerEntry>].Index {
        if let index = table.index(forKey: key) { return index }
        table[key] = Slot(state: CircuitBreakerEntry(window: window, generation: ids.next()))
        return table.index(forKey: key)!
    }

    /// The call admitted in `epoch` by generation `generation` of the breaker of `key` ended
    /// with `outcome`. A breaker left fresh leaves; a time window's outcome makes sure its
    /// timer wakes when the window is empty again.
    @inline(__always)
    func recordCircuitBreaker(
        _ key: GroupKey, _ outcome: CircuitBreakerEntry.Outcome,
        admitted: (epoch: UInt64, generation: UInt64), policy: CircuitBreakerPolicy
    ) {
        let (change, timer) = shard(key).tables.withLock {
            tables -> (CircuitBreakerEntry.Change?, TimerRef?) in
            guard let index = tables.circuitBreakers.index(forKey: key),
                tables.circuitBreakers.values[index].state.generationInPlace
                    == admitted.generation
            else { return (nil, nil) }
            let change = tables.circuitBreakers.values[index].state.record(
                outcome, epoch: admitted.epoch, at: { clock.now() }, policy: policy)
            return (change, Self.settleBreaker(key, at: index, in: &tables, self))
        }
        timer?.cancel()
        change?.notify()
    }

    /// After a change to the breaker at `index`: a fresh one leaves the registry (its timer
    /// returned, to cancel outside the lock) and stays in its table as the shard's kept idle
    /// breaker, made new in place; the one kept before leaves the table if it is still idle.
    /// A closed time window's timer is armed for when the window holds no failure again.
    @inline(__always)
    private static func settleBreaker(
        _ key: GroupKey, at index: [GroupKey: Slot<CircuitBreakerEntry>].Index,
        in tables: inout Tables, _ registry: TempoRegistry
    ) -> TimerRef? {
        guard tables.circuitBreakers.values[index].state.isFreshInPlace else {
            if let wake = tables.circuitBreakers.values[index].state.nextWake {
                registry.arm(
                    &tables.circuitBreakers.values[index], key: key, wake: wake,
                    ids: &tables.ids)
            }
            return nil
        }
        let timer = tables.circuitBreakers.values[index].takeTimer()
        tables.circuitBreakers.values[index].state.forget(generation: tables.ids.next())
        guard !tables.circuitBreakers.values[index].state.isKeptInPlace else { return timer }
        tables.circuitBreakers.values[index].state.isKept = true
        if let previous = tables.keptIdleBreaker, previous != key,
            let kept = tables.circuitBreakers.index(forKey: previous)
        {
            if tables.circuitBreakers.values[kept].state.isFreshInPlace {
                tables.circuitBreakers.removeLive(previous)
            } else {
                tables.circuitBreakers.values[kept].state.isKept = false
            }
        }
        tables.keptIdleBreaker = key
        return timer
    }

    /// Opens the breaker `identifier` until it is closed or reset by hand (a new one when
    /// none is live); see ``Tempo/openCircuitBreaker(identifier:)``.
    ///
    /// ```swift
    /// registry.openCircuitBreaker(identifier: "payments")
    /// ```
    ///
    /// - Parameter identifier: The identifier the breaker's calls are made with.
    public func openCircuitBreaker(identifier: String) {
        let key = GroupKey.name(identifier)
        let now = clock.now()
        let change = shard(key).tables.withLock { tables in
            CircuitBreakerEntry.access(&tables) { table, ids in
                let index = Self.breakerIndex(key, in: &table, ids: &ids, window: .lastCalls(20))
                return table.values[index].state.open(at: now, for: nil)
            }
        }
        change?.notify()
    }

    /// Closes the breaker `identifier`; see ``Tempo/closeCircuitBreaker(identifier:)``.
    ///
    /// ```swift
    /// registry.closeCircuitBreaker(identifier: "payments")
    /// ```
    ///
    /// - Parameter identifier: The identifier the breaker's calls are made with.
    public func closeCircuitBreaker(identifier: String) {
        let key = GroupKey.name(identifier)
        let (change, timer) = shard(key).tables.withLock {
            tables -> (CircuitBreakerEntry.Change?, TimerRef?) in
            guard let index = tables.circuitBreakers.index(forKey: key) else { return (nil, nil) }
            let change = tables.circuitBreakers.values[index].state.close()
            return (change, Self.settleBreaker(key, at: index, in: &tables, self))
        }
        timer?.cancel()
        change?.notify()
    }

    /// Forgets the breaker `identifier`; see ``Tempo/resetCircuitBreaker(identifier:)``.
    ///
    /// ```swift
    /// registry.resetCircuitBreaker(identifier: "payments")
    /// ```
    ///
    /// - Parameter identifier: The identifier the breaker's calls are made with.
    public func resetCircuitBreaker(identifier: String) {
        let key = GroupKey.name(identifier)
        let removed = shard(key).tables.withLock { tables in
            CircuitBreakerEntry.access(&tables) { table, _ in table.removeLive(key) }
        }
        removed?.timer?.cancel()
        guard var entry = removed?.state else { return }
        entry.close()?.notify()
    }
}

extension TempoRegistry {
    /// The breaker entries the tables hold, how many of them are kept idle (left the
    /// registry), and what breaks their rule, if anything: in every shard, a fresh entry only
    /// as the kept one, made new and without a timer. For tests.
    var breakerTablesCheck: (stored: Int, kept: Int, broken: String?) {
        var stored = 0
        var kept = 0
        var broken: String?
        for (index, shard) in shards.enumerated() {
            shard.tables.withLock { tables in
                stored += tables.circuitBreakers.count
                kept += tables.keptIdleBreakerCount
                for (key, slot) in tables.circuitBreakers where slot.state.isFresh {
                    if key != tables.keptIdleBreaker || !slot.state.isKept {
                        broken = "shard \(index) holds the fresh breaker \(key) without keeping it"
                    } else if slot.timer != nil || slot.state.window.calls != 0 {
                        broken = "shard \(index) keeps the breaker \(key) with a timer or calls"
                    }
                }
            }
        }
        return (stored, kept, broken)
    }
}
