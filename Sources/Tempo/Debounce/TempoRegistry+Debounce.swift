// A debounce group in the registry: its state machine as a registry entry, and the call that
// enters it.

extension DebounceState: TableEntry, TimedEntry, CallEntry, GroupEntry where Payload == Operation {
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [GroupKey: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R { body(&tables.debounces, &tables.ids) }

    mutating func timerFired(at now: Duration) -> (run: Operation?, next: Duration?) {
        let result = fire(at: now)
        return (result.run, result.next)
    }

    static var helper: TempoSnapshot.Kind { .debounce }

    var nextWake: Duration? { quietUntil }

    mutating func withdraw(_ ticket: Ticket) -> Operation? {
        guard pending?.payload.isTicket(ticket) == true else { return nil }
        return cancelPending()
    }

    func snapshotEntry(key: GroupKey, now: Duration) -> TempoSnapshot.Entry {
        TempoSnapshot.Entry(
            kind: .debounce, key: key.description,
            state: .debounce(runsAt: pendingDeadline, quietUntil: quietUntil))
    }
}

extension DebounceState.CallResult: TransitionResult {
    var timerWake: Duration? { wake }
}

/// A debounce call, as the registry's door applies it.
struct DebounceCall: EntryCall {
    let now: Duration
    let duration: Duration
    let option: DebounceOptions
    let maxWait: Duration?
    let payload: Operation

    @inline(__always)
    func apply(to entry: inout DebounceState<Operation>) -> DebounceState<Operation>.CallResult {
        entry.call(
            at: now, duration: duration, option: option, maxWait: maxWait, payload: payload)
    }
}

extension TempoRegistry {
    /// Applies a debounce call. Returns the task that runs it when it runs at once and is an
    /// ``AsyncOperation``, else `nil`.
    @discardableResult @inline(__always)
    func debounce(
        _ key: GroupKey, duration: Duration, option: DebounceOptions, maxWait: Duration? = nil,
        operation: Operation
    ) -> Task<Void, Never>? {
        let now = clock.now()
        guard duration > .zero else {
            return operation.launch(clock, reporting: stamp(.debounce, key, at: now))
        }
        let result = enter(
            DebounceCall(
                now: now, duration: duration, option: option, maxWait: maxWait, payload: operation),
            key, ticket: operation.ticket, new: { DebounceState() })
        // The usual call replaces a pending one, with nobody observing and no drain: its
        // dropped call is let go here, with no stamp to make; anything else is carried out of
        // line, which keeps every call's path small.
        if result.catchUp == nil, result.runNow == nil, !events.isObserved, !isDraining {
            result.dropped?.discard(reporting: nil)
            return nil
        }
        return finishDebounce(result, key, at: now)
    }

    /// Carries out a debounce call's result: its runs and its drop, each reported, and the
    /// flush of a call left pending during a drain.
    @inline(never)
    private func finishDebounce(
        _ result: DebounceState<Operation>.CallResult, _ key: GroupKey, at now: Duration
    ) -> Task<Void, Never>? {
        let report = stamp(.debounce, key, at: now)
        result.catchUp?.launch(clock, reporting: report)
        result.dropped?.discard(reporting: report)
        let task = result.runNow?.launch(clock, reporting: report)
        // During a drain nothing waits: the call left pending runs now (see `drain(within:)`).
        if isDraining { flushWhileDraining(DebounceState<Operation>.self, key) }
        return task
    }
}
