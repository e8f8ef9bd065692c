// What each kind of entry tells the registry, in four layers, so that a kind states only the
// events it has: every kind is a `TableEntry`; one whose timer the registry's generic firing
// serves is a `TimedEntry`; one that holds a caller's call is a `CallEntry`; a debounce or
// throttle group, whose call can be flushed and read, is a `GroupEntry`. Entries.swift uses
// them.

/// What the registry keeps under one key of one of its tables: how to find that table in a
/// shard, and how ``TempoRegistry/snapshot()`` shows the entry. Every kind conforms.
protocol TableEntry: Sendable {
    /// What the entry is filed under: a ``GroupKey``, or an id for entries that have none.
    associatedtype Key: ShardKey

    /// Gives `body` this kind's table of a shard, and the shard's ids.
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [Key: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R

    /// The entry as ``TempoRegistry/snapshot()`` shows it.
    func snapshotEntry(key: Key, now: Duration) -> TempoSnapshot.Entry

    /// Whether ``TempoRegistry/snapshot()`` lists the entry: every entry in a table but the idle
    /// one a shard may keep (see KeptIdleEntries.swift).
    var isListed: Bool { get }
}

extension TableEntry {
    var isListed: Bool { true }
}

/// An entry whose timer the registry's generic firing serves (`arm`, `fired`): every kind but
/// running work (no timer) and a concurrency limit (a timer of its own, for queue deadlines).
protocol TimedEntry: TableEntry {
    /// The entry's timer fired at `now`: what runs, and when to fire next (`nil`: the entry is
    /// done and leaves the table, unless ``keepsWhenTimerEnds(at:)``). A next wake not later
    /// than `now` counts as `nil`: the registry never fires a timer twice at one instant, so
    /// the transition does at `now` all that is due at `now` (at the clock's last instant, a
    /// wake past it saturates to `now`, and the timer ends there).
    mutating func timerFired(at now: Duration) -> (run: Operation?, next: Duration?)

    /// After its timer fired at `now` and asked for no next wake later than `now`: whether the
    /// entry stays in its table, without a timer (a later call arms a new one). `false` for
    /// every kind but a circuit breaker, a retry budget and a rate limit (token bucket or
    /// window), whose timer only forgets what has aged: one whose next instant lies past the
    /// clock's end stays this way, with what it counts, for as long as the clock reads its last
    /// instant.
    func keepsWhenTimerEnds(at now: Duration) -> Bool
}

extension TimedEntry {
    func keepsWhenTimerEnds(at now: Duration) -> Bool { false }
}

/// An entry that holds a caller's call, waiting for its instant: a debounce or throttle group,
/// a pending delay. `cancelAll` and a cancel end it; a `Task`-returning call whose task is
/// cancelled takes its call back.
protocol CallEntry: TimedEntry {
    /// Ends the entry (`cancelAll`, or cancel by key): the call whose instant has come runs
    /// (`due`), the one still waiting never does (`dropped`).
    mutating func cancel(at now: Duration) -> (due: Operation?, dropped: Operation?)

    /// Removes the waiting call if it is `ticket`'s (its task was cancelled) and returns it;
    /// `nil` if not.
    mutating func withdraw(_ ticket: Ticket) -> Operation?

    /// Nothing waiting and no window open: the entry can leave its table.
    func isIdle(at now: Duration) -> Bool
}

/// A debounce or throttle group: its waiting call can be run early (a flush), and read.
protocol GroupEntry: CallEntry {
    /// The helper whose groups these are, as events name it.
    static var helper: TempoSnapshot.Kind { get }

    /// Runs the waiting call now, if there is one; the entry stays until ``isIdle(at:)``.
    mutating func flush(at now: Duration) -> Operation?

    /// When the entry's timer must wake after a flush left it live.
    var nextWake: Duration? { get }

    /// When the waiting call runs, if there is one.
    var pendingDeadline: Duration? { get }
}
