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
    /// The shard's kept idle entry is not listed: only keys with calls running or waiting are.
    var isListed: Bool { !isIdle }

    func snapshotEntry(key: GroupKey, now: Duration) -> TempoSnapshot.Entry {
        TempoSnapshot.Entry(
            kind: .concurrencyLimit, key: key.description,
            state: .concurrencyLimit(running: running, queued: queuedCount))
    }
}

extension TempoRegistry.Slot where State == LimitEntry {
    /// Whether the entry is idle, read in place (see `generationInPlace`).
    var isIdleInPlace: Bool { mutating get { state.isIdle } }
    /// Whether the entry is the one its shard keeps idle, read in place.
    var isKeptInPlace: Bool { mutating get { state.isKept } }
}

extension TempoRegistry.Tables {
    /// 1 when the entry of `keptIdleLimit` is in its table and idle, else 0.
    var keptIdleLimitCount: Int {
        guard let key = keptIdleLimit, let slot = concurrencyLimits[key], slot.state.isIdle else {
            return 0
        }
        return 1
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
        let (admission, waiter) = shard(key).tables.withLock {
            tables -> (LimitEntry.Admission, LimitWaiter?) in
            LimitEntry.access(&tables) {
                table, ids -> (LimitEntry.Admission, LimitWaiter?) in
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
                    if let index = table.index(forKey: key),
                        let wake = table.values[index].state.nextDeadline
                    {
                        armLimitTimer(&table.values[index], key: key, wake: wake, ids: &ids)
                    }
                    // Asleep until decided: an advance of a deterministic clock must not wait
                    // for it. Parked here, under the lock, so no decision can come first, and
                    // after the queue timer is on the clock: an advance that sees the task
                    // parked sees the timer too, and fires it if the deadline comes.
                    callerToken?.park()
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
    /// idle, becomes its shard's kept idle entry (see `Tables.keptIdleLimit`).
    func releaseConcurrencyLimit(_ key: GroupKey) {
        // `nil`, the usual case: the key goes on with others running and nobody to admit, or
        // it went idle and its entry is kept.
        let after = shard(key).tables.withLock { tables -> (admitted: [LimitWaiter], TimerRef?)? in
            guard let index = tables.concurrencyLimits.index(forKey: key) else { return nil }
            // One in-place access: reading the slot back through `values` would copy it.
            let (admitted, idle) = tables.concurrencyLimits.values[index].state
                .releaseAndCheckIdle()
            guard idle else { return admitted.isEmpty ? nil : (admitted, nil) }
            // Idle (so nobody was admitted): the entry stays, without its timer, as the one the
            // shard keeps. Unless it already was, the entry kept before leaves the table if it
            // is idle, or stops being the kept one if it is live again.
            let timer = tables.concurrencyLimits.values[index].takeTimer()
            if !tables.concurrencyLimits.values[index].isKeptInPlace {
                tables.concurrencyLimits.values[index].state.isKept = true
                // (`previous != key` keeps a stale name, were there ever one, from removing
                // the entry being kept.)
                if let previous = tables.keptIdleLimit, previous != key,
                    let kept = tables.concurrencyLimits.index(forKey: previous)
                {
                    if tables.concurrencyLimits.values[kept].isIdleInPlace {
                        _ = tables.concurrencyLimits.removeLive(at: kept)
                    } else {
                        tables.concurrencyLimits.values[kept].state.isKept = false
                    }
                }
                tables.keptIdleLimit = key
            }
            return timer.map { ([], $0) }
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
                    // A timer that fired as its entry went idle and was kept: it stays kept.
                    if table.values[index].isKeptInPlace {
                        table.values[index].timer = nil
                    } else {
                        _ = table.removeLive(key)
                    }
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
            let (waiters, timer, keptRemoved) = LimitEntry.access(&tables) {
                table, _ -> ([LimitWaiter], TimerRef?, Bool) in
                guard let index = table.index(forKey: key) else { return ([], nil, false) }
                let waiters = table.values[index].state.removeWaiters()
                let timer = table.values[index].takeTimer()
                guard table.values[index].isIdleInPlace else { return (waiters, timer, false) }
                let removed = table.removeLive(at: index)
                return (waiters, timer, removed.state.isKept)
            }
            if keptRemoved { tables.keptIdleLimit = nil }
            return (waiters, timer)
        }
        timer?.cancel()
        for waiter in waiters { decide(waiter, .reset) }
    }
}

extension TempoRegistry {
    /// The concurrency-limit entries the tables hold, how many of them are kept idle, and what
    /// breaks their rule, if anything: in every shard, an idle entry only as the kept one, and
    /// without a timer. For tests.
    var limitTablesCheck: (stored: Int, kept: Int, broken: String?) {
        var stored = 0
        var kept = 0
        var broken: String?
        for (index, shard) in shards.enumerated() {
            shard.tables.withLock { tables in
                stored += tables.concurrencyLimits.count
                kept += tables.keptIdleLimitCount
                for (key, slot) in tables.concurrencyLimits
                where slot.state.isIdle && key != tables.keptIdleLimit {
                    broken = "shard \(index) holds the idle entry \(key) without keeping it"
                }
                for (key, slot) in tables.concurrencyLimits
                where slot.state.isIdle && slot.timer != nil {
                    broken = "shard \(index) keeps the idle entry \(key) with a timer"
                }
                for (key, slot) in tables.concurrencyLimits
                where slot.state.isKept != (key == tables.keptIdleLimit) {
                    broken = "shard \(index): the entry \(key) is marked kept wrongly"
                }
            }
        }
        return (stored, kept, broken)
    }
}
