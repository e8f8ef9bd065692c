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
    /// The call waiting for its quiet window to pass.
    private(set) var pending: Payload?
    /// When `pending` runs.
    private(set) var deadline: Duration = .zero
    private var pendingDuration: Duration = .zero
    private var pendingOption: DebounceOptions = .default
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

    /// When the pending call runs, if there is one.
    var pendingDeadline: Duration? { pending == nil ? nil : deadline }

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
        if pending != nil, deadline <= now { result.catchUp = takeDue() }
        if let q = quietUntil, now >= q { quietUntil = nil }
        if pending == nil, quietUntil == nil { maxWaitFrom = now }

        switch option {
        case .leading:
            if pending == nil, quietUntil == nil {
                result.runNow = payload
            } else {
                result.replaced = payload
            }
            quietUntil = max(quietUntil ?? now, now.adding(duration))
        case .runFirst where pending == nil && quietUntil == nil:
            result.runNow = payload
            quietUntil = now.adding(duration)
        case .default, .runFirst:
            result.replaced = pending
            pending = payload
            deadline = now.adding(duration)
            if let maxWait, maxWait > .zero {
                deadline = min(deadline, maxWaitFrom.adding(max(maxWait, duration)))
            }
            pendingDuration = duration
            pendingOption = option
        }
        // Every branch that leaves nothing pending opened a quiet window.
        result.wake = pending != nil ? deadline : (quietUntil ?? now)
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

    /// Forgets the group (cancel at `now`): the pending call is dropped, the quiet window ends.
    /// A pending call whose deadline had already come (its timer is late) is not dropped but
    /// returned as `due`: it runs, as it would have a moment earlier.
    mutating func cancel(at now: Duration) -> (due: Payload?, dropped: Payload?) {
        defer { self = DebounceState() }
        guard pending != nil else { return (nil, nil) }
        return deadline <= now ? (pending, nil) : (nil, pending)
    }

    /// Removes the pending call (a withdrawn ticket), returning it.
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
        maxWaitFrom = deadline
        if pendingOption == .runFirst { quietUntil = deadline.adding(pendingDuration) }
        return due
    }
}

extension DebounceState: Sendable where Payload: Sendable {}
extension DebounceState.CallResult: Sendable where Payload: Sendable {}
