// The registry's part of `concurrencyLimit`: the key's entry in each shard's table, entering and
// releasing a slot, the queue timer, withdrawal of a cancelled waiter, and reset. Every
// transition is a lock and a table update; waiters are woken after the lock is released. A key
// left idle may stay as its shard's kept idle entry (KeptIdleEntries.swift), which is why these
// transitions take the shard (`withShard(of:)`) rather than one entry (`enter`); the entry's
// timer is its own (queue deadlines wake waiters, they run no operation).

/// The entry of one concurrency-limited key.
typealias LimitEntry = ConcurrencyLimitState<LimitWaiter>

extension ConcurrencyLimitState: TableEntry where Waiter == LimitWaiter {
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [GroupKey: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R { body(&tables.concurrencyLimits, &tables.ids) }

    /// An idle entry in a table is its shard's kept one: only keys with calls running or
    /// waiting are listed.
    var isListed: Bool { !isIdle }

    func snapshotEntry(key: GroupKey, now: Duration) -> TempoSnapshot.Entry {
        TempoSnapshot.Entry(
            kind: .concurrencyLimit, key: key.description,
            state: .concurrencyLimit(running: running, queued: queuedCount))
    }
}

extension TempoRegistry.Slot where State == LimitEntry {
    /// Whether the entry is idle, read in place (see `timerGenerationInPlace`).
    var isIdleInPlace: Bool { mutating get { state.isIdle } }
}

extension TempoRegistry {
    /// How a call entered its key.
    enum LimitAdmission {
        case run
        case wait(LimitWaiter, id: UInt64)
    }

