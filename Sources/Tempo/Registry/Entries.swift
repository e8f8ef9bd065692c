// How the helpers reach the registry's tables. Every shard's lock is taken in this file, and
// only here, through one of two doors:
// - `enter` (and `enterNew`): a call applied to one entry. The transition runs in place under
//   the lock, the entry's timer is kept in step, and what the call must launch or discard comes
//   back to be carried out after the lock. Debounce, throttle, delay, running work, and a
//   rate or window limit's call take this door; a timer's firing, a withdrawn ticket, a
//   cancel, a flush and a read of the pending call are written here once for them.
// - `withShard(of:)`: the whole shard under its lock, for a transition the first door does not
//   fit: one that touches a second key of the shard (the idle entry a shard keeps for
//   concurrency limits and for circuit breakers, see KeptIdleEntries.swift), one that keeps an
//   entry's index across steps, or one whose entry leaves its table by rules of its own (a
//   retry budget, a rate limit's controls). Concurrency limits, circuit breakers, retry
//   budgets, rate-limit controls and named repeats take it.
// `forEachShard` visits every shard for the whole-registry verbs (`cancelAll`, `snapshot`,
// `flushAll`, the counts). Code elsewhere reaches a shard's tables only through these. What
// each kind of entry tells the registry is in EntryKinds.swift.

/// What a call's transition returns: whether, and when, its entry's timer must wake.
protocol TransitionResult: Sendable {
    var timerWake: Duration? { get }
    /// A work token the call parks (its task now waits, asleep, for the entry to decide it):
    /// parked after the entry's timer is armed, still under the lock, so an advance of a
    /// deterministic clock that sees the task parked sees the timer that wakes it too.
    var parking: SettleToken? { get }
}

extension TransitionResult {
    var parking: SettleToken? { nil }
}

/// A call's transition as a value rather than a closure, for the calls that are made most
/// (debounce, throttle). The door always inlines a value's ``apply(to:)``; a closure whose
/// body is a whole state machine's call is left as a call by the optimizer, which costs those
/// calls about a tenth of their time.
protocol EntryCall {
    associatedtype Entry: CallEntry
    associatedtype Result: TransitionResult
    func apply(to entry: inout Entry) -> Result
}

extension TempoRegistry {
    // MARK: The first door: a call on one entry

