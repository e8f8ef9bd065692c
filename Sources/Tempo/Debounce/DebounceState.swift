/// The state of one debounce group, and its transitions. It holds no clock and no task: the
/// registry passes in the instant of each event and carries out the returned action, so a test
/// can drive it directly.
///
/// Instants are offsets from the clock's origin. A call at an instant at or after the pending
/// call's deadline comes after that deadline: the pending call is due and is returned as
/// `catchUp` before the new call is applied. Ties go to the deadline.
///
/// The modes:
/// - `.default` (trailing): the call becomes the pending call, due `duration` after it, or
///   earlier when `maxWait` caps it: never later than `maxWait` after `maxWaitFrom`, the later
///   of the group's latest run and the call that found it idle (the burst's first call).
/// - `.runFirst` (leading and trailing): a call that finds the group idle runs at once and
///   starts a quiet window of `duration`; other calls are handled as `.default`. A trailing run
///   starts a new quiet window too.
/// - `.leading` (leading only): a call that finds no quiet window runs at once; any other call
///   is dropped. Every call (re)starts the quiet window. Nothing is ever pending.
struct DebounceState<Payload> {
    /// The call waiting for its quiet window to pass, with what only a waiting call has.
    struct Pending {
        var payload: Payload
        /// When it runs.
        var deadline: Duration
        /// Its call's duration and mode: a `.runFirst` call that runs opens a quiet window of
        /// `duration`.
        var duration: Duration
        var option: DebounceOptions
    }

    /// The waiting call, if there is one.
    private(set) var pending: Pending?
    /// Where `maxWait` counts from: the group's latest run, or the call that found it idle,
    /// whichever came later.
    private var maxWaitFrom: Duration = .zero
    /// After a `.runFirst` run, or any `.leading` call, the group stays quiet until this
    /// instant.
    private(set) var quietUntil: Duration?

    /// What a call does.
    struct CallResult {
        /// A pending call whose deadline had passed when this call came; it runs first.
        var catchUp: Payload?
        /// The call itself, when it runs at once (`.runFirst` or `.leading` on an idle group).
        var runNow: Payload?
        /// A call that will never run: the pending call this call replaced, or this call itself
        /// when `.leading` drops it.
        var dropped: Payload?
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

    /// When the pending call runs, if there is one.
    var pendingDeadline: Duration? { pending?.deadline }

    /// A call at `now` with a positive `duration`. `maxWait` is used by the trailing modes when
    /// positive; below `duration` it counts as `duration`. Always inlined into the registry's
    /// one caller: left as a call, its result is copied and destroyed through runtime
    /// metadata.
    @inline(__always)
    mutating func call(
        at now: Duration, duration: Duration, option: DebounceOptions, maxWait: Duration? = nil,
        payload: Payload
    ) -> CallResult {
        var result = CallResult(wake: .zero)
        if let due = pending?.deadline, due <= now { result.catchUp = takeDue() }
        if let q = quietUntil, now >= q { quietUntil = nil }
        if pending == nil, quietUntil == nil { maxWaitFrom = now }

        switch option {
        case .leading:
            if pending == nil, quietUntil == nil {
                result.runNow = payload
            } else {
                result.dropped = payload
            }
            quietUntil = max(quietUntil ?? now, now.adding(duration))
        case .runFirst where pending == nil && quietUntil == nil:
            result.runNow = payload
            quietUntil = now.adding(duration)
        case .default, .runFirst:
            var deadline = now.adding(duration)
            if let maxWait, maxWait > .zero {
                deadline = min(deadline, maxWaitFrom.adding(max(maxWait, duration)))
            }
            result.dropped = pending.take()?.payload
            pending = Pending(
                payload: payload, deadline: deadline, duration: duration, option: option)
        }
        // Every branch that leaves nothing pending opened a quiet window.
        result.wake = pending?.deadline ?? quietUntil ?? now
        return result
    }

    /// The timer woke at `now`.
    mutating func fire(at now: Duration) -> FireResult {
        var result = FireResult()
        if let due = pending?.deadline {
            if due > now { return FireResult(run: nil, next: due) }
            result.run = takeDue()
        }
        if let q = quietUntil, q > now { result.next = q } else { quietUntil = nil }
        return result
    }

    /// Forgets the group (cancel at `now`): the pending call is dropped, the quiet window ends.
    /// A pending call whose deadline had already come (its timer is late) is not dropped but
    /// returned as `due`: it runs, as it would have a moment earlier.
    mutating func cancel(at now: Duration) -> (due: Payload?, dropped: Payload?) {
        defer { self = DebounceState() }
        guard let pending else { return (nil, nil) }
        return pending.deadline <= now ? (pending.payload, nil) : (nil, pending.payload)
    }

    /// Removes the pending call (a withdrawn ticket), returning it.
    mutating func cancelPending() -> Payload? {
        pending.take()?.payload
    }

    /// Runs the pending call now (flush), as if its deadline had come at `now`.
    mutating func flush(at now: Duration) -> Payload? {
        guard let due = pending?.deadline else { return nil }
        pending?.deadline = min(due, now)
        return takeDue()
    }

    /// Takes the pending call, which is due: `maxWait` counts from its deadline from now on,
    /// and a `.runFirst` call opens its quiet window there.
    private mutating func takeDue() -> Payload? {
        guard let due = pending.take() else { return nil }
        maxWaitFrom = due.deadline
        if due.option == .runFirst { quietUntil = due.deadline.adding(due.duration) }
        return due.payload
    }
}

extension DebounceState.Pending: Sendable where Payload: Sendable {}
extension DebounceState: Sendable where Payload: Sendable {}
extension DebounceState.CallResult: Sendable where Payload: Sendable {}
