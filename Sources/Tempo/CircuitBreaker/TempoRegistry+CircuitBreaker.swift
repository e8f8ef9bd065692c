// The registry's part of `circuitBreaker`: the key's entry in each shard's table, a call's
// admission and its outcome (each a lock and a table update), and the manual controls. The
// state-change callback runs after the lock is released. A closed breaker with no call of its
// state running and no failure in its window leaves the registry: at the outcome or control
// that made it so, or, for a time window, on the timer that wakes when its newest failure has
// aged out. Its entry may stay in its table as its shard's kept idle breaker
// (KeptIdleEntries.swift), which is why these transitions take the shard (`withShard(of:)`)
// rather than one entry (`enter`).

extension BreakerState: TimedEntry {
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

    /// A fresh breaker in a table is its shard's kept idle one: it has left the registry.
    var isListed: Bool { !isFresh }

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
    /// A call arrives at the breaker of `key`: it runs (with the breaker's id and the epoch to
    /// report its outcome in) or is rejected. A lock and a table update (a new entry when none
    /// is in the table; a healthy breaker used one call at a time finds the one its shard
    /// keeps, see KeptIdleEntries.swift); the clock is read only when the breaker is open.
    @inline(__always)
    func enterCircuitBreaker(
        _ key: GroupKey, policy: CircuitBreakerPolicy
    ) -> (admission: BreakerState.Admission, breakerID: UInt64) {
        var change: BreakerState.Change?
        let admitted = withShard(of: key) { tables -> (BreakerState.Admission, UInt64) in
            let index = Self.breakerIndex(
                key, in: &tables.circuitBreakers, ids: &tables.ids, window: policy.window)
            let admission = tables.circuitBreakers.values[index].state.admit(
                at: { clock.now() }, policy: policy, change: &change)
            return (admission, tables.circuitBreakers.values[index].state.idInPlace)
        }
        report(key, change)
        if case .rejected(let after) = admitted.0, events.isObserved {
            events.report(.circuitBreaker, key, .breakerRejected(retryAfter: after))
        }
        return admitted
    }

    /// The index of `key`'s breaker, made when none is live. A new breaker takes a new id
    /// (never reused), so a call admitted by a breaker since reset or gone counts
    /// for nothing in the one that replaced it.
    @inline(__always)
    private static func breakerIndex(
        _ key: GroupKey, in table: inout [GroupKey: Slot<BreakerState>],
        ids: inout IDSource, window: CircuitBreakerPolicy.Window
    ) -> [GroupKey: Slot<BreakerState>].Index {
        if let index = table.index(forKey: key) { return index }
        table[key] = Slot(state: BreakerState(window: window, id: ids.next()))
        return table.index(forKey: key)!
    }

    /// The call admitted in `epoch` by the breaker of `key` whose id is `breakerID` ended with
    /// `outcome`. A breaker left fresh leaves; a time window's outcome makes sure its
    /// timer wakes when the window is empty again.
    @inline(__always)
    func recordCircuitBreaker(
        _ key: GroupKey, _ outcome: BreakerState.Outcome,
        admitted: (epoch: UInt64, breakerID: UInt64), policy: CircuitBreakerPolicy
    ) {
        let (change, timer) = withShard(of: key) {
            tables -> (BreakerState.Change?, TimerRef?) in
            guard let index = tables.circuitBreakers.index(forKey: key) else { return (nil, nil) }
            // One in-place access to the slot for the outcome and the settling: each access
            // through `values` checks the table's storage again.
            let recorded = Self.record(
                outcome, admitted: admitted, policy: policy, self,
                in: &tables.circuitBreakers.values[index], key: key, ids: &tables.ids)
            guard let recorded else { return (nil, nil) }
            if recorded.left { Self.keepBreaker(key, in: &tables) }
            return (recorded.change, recorded.timer)
        }
        timer?.cancel()
        report(key, change)
    }

