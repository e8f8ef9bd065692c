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

/// A window limit's call: its ask, and whether it wraps an operation whose starts are held in
/// flight until it ends (``WindowLimitState/ended(_:at:)``) instead of recorded as it starts.
struct WindowRequest: Sendable {
    var ask: WindowLimitEntry.Ask
    var untilEnd: Bool
}

extension WindowLimitState: PermitQueueEntry where Waiter == PermitWaiter {
    mutating func take(_ request: WindowRequest, at now: Duration) -> Decision {
        call(at: now, ask: request.ask, untilEnd: request.untilEnd)
    }

    mutating func enqueue(
        _ waiter: PermitWaiter, request: WindowRequest, deadline: Duration?
    ) -> UInt64 {
        enqueue(waiter, ask: request.ask, deadline: deadline)
    }

    func timerWake(at now: Duration) -> Duration? { wake(at: now) }

    /// A window counts operations as they start: a waiter's starts are recorded when its task
    /// resumes, not when the timer admits it (``WindowLimitState/started(_:at:)`` records
    /// them); those of a waiter that wraps an operation stay in flight until it ends.
    static var countsStarts: Bool { true }

    mutating func started(_ request: WindowRequest, at now: Duration) {
        if !request.untilEnd { started(request.ask, at: now) }
    }

    /// A waiter cancelled before it started gives its slot back.
    mutating func cancelledBeforeStart(_ request: WindowRequest, at now: Duration) -> Settled? {
        withdrawStart(request.ask, at: now)
    }
}

extension TempoRegistry {
    /// Takes `ask`'s starts at once, or says how long a call would wait: a clock read, a lock
    /// and a table update. With `untilEnd` the starts are held in flight until
    /// ``endWindowOperation(_:ask:)``.
    @inline(__always)
    func enterWindowLimit(
        _ key: GroupKey, ask: WindowLimitEntry.Ask, untilEnd: Bool = false
    ) -> RateLimitEntry.Decision {
        let now = clock.now()
        return enter(
            WindowLimitEntry.self, key,
            new: { WindowLimitEntry(permits: ask.permits, span: ask.span) }
        ) { state in
            let decision = state.call(at: now, ask: ask, untilEnd: untilEnd)
            return RateLimitCall(outcome: decision, timerWake: state.wake(at: now))
        }.outcome
    }

    /// The operation of a call admitted with `untilEnd` returned or threw: its starts, in
    /// flight since the admission, are recorded now. The clock is read under the key's lock,
    /// so no record made after this one can carry an earlier instant (and the log keeps the
    /// newest instant if another call's read came later).
    func endWindowOperation(_ key: GroupKey, ask: WindowLimitEntry.Ask) {
        _ = enter(
            WindowLimitEntry.self, key,
            new: { WindowLimitEntry(permits: ask.permits, span: ask.span) }
        ) { state in
            let now = clock.now()
            state.ended(ask, at: now)
            return RateLimitCall(outcome: (), timerWake: state.wake(at: now))
        }
    }
}
