// A pending `delay` or `execute` in the registry: a one-shot entry filed under an id of its
// own (many may wait at one call site), shown under its call site.

/// A pending `delay` or `execute`: its operation runs once its deadline has come.
struct DelayState: Sendable {
    var key: GroupKey
    var deadline: Duration = .zero
    var operation: Operation?

    /// The call: wait until `deadline`.
    struct CallResult: TransitionResult {
        var timerWake: Duration?
    }

    mutating func call(deadline: Duration, operation: Operation) -> CallResult {
        self.deadline = deadline
        self.operation = operation
        return CallResult(timerWake: deadline)
    }
}

extension DelayState: CallEntry {
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [UInt64: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R { body(&tables.delays, &tables.ids) }

    mutating func timerFired(at now: Duration) -> (run: Operation?, next: Duration?) {
        if deadline > now { return (nil, deadline) }
        defer { operation = nil }
        return (operation, nil)
    }

    mutating func cancel(at now: Duration) -> (due: Operation?, dropped: Operation?) {
        defer { operation = nil }
        return deadline <= now ? (operation, nil) : (nil, operation)
    }

    mutating func withdraw(_ ticket: Ticket) -> Operation? {
        guard operation?.isTicket(ticket) == true else { return nil }
        defer { operation = nil }
        return operation
    }

    func isIdle(at now: Duration) -> Bool { operation == nil }

    func snapshotEntry(key: UInt64, now: Duration) -> TempoSnapshot.Entry {
        TempoSnapshot.Entry(
            kind: .delay, key: self.key.description, state: .delay(runsAt: deadline))
    }
}

extension TempoRegistry {
    /// Runs `operation` once `duration` has passed. Durations of zero or less run it at once,
    /// and then return the task that runs an ``AsyncOperation``. A delay reports no event.
    @discardableResult
    func delay(_ duration: Duration, key: GroupKey, operation: Operation) -> Task<Void, Never>? {
        let now = clock.now()
        guard duration > .zero else { return operation.launch(clock, reporting: nil) }
        let deadline = now.adding(duration)
        enterNew(
            DelayState.self, in: shard(key), ticket: operation.ticket, new: { DelayState(key: key) }
        ) { $0.call(deadline: deadline, operation: operation) }
        return nil
    }
}