    /// ``recordCircuitBreaker(_:_:admitted:policy:)`` on the breaker's slot, under the lock:
    /// `nil` when the slot holds another breaker than the one that admitted the call.
    @inline(__always)
    private static func record(
        _ outcome: BreakerState.Outcome, admitted: (epoch: UInt64, breakerID: UInt64),
        policy: CircuitBreakerPolicy, _ registry: TempoRegistry,
        in slot: inout Slot<BreakerState>, key: GroupKey, ids: inout IDSource
    ) -> (change: BreakerState.Change?, left: Bool, timer: TimerRef?)? {
        guard slot.state.id == admitted.breakerID else { return nil }
        let change = slot.state.record(
            outcome, epoch: admitted.epoch, at: { registry.clock.now() }, policy: policy)
        let (left, timer) = settle(&slot, key: key, ids: &ids, registry)
        return (change, left, timer)
    }

    /// After a change to the breaker at `index`: see ``settle(_:key:ids:_:)``.
    @inline(__always)
    private static func settleBreaker(
        _ key: GroupKey, at index: [GroupKey: Slot<BreakerState>].Index,
        in tables: inout Tables, _ registry: TempoRegistry
    ) -> TimerRef? {
        let (left, timer) = settle(
            &tables.circuitBreakers.values[index], key: key, ids: &tables.ids, registry)
        if left { keepBreaker(key, in: &tables) }
        return timer
    }

    /// After a change to a breaker: a fresh one leaves the registry (`left`; its timer
    /// returned, to cancel outside the lock) and stays in its table as the shard's kept idle
    /// breaker, made new in place (the caller names it kept: ``keepBreaker(_:in:)``,
    /// KeptIdleEntries.swift). A closed time window's timer is armed for when the window holds
    /// no failure again.
    @inline(__always)
    private static func settle(
        _ slot: inout Slot<BreakerState>, key: GroupKey, ids: inout IDSource,
        _ registry: TempoRegistry
    ) -> (left: Bool, timer: TimerRef?) {
        guard slot.state.isFresh else {
            if let wake = slot.state.nextWake {
                registry.arm(&slot, key: key, wake: wake, ids: &ids)
            }
            return (false, nil)
        }
        let timer = slot.takeTimer()
        slot.state.forget(newID: ids.next())
        return (true, timer)
    }

    /// Makes the fresh breaker of `key` its shard's kept idle one.
    @inline(__always)
    private static func keepBreaker(_ key: GroupKey, in tables: inout Tables) {
        Tables.keep(key, in: &tables.circuitBreakers, kept: &tables.keptIdleBreaker) {
            $0.state.isFreshInPlace
        }
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
        let change = withShard(of: key) { tables in
            let index = Self.breakerIndex(
                key, in: &tables.circuitBreakers, ids: &tables.ids, window: .lastCalls(20))
            return tables.circuitBreakers.values[index].state.open(at: now, for: nil)
        }
        report(key, change)
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
        let (change, timer) = withShard(of: key) {
            tables -> (BreakerState.Change?, TimerRef?) in
            guard let index = tables.circuitBreakers.index(forKey: key) else { return (nil, nil) }
            let change = tables.circuitBreakers.values[index].state.close()
            return (change, Self.settleBreaker(key, at: index, in: &tables, self))
        }
        timer?.cancel()
        report(key, change)
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
        let removed = withShard(of: key) { tables in tables.circuitBreakers.removeLive(key) }
        removed?.timer?.cancel()
        guard var entry = removed?.state else { return }
        report(key, entry.close())
    }

    /// Tells a change of the breaker of `key` to its policy's `onStateChange`, then to the
    /// registry's observers. Outside the lock.
    @inline(__always)
    private func report(_ key: GroupKey, _ change: BreakerState.Change?) {
        guard let change else { return }
        change.notify()
        events.report(.circuitBreaker, key, .breakerChanged(from: change.old, to: change.new))
    }
}
