/// The state of one debounce group, and its transitions. It holds no clock and no task: the
/// registry passes in the instant of each event and carries out the returned action, so a test
/// can drive it directly.
///
/// Instants are offsets from the clock's origin. A call at an instant at or after the pending
/// call's deadline comes after that deadline: the pending call is due and is returned as
/// `catchUp` before the new call is applied. Ties go to the deadline.
struct DebounceState<Payload> {
    /// The call waiting for its quiet window to pass.
    private(set) var pending: Payload?
    /// When `pending` runs.
    private(set) var deadline: Duration = .zero
    private var pendingDuration: Duration = .zero
    private var pendingOption: DebounceOptions = .default
    /// After a `.runFirst` run, the group stays quiet (calls are debounced) until this instant.
    private(set) var quietUntil: Duration?

    /// What a call does.
    struct CallResult {
        /// A pending call whose deadline had passed when this call came; it runs first.
        var catchUp: Payload?
        /// The call itself, when it runs at once (`.runFirst` on an idle group).
        var runNow: Payload?
        /// A pending call that this call replaced; it will never run.
        var replaced: Payload?
        /// The earliest instant the group needs looking at again.
        var wake: Duration
    }

    /// What a timer wake-up does.
    struct FireResult {
        /// The pending call, when its deadline has come.
        var run: Payload?
        /// When to look again, or `nil` when the group is idle and can be removed.
        var next: Duration?
    }

    /// Whether the group has nothing pending and no quiet window left at `now`.
    func isIdle(at now: Duration) -> Bool {
        pending == nil && (quietUntil.map { now >= $0 } ?? true)
    }

    /// A call at `now` with a positive `duration`.
    mutating func call(
        at now: Duration, duration: Duration, option: DebounceOptions, payload: Payload
    ) -> CallResult {
        var result = CallResult(wake: .zero)
        if pending != nil, deadline <= now { result.catchUp = takeDue() }
        if let q = quietUntil, now >= q { quietUntil = nil }

        if option == .runFirst, pending == nil, quietUntil == nil {
            result.runNow = payload
            quietUntil = now.adding(duration)
        } else {
            result.replaced = pending
            pending = payload
            deadline = now.adding(duration)
            pendingDuration = duration
            pendingOption = option
        }
        result.wake = pending != nil ? deadline : quietUntil!
        return result
    }

    /// The timer woke at `now`.
    mutating func fire(at now: Duration) -> FireResult {
        var result = FireResult()
        if pending != nil {
            if deadline > now { return FireResult(run: nil, next: deadline) }
            result.run = takeDue()
        }
        if let q = quietUntil, q > now { result.next = q } else { quietUntil = nil }
        return result
    }

    /// Removes the pending call (cancel), returning it.
    mutating func cancelPending() -> Payload? {
        defer { pending = nil }
        return pending
    }

    /// Runs the pending call now (flush), as if its deadline had come at `now`.
    mutating func flush(at now: Duration) -> Payload? {
        guard pending != nil else { return nil }
        deadline = min(deadline, now)
        return takeDue()
    }

    private mutating func takeDue() -> Payload? {
        let due = pending
        pending = nil
        if pendingOption == .runFirst { quietUntil = deadline.adding(pendingDuration) }
        return due
    }
}
