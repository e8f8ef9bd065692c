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
            ThrottleState<Operation>.self, key, ticket: operation.ticket, new: { ThrottleState() }
        ) { $0.call(at: now, duration: duration, option: option, payload: operation) }
        let report = stamp(.throttle, key, at: now)
        result.catchUp?.launch(clock, reporting: report)
        result.dropped?.discard(reporting: report)
        let task = result.runNow?.launch(clock, reporting: report)
        // During a drain nothing waits: the call left pending runs now (see `drain(within:)`).
        if isDraining { flushWhileDraining(ThrottleState<Operation>.self, key) }
        return task
    }
}
