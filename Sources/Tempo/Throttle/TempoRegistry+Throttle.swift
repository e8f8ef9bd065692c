// A throttle group in the registry: its state machine as a registry entry, and the call that
// enters it.

extension ThrottleState: TableEntry, TimedEntry, CallEntry, GroupEntry where Payload == Operation {
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [GroupKey: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R { body(&tables.throttles, &tables.ids) }

    static var helper: TempoSnapshot.Kind { .throttle }

    mutating func timerFired(at now: Duration) -> (run: Operation?, next: Duration?) {
        let result = fire(at: now)
        return (result.run, result.next)
    }

    var nextWake: Duration? { closesAt }

    mutating func withdraw(_ ticket: Ticket) -> Operation? {
        guard trailing?.isTicket(ticket) == true else { return nil }
        return cancelTrailing()
    }

    func snapshotEntry(key: GroupKey, now: Duration) -> TempoSnapshot.Entry {
        TempoSnapshot.Entry(
            kind: .throttle, key: key.description,
            state: .throttle(windowClosesAt: closesAt ?? now, trailingPending: trailing != nil))
    }
}

extension ThrottleState.CallResult: TransitionResult {
    var timerWake: Duration? { wake }
}

/// A throttle call, as the registry's door applies it.
struct ThrottleCall: EntryCall {
    let now: Duration
    let duration: Duration
    let option: ThrottleOptions
    let payload: Operation

    @inline(__always)
    func apply(to entry: inout ThrottleState<Operation>) -> ThrottleState<Operation>.CallResult {
        entry.call(at: now, duration: duration, option: option, payload: payload)
    }
}

extension TempoRegistry {
    /// Applies a throttle call. Returns the task that runs it when it runs at once and is an
    /// ``AsyncOperation``, else `nil`.
    @discardableResult @inline(__always)
    func throttle(
        _ key: GroupKey, duration: Duration, option: ThrottleOptions, operation: Operation
    ) -> Task<Void, Never>? {
        let now = clock.now()
        guard duration > .zero else {
            return operation.launch(clock, reporting: stamp(.throttle, key, at: now))
        }
        let result = enter(
            ThrottleCall(now: now, duration: duration, option: option, payload: operation), key,
            ticket: operation.ticket, new: { ThrottleState() })
        // The usual call inside a window, dropped or kept for the window's end, with nobody
        // observing and no drain: its dropped call is let go here, with no stamp to make;
        // anything else is carried out of line, which keeps every call's path small.
        if result.catchUp == nil, result.runNow == nil, !events.isObserved, !isDraining {
            result.dropped?.discard(reporting: nil)
            return nil
        }
        return finishThrottle(result, key, at: now)
    }

    /// Carries out a throttle call's result: its runs and its drop, each reported, and the
    /// flush of a call left pending during a drain.
    @inline(never)
    private func finishThrottle(
        _ result: ThrottleState<Operation>.CallResult, _ key: GroupKey, at now: Duration
    ) -> Task<Void, Never>? {
        let report = stamp(.throttle, key, at: now)
        result.catchUp?.launch(clock, reporting: report)
        result.dropped?.discard(reporting: report)
        let task = result.runNow?.launch(clock, reporting: report)
        // During a drain nothing waits: the call left pending runs now (see `drain(within:)`).
        if isDraining { flushWhileDraining(ThrottleState<Operation>.self, key) }
        return task
    }
}
