// The registry's part of `circuitBreaker`: the key's entry in each shard's table, a call's
// admission and its outcome (each a lock and a table update), and the manual controls. The
// state-change callback runs after the lock is released.

extension CircuitBreakerEntry: CallFreeEntry {
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [GroupKey: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R { body(&tables.circuitBreakers, &tables.ids) }

    // A breaker has no timer (its break ends when a call or a reading finds it over), and it
    // stays in its table until reset.
    mutating func timerFired(at now: Duration) -> (run: Operation?, next: Duration?) { (nil, nil) }
    var nextWake: Duration? { nil }
    func isIdle(at now: Duration) -> Bool { false }

    func snapshotEntry(key: GroupKey, now: Duration) -> TempoSnapshot.Entry {
        let reading = reading(at: now)
        return TempoSnapshot.Entry(
            kind: .circuitBreaker, key: key.description,
            state: .circuitBreaker(
                state: reading.state, failures: reading.failures, calls: reading.calls,
                reopensAt: reading.reopensAt))
    }
}

extension TempoRegistry {
    /// A call arrives at the breaker of `key`: it runs (with the breaker's generation and the
    /// epoch to report its outcome in) or is rejected. A lock and a table update; the clock is
    /// read only when the breaker is open.
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
                return (admission, table.values[index].generationInPlace)
            }
        }
        change?.notify()
        return admitted
    }

    /// The index of `key`'s breaker, made when none is live. A new breaker takes a new
    /// generation (never reused), so a call admitted by a breaker since reset counts for
    /// nothing in the one that replaced it.
    @inline(__always)
    private static func breakerIndex(
        _ key: GroupKey, in table: inout [GroupKey: Slot<CircuitBreakerEntry>],
        ids: inout IDSource, window: CircuitBreakerPolicy.Window
    ) -> [GroupKey: Slot<CircuitBreakerEntry>].Index {
        if let index = table.index(forKey: key) { return index }
        var slot = Slot(state: CircuitBreakerEntry(window: window))
        slot.generation = ids.next()
        table[key] = slot
        return table.index(forKey: key)!
    }

    /// The call admitted in `epoch` by generation `generation` of the breaker of `key` ended
    /// with `outcome`.
    @inline(__always)
    func recordCircuitBreaker(
        _ key: GroupKey, _ outcome: CircuitBreakerEntry.Outcome,
        admitted: (epoch: UInt64, generation: UInt64), policy: CircuitBreakerPolicy
    ) {
        let change = shard(key).tables.withLock { tables in
            CircuitBreakerEntry.access(&tables) { table, _ -> CircuitBreakerEntry.Change? in
                guard let index = table.index(forKey: key),
                    table.values[index].generationInPlace == admitted.generation
                else { return nil }
                return table.values[index].state.record(
                    outcome, epoch: admitted.epoch, at: { clock.now() }, policy: policy)
            }
        }
        change?.notify()
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
        let change = shard(key).tables.withLock { tables in
            CircuitBreakerEntry.access(&tables) { table, _ -> CircuitBreakerEntry.Change? in
                guard let index = table.index(forKey: key) else { return nil }
                return table.values[index].state.close()
            }
        }
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
        guard var entry = removed?.state else { return }
        entry.close()?.notify()
    }
}