    /// Applies a call to the entry under `key` (a new entry made by `new` when none is live),
    /// in place and under the shard's lock, and makes sure the entry's timer wakes no later
    /// than the transition asks. Returns the transition's result, which the caller carries out
    /// outside the lock.
    @inline(__always)
    func enter<Entry: TimedEntry, Result: TransitionResult>(
        _: Entry.Type, _ key: Entry.Key, new: () -> Entry, _ transition: (inout Entry) -> Result
    ) -> Result {
        shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, ids in
                enterLocked(&table, &ids, key, new: new, transition)
            }
        }
    }

    /// ``enter(_:_:new:_:)`` for a call that carries a `ticket` (a `Task`-returning call), with
    /// the transition as a value (see ``EntryCall``): under the same lock, the ticket is told
    /// how to take the call back, so a cancel that comes at any moment after finds the call in
    /// its entry.
    @inline(__always)
    func enter<Call: EntryCall>(
        _ call: Call, _ key: Call.Entry.Key, ticket: Ticket?, new: () -> Call.Entry
    ) -> Call.Result {
        shard(key).tables.withLock { tables in
            Call.Entry.access(&tables) { table, ids in
                if let ticket {
                    ticket.setWithdrawal { [self] in withdraw(Call.Entry.self, $0, key: key) }
                }
                // One hash, as in `enterLocked`.
                return apply(
                    call, to: &table[key, default: Slot(state: new())], key: key, ids: &ids)
            }
        }
    }

    /// ``enter(_:_:ticket:new:)`` for an entry filed under a new id of `shard`, for entries
    /// that have no key of their own (many may wait at one call site). Returns the id too.
    @inline(__always) @discardableResult
    func enterNew<Entry: CallEntry, Result: TransitionResult>(
        _: Entry.Type, in shard: Shard, ticket: Ticket?, new: () -> Entry,
        _ transition: (inout Entry) -> Result
    ) -> (id: UInt64, result: Result) where Entry.Key == UInt64 {
        shard.tables.withLock { tables in
            Entry.access(&tables) { table, ids in
                let id = ids.next()
                if let ticket {
                    ticket.setWithdrawal { [self] in withdraw(Entry.self, $0, key: id) }
                }
                return (id, enterLocked(&table, &ids, id, new: new, transition))
            }
        }
    }

    /// Files `entry`, which needs no timer, under a new id of `shard`; returns the id.
    func insertNew<Entry: TableEntry>(_ entry: Entry, in shard: Shard) -> UInt64
    where Entry.Key == UInt64 {
        shard.tables.withLock { tables in
            Entry.access(&tables) { table, ids in
                let id = ids.next()
                table[id] = Slot(state: entry)
                return id
            }
        }
    }

    /// The body of every call: called with the shard's lock held.
    @inline(__always)
    private func enterLocked<Entry: TimedEntry, Result: TransitionResult>(
        _ table: inout [Entry.Key: Slot<Entry>], _ ids: inout IDSource, _ key: Entry.Key,
        new: () -> Entry, _ transition: (inout Entry) -> Result
    ) -> Result {
        // One hash: the slot is updated in place (a new entry starts with a new slot).
        apply(transition, to: &table[key, default: Slot(state: new())], key: key, ids: &ids)
    }

    @inline(__always)
    private func apply<Entry: TimedEntry, Result: TransitionResult>(
        _ transition: (inout Entry) -> Result, to slot: inout Slot<Entry>, key: Entry.Key,
        ids: inout IDSource
    ) -> Result {
        settle(transition(&slot.state), &slot, key: key, ids: &ids)
    }

    @inline(__always)
    private func apply<Call: EntryCall>(
        _ call: Call, to slot: inout Slot<Call.Entry>, key: Call.Entry.Key, ids: inout IDSource
    ) -> Call.Result {
        settle(call.apply(to: &slot.state), &slot, key: key, ids: &ids)
    }

    /// Keeps an entry's timer in step with a transition's result, and parks the call's work
    /// token: the part of a call that follows its transition, under the lock.
    @inline(__always)
    private func settle<Entry: TimedEntry, Result: TransitionResult>(
        _ result: Result, _ slot: inout Slot<Entry>, key: Entry.Key, ids: inout IDSource
    ) -> Result {
        // The usual case, a timer that already wakes in time, is decided here; moving it is
        // out of line, which keeps every call's entry path smaller.
        if let wake = result.timerWake, slot.timer == nil || wake < slot.timerDeadline {
            arm(&slot, key: key, wake: wake, ids: &ids)
        }
        result.parking?.park()
        return result
    }

    // MARK: Timers

    /// Makes sure an entry's timer wakes no later than `wake`; when it fires, the registry's
    /// generic firing (`fired`) applies the entry's ``TimedEntry/timerFired(at:)``. Called with
    /// the lock held.
    @inline(never)
    func arm<Entry: TimedEntry>(
        _ slot: inout Slot<Entry>, key: Entry.Key, wake: Duration, ids: inout IDSource
    ) {
        arm(&slot, key: key, wake: wake, ids: &ids) { registry, key, generation, now in
            registry.fired(Entry.self, key, timerGeneration: generation, at: now)
        }
    }

    /// Makes sure an entry's timer wakes no later than `wake`; when it fires, `fire` gets the
    /// registry, the key, the timer's generation and the instant, and returns when to fire
    /// next (`nil`: the timer ends). For an entry that serves its own timer (a concurrency
    /// limit's queue deadlines). Called with the lock held.
    func arm<Entry: TableEntry>(
        _ slot: inout Slot<Entry>, key: Entry.Key, wake: Duration, ids: inout IDSource,
        fire: @escaping @Sendable (TempoRegistry, Entry.Key, UInt64, Duration) -> Duration?
    ) {
        if slot.timer != nil, slot.timerDeadline <= wake { return }
        slot.timer?.cancel()
        let generation = ids.next()
        slot.timerGeneration = generation
        slot.timerDeadline = wake
        timerCount.add(1, ordering: .relaxed)
        slot.timer = clock.startTimer(at: wake) { [self] now in
            firing { fire(self, key, generation, now) }
        }
    }

    /// An entry's timer fired: applies its `timerFired` transition under the lock (unless the
    /// timer is stale: another generation), keeps or removes the entry, and launches what is
    /// due outside the lock. Returns when to fire next, or `nil` to end the timer.
    ///
    /// The one place every entry's timer is re-armed, so the rule for every kind is here: a
    /// next wake not later than `now` ends the timer, as `nil` does. The transition has seen
    /// `now` already, so firing it again at `now` would change nothing, and at the clock's last
    /// instant, which no later wake can follow, it would fire for ever. The entry then stays
    /// without a timer or leaves, as ``TimedEntry/keepsWhenTimerEnds(at:)`` says.
    private func fired<Entry: TimedEntry>(
        _: Entry.Type, _ key: Entry.Key, timerGeneration: UInt64, at now: Duration
    ) -> Duration? {
        let result = shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, _ -> (run: Operation?, next: Duration?)? in
                guard var slot = table[key], slot.timerGeneration == timerGeneration else {
                    return nil
                }
                let result = slot.state.timerFired(at: now)
                if let next = result.next, next > now {
                    slot.timerDeadline = next
                    table[key] = slot
                    return result
                }
                if slot.state.keepsWhenTimerEnds(at: now) {
                    slot.timer = nil
                    table[key] = slot
                } else {
                    table.removeLive(key)
                }
                return (result.run, nil)
            }
        }
        if let run = result?.run { run.launch(clock, reporting: stamp(Entry.self, key, at: now)) }
        pulseDrains()
        return result?.next
    }

    // MARK: What a call's entry is told later

    /// The task of a `Task`-returning call was cancelled: its call leaves the entry, and an
    /// entry left idle leaves its table.
    private func withdraw<Entry: CallEntry>(_: Entry.Type, _ ticket: Ticket, key: Entry.Key) {
        let now = clock.now()
        let (withdrawn, timer) = shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, _ -> (Operation?, TimerRef?) in
                guard var slot = table[key], let withdrawn = slot.state.withdraw(ticket) else {
                    return (nil, nil)
                }
                if slot.state.isIdle(at: now) {
                    table.removeLive(key)
                    return (withdrawn, slot.timer)
                }
                table[key] = slot
                return (withdrawn, nil)
            }
        }
        timer?.cancel()
        // Its ticket is closed already (its task was cancelled): this only reports the drop.
        withdrawn?.discard(reporting: stamp(Entry.self, key, at: now))
        pulseDrains()
    }

    /// Changes a live entry in place; does nothing when `key` is not live.
    func modify<Entry: TableEntry>(
        _: Entry.Type, _ key: Entry.Key, _ change: (inout Entry) -> Void
    ) {
        shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, _ in
                guard let index = table.index(forKey: key) else { return }
                change(&table.values[index].state)
            }
        }
    }

    /// Forgets an entry: its waiting call never runs (unless its instant has already come:
    /// then it runs, as it would have a moment earlier), its timer is cancelled and its key is
    /// removed. Does nothing for a key that is not live.
    func cancel<Entry: CallEntry>(_: Entry.Type, _ key: Entry.Key) {
        let now = clock.now()
        let removed = shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, _ in table.removeLive(key) }
        }
        guard var slot = removed else { return }
        slot.timer?.cancel()
        let outcome = slot.state.cancel(at: now)
        let report = stamp(Entry.self, key, at: now)
        outcome.dropped?.discard(reporting: report)
        if let due = outcome.due { firing { _ = due.launch(clock, reporting: report) } }
        pulseDrains()
    }

    /// ``flush(_:_:)`` for a debounce or throttle call made during a drain, kept out of line:
    /// the call's own path pays only the check of `isDraining`.
    @inline(never)
    func flushWhileDraining<Entry: GroupEntry>(_: Entry.Type, _ key: Entry.Key) {
        flush(Entry.self, key)
    }

    /// Runs an entry's waiting call now, if it has one. An entry left idle leaves its table;
    /// otherwise its timer wakes when the entry next needs it.
    func flush<Entry: GroupEntry>(_: Entry.Type, _ key: Entry.Key) {
        let now = clock.now()
        let (run, timer) = shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, ids -> (Operation?, TimerRef?) in
                guard var slot = table[key], let run = slot.state.flush(at: now) else {
                    return (nil, nil)
                }
                if slot.state.isIdle(at: now) {
                    table.removeLive(key)
                    return (run, slot.timer)
                }
                if let wake = slot.state.nextWake {
                    arm(&slot, key: key, wake: wake, ids: &ids)
                }
                table[key] = slot
                return (run, nil)
            }
        }
        timer?.cancel()
        // Operations the registry starts see it as current, as a timer's do.
        if let run { firing { _ = run.launch(clock, reporting: stamp(Entry.self, key, at: now)) } }
        // Also when nothing was flushed: a call made during a drain flushes its group, and the
        // drain must look again (a `.taskContext` run happens right here, uncounted).
        pulseDrains()
    }

    /// When an entry's waiting call runs, if it has one.
    func pending<Entry: GroupEntry>(_: Entry.Type, _ key: Entry.Key) -> PendingCall? {
        let now = clock.now()
        let runsAt = shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, _ in table[key]?.state.pendingDeadline }
        }
        return runsAt.map { PendingCall(runsAt: $0, now: now) }
    }

    /// Removes an entry without running or cancelling anything.
    func remove<Entry: TableEntry>(_: Entry.Type, _ key: Entry.Key) {
        shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, _ in _ = table.removeLive(key) }
        }
    }

    // MARK: The second door: the whole shard

    /// Gives `body` the tables of the shard that holds `key`, under the shard's lock, for a
    /// transition that ``enter(_:_:new:_:)`` does not fit (see the top of this file). `body`
    /// runs no user code and starts nothing: it returns what the caller carries out after the
    /// lock.
    @inline(__always)
    func withShard<R: Sendable>(of key: some ShardKey, _ body: (inout Tables) -> R) -> R {
        shard(key).tables.withLock { tables in body(&tables) }
    }

    /// Gives `body` the tables of every shard in turn, each under its lock: for the verbs that
    /// visit the whole registry (`cancelAll`, `snapshot`, `flushAll`, the counts).
    func forEachShard(_ body: (inout Tables) -> Void) {
        for shard in shards { shard.tables.withLock { tables in body(&tables) } }
    }
}