    /// A call of `concurrencyLimit` arrives: it runs, waits, or is turned away (thrown).
    /// Always inlined into the front door, with what only a queued call does kept out of line
    /// (``queuedLocked(_:in:ids:waiter:)``): as a call of its own, it made an admitted call a
    /// third dearer (the "`concurrencyLimit`, admitted" rows).
    @inline(__always)
    func enterConcurrencyLimit(
        _ key: GroupKey, limit: Int, queueLimit: Int, queueTimeout: Duration?,
        callerToken: SettleToken?
    ) throws(ConcurrencyLimitError) -> LimitAdmission {
        let (admission, waiter) = withShard(of: key) {
            tables -> (LimitEntry.Admission, LimitWaiter?) in
            LimitEntry.access(&tables) {
                table, ids -> (LimitEntry.Admission, LimitWaiter?) in
                var waiter: LimitWaiter?
                let admission = table[key, default: Slot(state: LimitEntry())].state.call(
                    limit: limit, queueLimit: queueLimit, queueTimeout: queueTimeout,
                    now: { clock.now() },
                    waiter: {
                        let made = LimitWaiter(
                            callerToken: callerToken,
                            queuedAt: events.isObserved ? clock.now() : nil)
                        waiter = made
                        return made
                    })
                switch admission {
                case .run:
                    break
                case .queued:
                    queuedLocked(key, in: &table, ids: &ids, waiter: waiter)
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
            if events.isObserved {
                report(key, .concurrencyLimitRefused(running: running, queued: queued))
            }
            throw .queueFull(running: running, queued: queued)
        case .timedOut:
            if events.isObserved { report(key, .concurrencyLimitTimedOut(waited: .zero)) }
            throw .queueTimedOut(queueTimeout ?? .zero)
        }
    }

    /// A call was queued in the entry of `key`: its queue timer is armed and, when observed,
    /// the call is reported. Called with the lock held.
    @inline(never)
    private func queuedLocked(
        _ key: GroupKey, in table: inout [GroupKey: Slot<LimitEntry>], ids: inout IDSource,
        waiter: LimitWaiter?
    ) {
        guard let index = table.index(forKey: key) else { return }
        if let wake = table.values[index].state.nextDeadline {
            arm(&table.values[index], key: key, wake: wake, ids: &ids) {
                $0.limitTimerFired($1, timerGeneration: $2, at: $3)
            }
        }
        // Reported before the lock is let go, so that no release or timer deciding for this
        // waiter is reported first. The observer does not run here: the event is only
        // buffered.
        if let queuedAt = waiter?.queuedAt {
            reportQueued(key, table.values[index].state, at: queuedAt)
        }
    }

    /// A call that held a slot ended: the slot goes to the head of the queue, or the key, left
    /// idle, becomes its shard's kept idle entry (see `Tables.keptIdleLimit`).
    func releaseConcurrencyLimit(_ key: GroupKey) {
        // `nil`, the usual case: the key goes on with others running and nobody to admit, or
        // it went idle and its entry is kept.
        let after = withShard(of: key) { tables -> (admitted: [LimitWaiter], TimerRef?)? in
            guard let index = tables.concurrencyLimits.index(forKey: key) else { return nil }
            // One in-place access: reading the slot back through `values` would copy it.
            let (admitted, idle) = tables.concurrencyLimits.values[index].state
                .releaseAndCheckIdle()
            guard idle else { return admitted.isEmpty ? nil : (admitted, nil) }
            // Idle (so nobody was admitted): the entry stays, without its timer, as the one the
            // shard keeps.
            let timer = tables.concurrencyLimits.values[index].takeTimer()
            Tables.keep(key, in: &tables.concurrencyLimits, kept: &tables.keptIdleLimit) {
                $0.isIdleInPlace
            }
            return timer.map { ([], $0) }
        }
        guard let (admitted, timer) = after else { return }
        timer?.cancel()
        for waiter in admitted { decide(waiter, .admitted, key) }
    }

    /// The task of the waiter `id` was cancelled: it leaves the queue, unless it was decided.
    func withdrawConcurrencyLimit(_ key: GroupKey, id: UInt64) {
        let (removed, admitted) = withShard(of: key) { tables -> (LimitWaiter?, [LimitWaiter]) in
            guard let index = tables.concurrencyLimits.index(forKey: key) else { return (nil, []) }
            return tables.concurrencyLimits.values[index].state.withdraw(id)
        }
        if let removed { decide(removed, .cancelled, key) }
        for waiter in admitted { decide(waiter, .admitted, key) }
    }

    /// Tells a waiter its fate, outside the lock. A task that carried a work token gets it
    /// counted as running again; one that carried none gets a new one, on a deterministic clock,
    /// so an advance that woke it waits until it finishes or sleeps on the clock again.
    private func decide(_ waiter: LimitWaiter, _ verdict: LimitWaiter.Verdict, _ key: GroupKey) {
        if let queuedAt = waiter.queuedAt { reportEnd(key, verdict, queuedAt: queuedAt) }
        if let token = waiter.callerToken {
            token.unpark()
            waiter.decide(verdict, token: nil)
        } else {
            waiter.decide(verdict, token: clock.settleToken())
        }
    }

    /// The key's timer fired: waiters whose queue deadline came leave with a timeout. Returns
    /// when to fire next, or `nil` to end the timer.
    // The reports, kept out of line: the admitted and turned-away paths stay as small as they
    // were, with one relaxed load for the check.

    @inline(never)
    private func report(_ key: GroupKey, _ decision: TempoEvent.Decision) {
        events.report(.concurrencyLimit, key, decision)
    }

    @inline(never)
    private func reportQueued(_ key: GroupKey, _ state: LimitEntry, at queuedAt: Duration) {
        events.report(
            .concurrencyLimit, key,
            .concurrencyLimitQueued(running: state.running, queued: state.queuedCount),
            at: queuedAt)
    }

    /// The end of an observed wait: admitted or timed out, with how long it lasted.
    @inline(never)
    private func reportEnd(_ key: GroupKey, _ verdict: LimitWaiter.Verdict, queuedAt: Duration) {
        let now = clock.now()
        let waited = now.subtracting(queuedAt)
        switch verdict {
        case .admitted:
            events.report(
                .concurrencyLimit, key, .concurrencyLimitAdmitted(waited: waited), at: now)
        case .timedOut:
            events.report(
                .concurrencyLimit, key, .concurrencyLimitTimedOut(waited: waited), at: now)
        case .reset, .cancelled:
            break
        }
    }

    private func limitTimerFired(_ key: GroupKey, timerGeneration: UInt64, at now: Duration)
        -> Duration?
    {
        let (expired, admitted, next) = withShard(of: key) {
            tables -> ([LimitWaiter], [LimitWaiter], Duration?) in
            guard let index = tables.concurrencyLimits.index(forKey: key),
                tables.concurrencyLimits.values[index].timerGenerationInPlace == timerGeneration
            else { return ([], [], nil) }
            let (expired, admitted) = tables.concurrencyLimits.values[index].state.expire(at: now)
            let next = tables.concurrencyLimits.values[index].state.nextDeadline
            if tables.concurrencyLimits.values[index].isIdleInPlace {
                // A timer that fired as its entry went idle and was kept: it stays kept.
                if tables.keptIdleLimit == key {
                    tables.concurrencyLimits.values[index].timer = nil
                } else {
                    tables.concurrencyLimits.removeLive(at: index)
                }
            } else if let next {
                tables.concurrencyLimits.values[index].timerDeadline = next
            } else {
                tables.concurrencyLimits.values[index].timer = nil
            }
            return (expired, admitted, next)
        }
        for waiter in expired { decide(waiter, .timedOut, key) }
        for waiter in admitted { decide(waiter, .admitted, key) }
        return next
    }

    /// Empties the queue of `key`: each waiter throws ``ConcurrencyLimitError/reset``.
    /// Running calls keep their slots until they end.
    func resetConcurrencyLimit(_ key: GroupKey) {
        let (waiters, timer) = withShard(of: key) { tables -> ([LimitWaiter], TimerRef?) in
            guard let index = tables.concurrencyLimits.index(forKey: key) else { return ([], nil) }
            let waiters = tables.concurrencyLimits.values[index].state.removeWaiters()
            let timer = tables.concurrencyLimits.values[index].takeTimer()
            guard tables.concurrencyLimits.values[index].isIdleInPlace else {
                return (waiters, timer)
            }
            tables.concurrencyLimits.removeLive(at: index)
            if tables.keptIdleLimit == key { tables.keptIdleLimit = nil }
            return (waiters, timer)
        }
        timer?.cancel()
        for waiter in waiters { decide(waiter, .reset, key) }
    }
}
