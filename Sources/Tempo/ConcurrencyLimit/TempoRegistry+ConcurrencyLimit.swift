// The registry's part of `concurrencyLimit`: the key's entry in each shard's table, entering and
// releasing a slot, the queue timer, withdrawal of a cancelled waiter, and reset. Every
// transition is a lock and a table update; waiters are woken after the lock is released.

/// The entry of one concurrency-limited key.
typealias LimitEntry = ConcurrencyLimitState<LimitWaiter>

extension Dictionary {
    /// `removeLive(_:)` for an entry already found: no second hash.
    fileprivate mutating func removeLive(at index: Index) -> Value {
        let removed = remove(at: index).value
        if capacity > 64, count * 8 < capacity {
            var compact = [Key: Value](minimumCapacity: count)
            for (key, value) in self { compact[key] = value }
            self = compact
        }
        return removed
    }
}

extension ConcurrencyLimitState: RegistryEntry, CallFreeEntry where Waiter == LimitWaiter {
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [GroupKey: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R { body(&tables.concurrencyLimits, &tables.ids) }

    // The entry keeps its own timer (see `limitTimerFired`): the generic one has nothing to do.
    mutating func timerFired(at now: Duration) -> (run: Operation?, next: Duration?) { (nil, nil) }
    var nextWake: Duration? { nextDeadline }
    func isIdle(at now: Duration) -> Bool { isIdle }

    func snapshotEntry(key: GroupKey, now: Duration) -> TempoSnapshot.Entry {
        TempoSnapshot.Entry(
            kind: .concurrencyLimit, key: key.description,
            state: .concurrencyLimit(running: running, queued: queuedCount))
    }
}

extension TempoRegistry {
    /// How a call entered its key.
    enum LimitAdmission {
        case run
        case wait(LimitWaiter, id: UInt64)
    }

    /// A call of `concurrencyLimit` arrives: it runs, waits, or is turned away (thrown).
    func enterConcurrencyLimit(
        _ key: GroupKey, limit: Int, queueLimit: Int, queueTimeout: Duration?,
        callerToken: SettleToken?
    ) throws(ConcurrencyLimitError) -> LimitAdmission {
        let (admission, waiter) = shard(key).tables.withLock { tables in
            LimitEntry.access(&tables) { table, ids -> (LimitEntry.Admission, LimitWaiter?) in
                var waiter: LimitWaiter?
                let admission = table[key, default: Slot(state: LimitEntry())].state.call(
                    limit: limit, queueLimit: queueLimit, queueTimeout: queueTimeout,
                    now: { clock.now() },
                    waiter: {
                        let made = LimitWaiter(callerToken: callerToken)
                        waiter = made
                        return made
                    })
                switch admission {
                case .run:
                    break
                case .queued:
                    // Asleep until decided: an advance of a deterministic clock must not wait
                    // for it (parked here, under the lock, so no decision can come first).
                    callerToken?.park()
                    if let index = table.index(forKey: key),
                        let wake = table.values[index].state.nextDeadline
                    {
                        armLimitTimer(&table.values[index], key: key, wake: wake, ids: &ids)
                    }
                case .queueFull, .timedOut:
                    // Turned away only while others hold slots: the entry stays, as it was.
                    break
                }
                return (admission, waiter)
            }
        }
        switch admission {
        case .run:
            return .run
        case .queued(let id):
            // `call` makes the waiter of every call it queues.
            return .wait(waiter!, id: id)
        case .queueFull(let running, let queued):
            throw .queueFull(running: running, queued: queued)
        case .timedOut:
            throw .queueTimedOut(queueTimeout ?? .zero)
        }
    }

