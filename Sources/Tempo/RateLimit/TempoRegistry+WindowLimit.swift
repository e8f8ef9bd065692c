// A window-limited key in the registry: its state machine as a registry entry (sharing the
// token bucket's waiters, wait, cancellation, reset and snapshot row), and the call that takes
// its starts at once.

typealias WindowLimitEntry = WindowLimitState<PermitWaiter>

extension WindowLimitState: TableEntry, TimedEntry where Waiter == PermitWaiter {
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [GroupKey: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R { body(&tables.windowLimits, &tables.ids) }

    mutating func timerFired(at now: Duration) -> (run: Operation?, next: Duration?) {
        let settled = settle(at: now)
        return (settled.operation, isIdle(at: now) ? nil : wake(at: now))
    }

    /// A key whose next instant is past the clock's end stays, with no timer: its starts still
    /// count.
    func keepsWhenTimerEnds(at now: Duration) -> Bool { !isIdle(at: now) }

    /// The same row as a token bucket's: the starts free now, when the next one is, and the
    /// waiters.
    func snapshotEntry(key: GroupKey, now: Duration) -> TempoSnapshot.Entry {
        TempoSnapshot.Entry(
            kind: .rateLimit, key: key.description,
            state: .rateLimit(
                tokens: tokens(at: now), nextPermitAt: nextPermit(at: now), waiters: queue.count))
    }
}

extension WindowLimitState: PermitQueueEntry where Waiter == PermitWaiter {
    mutating func take(_ request: Ask, at now: Duration) -> Decision {
        call(at: now, ask: request)
    }

    mutating func enqueue(_ waiter: PermitWaiter, request: Ask, deadline: Duration?) -> UInt64 {
        enqueue(waiter, ask: request, deadline: deadline)
    }

    func timerWake(at now: Duration) -> Duration? { wake(at: now) }

    /// A window counts operations as they start: a waiter's starts are recorded when its task
    /// resumes, not when the timer admits it.
    /// (``WindowLimitState/started(_:at:)`` records them.)
    static var countsStarts: Bool { true }

    /// A waiter cancelled before it started gives its slot back.
    mutating func cancelledBeforeStart(_ request: Ask, at now: Duration) -> Settled? {
        withdrawStart(request, at: now)
    }
}

extension TempoRegistry {
    /// Takes `ask`'s starts at once, or says how long a call would wait: a clock read, a lock
    /// and a table update.
    @inline(__always)
    func enterWindowLimit(_ key: GroupKey, ask: WindowLimitEntry.Ask) -> RateLimitEntry.Decision {
        let now = clock.now()
        return enter(
            WindowLimitEntry.self, key,
            new: { WindowLimitEntry(permits: ask.permits, span: ask.span) }
        ) { state in
            let decision = state.call(at: now, ask: ask)
            return RateLimitCall(outcome: decision, timerWake: state.wake(at: now))
        }.outcome
    }
}
