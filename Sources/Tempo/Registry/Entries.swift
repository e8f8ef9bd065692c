// The one way every helper enters the registry, and the one way each entry is fired,
// withdrawn, cancelled, flushed and read. A helper brings its entry type (its state machine
// conformed to `RegistryEntry` in its own folder) and its call's transition; the code here
// takes the shard's lock, applies the transition in place, keeps the entry's timer in step and
// hands back what the caller must launch or discard outside the lock.

/// What the registry keeps under one key of one of its tables: a debounce or throttle group, a
/// pending delay, or a record of running work.
protocol RegistryEntry: Sendable {
    /// What the entry is filed under: a ``GroupKey``, or an id for entries that have none.
    associatedtype Key: ShardKey

    /// Gives `body` this kind's table of a shard, and the shard's ids.
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [Key: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R

    /// The entry's timer fired at `now`: what runs, and when to fire next (`nil`: the entry is
    /// done and leaves the table, unless ``keepsWhenTimerEnds(at:)``).
    mutating func timerFired(at now: Duration) -> (run: Operation?, next: Duration?)

    /// After its timer fired at `now` and asked for no next wake: whether the entry stays in
    /// its table, without a timer (a later call arms a new one). `false` for every kind but a
    /// circuit breaker and a rate limit (token bucket or window), whose timer only forgets what
    /// has aged: one whose next instant lies past the clock's end stays this way.
    func keepsWhenTimerEnds(at now: Duration) -> Bool

    /// Ends the entry (`cancelAll`, or cancel by key): the call whose instant has come runs
    /// (`due`), the one still waiting never does (`dropped`).
    mutating func cancel(at now: Duration) -> (due: Operation?, dropped: Operation?)

    /// Runs the waiting call now, if there is one; the entry stays until ``isIdle(at:)``.
    mutating func flush(at now: Duration) -> Operation?

    /// When the entry's timer must wake after a flush left it live.
    var nextWake: Duration? { get }

    /// Removes the waiting call if it is `ticket`'s (its task was cancelled); `false` if not.
    mutating func withdraw(_ ticket: Ticket) -> Bool

    /// Nothing waiting and no window open: the entry can leave its table.
    func isIdle(at now: Duration) -> Bool

    /// When the waiting call runs, if there is one.
    var pendingDeadline: Duration? { get }

    /// The entry as ``TempoRegistry/snapshot()`` shows it.
    func snapshotEntry(key: Key, now: Duration) -> TempoSnapshot.Entry

    /// Whether ``TempoRegistry/snapshot()`` lists the entry: every entry in a table but the one
    /// idle concurrency-limit entry a shard may keep (see `Tables.keptIdleLimit`).
    var isListed: Bool { get }
}

extension RegistryEntry {
    var isListed: Bool { true }
    func keepsWhenTimerEnds(at now: Duration) -> Bool { false }
}

/// An entry that holds no caller's call: a running helper, a rate or concurrency limit's
/// state, a breaker, a budget. `cancelAll`, a flush and a withdrawn ticket find nothing of it
/// to run, drop or take back.
protocol CallFreeEntry: RegistryEntry {}

extension CallFreeEntry {
    mutating func cancel(at now: Duration) -> (due: Operation?, dropped: Operation?) { (nil, nil) }
    mutating func flush(at now: Duration) -> Operation? { nil }
    mutating func withdraw(_ ticket: Ticket) -> Bool { false }
    var pendingDeadline: Duration? { nil }
}

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

extension TempoRegistry {
    /// Applies a call to the entry under `key` (a new entry made by `new` when none is live),
    /// in place and under the shard's lock, and makes sure the entry's timer wakes no later
    /// than the transition asks. A call that carries a `ticket` is told how to withdraw it.
    /// Returns the transition's result, which the caller carries out outside the lock.
    @inline(__always)
    func enter<Entry: RegistryEntry, Result: TransitionResult>(
        _: Entry.Type, _ key: Entry.Key, ticket: Ticket?, new: () -> Entry,
        _ transition: (inout Entry) -> Result
    ) -> Result {
        shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, ids in
                enterLocked(&table, &ids, key, ticket: ticket, new: new, transition)
            }
        }
    }

    /// ``enter(_:_:ticket:new:_:)`` for an entry filed under a new id of `shard`, for entries
    /// that have no key of their own (many may wait at one call site). Returns the id too.
    @inline(__always) @discardableResult
    func enterNew<Entry: RegistryEntry, Result: TransitionResult>(
        _: Entry.Type, in shard: Shard, ticket: Ticket?, new: () -> Entry,
        _ transition: (inout Entry) -> Result
    ) -> (id: UInt64, result: Result) where Entry.Key == UInt64 {
        shard.tables.withLock { tables in
            Entry.access(&tables) { table, ids in
                let id = ids.next()
                return (id, enterLocked(&table, &ids, id, ticket: ticket, new: new, transition))
            }
        }
    }

    /// The body of every entry: called with the shard's lock held.
    @inline(__always)
    private func enterLocked<Entry: RegistryEntry, Result: TransitionResult>(
        _ table: inout [Entry.Key: Slot<Entry>], _ ids: inout IDSource, _ key: Entry.Key,
        ticket: Ticket?, new: () -> Entry, _ transition: (inout Entry) -> Result
    ) -> Result {
        if let ticket {
            ticket.setWithdrawal { [self] in withdraw(Entry.self, $0, key: key) }
        }
        // One hash: the slot is updated in place (a new entry starts with a new slot).
        return apply(transition, to: &table[key, default: Slot(state: new())], key: key, ids: &ids)
    }

    @inline(__always)
    private func apply<Entry: RegistryEntry, Result: TransitionResult>(
        _ transition: (inout Entry) -> Result, to slot: inout Slot<Entry>, key: Entry.Key,
        ids: inout IDSource
    ) -> Result {
        let result = transition(&slot.state)
        if let wake = result.timerWake { arm(&slot, key: key, wake: wake, ids: &ids) }
        result.parking?.park()
        return result
    }

    /// Makes sure an entry's timer wakes no later than `wake`. Called with the lock held.
    func arm<Entry: RegistryEntry>(
        _ slot: inout Slot<Entry>, key: Entry.Key, wake: Duration, ids: inout IDSource
    ) {
        if slot.timer != nil, slot.timerDeadline <= wake { return }
        slot.timer?.cancel()
        let generation = ids.next()
        slot.generation = generation
        slot.timerDeadline = wake
        timerCount.add(1, ordering: .relaxed)
        slot.timer = clock.startTimer(at: wake) { [self] now in
            firing { fired(Entry.self, key, generation: generation, at: now) }
        }
    }

    /// An entry's timer fired: applies its `fire` transition under the lock (unless the timer
    /// is stale: another generation), keeps or removes the entry, and launches what is due
    /// outside the lock. Returns when to fire next, or `nil` to end the timer.
    private func fired<Entry: RegistryEntry>(
        _: Entry.Type, _ key: Entry.Key, generation: UInt64, at now: Duration
    ) -> Duration? {
        let result = shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, _ -> (run: Operation?, next: Duration?)? in
                guard var slot = table[key], slot.generation == generation else { return nil }
                let result = slot.state.timerFired(at: now)
                if let next = result.next {
                    slot.timerDeadline = next
                    table[key] = slot
                } else if slot.state.keepsWhenTimerEnds(at: now) {
                    slot.timer = nil
                    table[key] = slot
                } else {
                    table.removeLive(key)
                }
                return result
            }
        }
        result?.run?.launch(clock)
        pulseDrains()
        return result?.next
    }

    /// The task of a `Task`-returning call was cancelled: its call leaves the entry, and an
    /// entry left idle leaves its table.
    private func withdraw<Entry: RegistryEntry>(_: Entry.Type, _ ticket: Ticket, key: Entry.Key) {
        let now = clock.now()
        let timer = shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, _ -> TimerRef? in
                guard var slot = table[key], slot.state.withdraw(ticket) else { return nil }
                if slot.state.isIdle(at: now) {
                    table.removeLive(key)
                    return slot.timer
                }
                table[key] = slot
                return nil
            }
        }
        timer?.cancel()
        pulseDrains()
    }

    /// Changes a live entry in place; does nothing when `key` is not live.
    func modify<Entry: RegistryEntry>(
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
    func cancel<Entry: RegistryEntry>(_: Entry.Type, _ key: Entry.Key) {
        let now = clock.now()
        let removed = shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, _ in table.removeLive(key) }
        }
        guard var slot = removed else { return }
        slot.timer?.cancel()
        let outcome = slot.state.cancel(at: now)
        outcome.dropped?.discard()
        if let due = outcome.due { firing { due.launch(clock) } }
        pulseDrains()
    }

    /// Runs an entry's waiting call now, if it has one. An entry left idle leaves its table;
    /// otherwise its timer wakes when the entry next needs it.
    func flush<Entry: RegistryEntry>(_: Entry.Type, _ key: Entry.Key) {
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
        if let run { firing { run.launch(clock) } }
        // Also when nothing was flushed: a call made during a drain flushes its group, and the
        // drain must look again (a `.taskContext` run happens right here, uncounted).
        pulseDrains()
    }

    /// When an entry's waiting call runs, if it has one.
    func pending<Entry: RegistryEntry>(_: Entry.Type, _ key: Entry.Key) -> PendingCall? {
        let now = clock.now()
        let runsAt = shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, _ in table[key]?.state.pendingDeadline }
        }
        return runsAt.map { PendingCall(runsAt: $0, now: now) }
    }

    /// Removes an entry without running or cancelling anything.
    func remove<Entry: RegistryEntry>(_: Entry.Type, _ key: Entry.Key) {
        shard(key).tables.withLock { tables in
            Entry.access(&tables) { table, _ in _ = table.removeLive(key) }
        }
    }
}