    /// A call that held a slot ended: the slot goes to the head of the queue, or the key, left
    /// idle, leaves its table.
    func releaseConcurrencyLimit(_ key: GroupKey) {
        // `nil`, the usual case: the key goes on with others running and nobody to admit.
        let after = shard(key).tables.withLock { tables in
            LimitEntry.access(&tables) { table, _ -> (admitted: [LimitWaiter], TimerRef?)? in
                guard let index = table.index(forKey: key) else { return nil }
                // One in-place access: reading the slot back through `values` would copy it.
                let (admitted, idle) = table.values[index].state.releaseAndCheckIdle()
                if idle { return (admitted, table.removeLive(at: index).timer) }
                return admitted.isEmpty ? nil : (admitted, nil)
            }
        }
        guard let (admitted, timer) = after else { return }
        timer?.cancel()
        for waiter in admitted { decide(waiter, .admitted) }
    }

    /// The task of the waiter `id` was cancelled: it leaves the queue, unless it was decided.
    func withdrawConcurrencyLimit(_ key: GroupKey, id: UInt64) {
        let (removed, admitted) = shard(key).tables.withLock { tables in
            LimitEntry.access(&tables) { table, _ -> (LimitWaiter?, [LimitWaiter]) in
                guard let index = table.index(forKey: key) else { return (nil, []) }
                return table.values[index].state.withdraw(id)
            }
        }
        if let removed { decide(removed, .cancelled) }
        for waiter in admitted { decide(waiter, .admitted) }
    }

    /// Tells a waiter its fate, outside the lock. A task that carried a work token gets it
    /// counted as running again; one that carried none gets a new one, on a deterministic clock,
    /// so an advance that woke it waits until it finishes or sleeps on the clock again.
    private func decide(_ waiter: LimitWaiter, _ verdict: LimitWaiter.Verdict) {
        if let token = waiter.callerToken {
            token.unpark()
            waiter.decide(verdict, token: nil)
        } else {
            waiter.decide(verdict, token: clock.settleToken())
        }
    }

    /// Makes sure the key's timer wakes no later than `wake`. Called with the lock held.
    private func armLimitTimer(
        _ slot: inout Slot<LimitEntry>, key: GroupKey, wake: Duration, ids: inout IDSource
    ) {
        if slot.timer != nil, slot.timerDeadline <= wake { return }
        slot.timer?.cancel()
        let generation = ids.next()
        slot.generation = generation
        slot.timerDeadline = wake
        timerCount.add(1, ordering: .relaxed)
        slot.timer = clock.startTimer(at: wake) { [self] now in
            firing { limitTimerFired(key, generation: generation, at: now) }
        }
    }

    /// The key's timer fired: waiters whose queue deadline came leave with a timeout. Returns
    /// when to fire next, or `nil` to end the timer.
    private func limitTimerFired(_ key: GroupKey, generation: UInt64, at now: Duration)
        -> Duration?
    {
        let (expired, admitted, next) = shard(key).tables.withLock { tables in
            LimitEntry.access(&tables) {
                table, _ -> ([LimitWaiter], [LimitWaiter], Duration?) in
                guard let index = table.index(forKey: key),
                    table.values[index].generationInPlace == generation
                else { return ([], [], nil) }
                let (expired, admitted) = table.values[index].state.expire(at: now)
                let next = table.values[index].state.nextDeadline
                if table.values[index].state.isIdle {
                    _ = table.removeLive(key)
                } else if let next {
                    table.values[index].timerDeadline = next
                } else {
                    table.values[index].timer = nil
                }
                return (expired, admitted, next)
            }
        }
        for waiter in expired { decide(waiter, .timedOut) }
        for waiter in admitted { decide(waiter, .admitted) }
        return next
    }

    /// Empties the queue of `key`: each waiter throws ``ConcurrencyLimitError/reset``.
    /// Running calls keep their slots until they end.
    func resetConcurrencyLimit(_ key: GroupKey) {
        let (waiters, timer) = shard(key).tables.withLock { tables in
            LimitEntry.access(&tables) { table, _ -> ([LimitWaiter], TimerRef?) in
                guard let index = table.index(forKey: key) else { return ([], nil) }
                let waiters = table.values[index].state.removeWaiters()
                let timer = table.values[index].timer
                table.values[index].timer = nil
                if table.values[index].state.isIdle { _ = table.removeLive(key) }
                return (waiters, timer)
            }
        }
        timer?.cancel()
        for waiter in waiters { decide(waiter, .reset) }
    }
}
