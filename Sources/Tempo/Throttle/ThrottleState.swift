/// The state of one throttle group, and its transitions; like ``DebounceState`` it holds no
/// clock and no task.
///
/// A window covers `[opened, closesAt)`: a call at `closesAt` finds it closed. When a window
/// closes with a trailing call pending (`.ensureLast`, `.trailing`), that call runs at the
/// closing instant and opens the next window there.
///
/// The modes, for a call that finds the window closed / open:
/// - `.default`: runs at once and opens a window / is dropped.
/// - `.ensureLast`: runs at once and opens a window / becomes the trailing call.
/// - `.trailing`: becomes the trailing call and opens a window / becomes the trailing call.
struct ThrottleState<Payload> {
    /// When the open window closes; `nil` when no window is open.
    private(set) var closesAt: Duration?
    /// The latest call made during the window, kept by `.ensureLast` and `.trailing`.
    private(set) var trailing: Payload?
    private var trailingDuration: Duration = .zero

    struct CallResult {
        /// A trailing call whose window had closed when this call came; it runs first.
        var catchUp: Payload?
        /// The call itself, when it found the window closed (not in `.trailing`).
        var runNow: Payload?
        /// A call that will never run: this one (dropped) or the trailing call it replaced.
        var dropped: Payload?
        /// When the open window closes.
        var wake: Duration
    }

    struct FireResult {
        var run: Payload?
        /// When to look again, or `nil` when the group is idle and can be removed.
        var next: Duration?
    }

    /// When the trailing call runs, if there is one.
    var pendingDeadline: Duration? { trailing == nil ? nil : closesAt }

    /// No trailing call and no open window at `now`: the group can be forgotten.
    func isIdle(at now: Duration) -> Bool {
        trailing == nil && (closesAt.map { now >= $0 } ?? true)
    }

    /// A call at `now` with a positive `duration`. Always inlined into the registry's one
    /// caller, as `DebounceState`'s: left as a call once the registry's `throttle` is inlined
    /// into the front door, it made a dropped call a tenth dearer.
    @inline(__always)
    mutating func call(
        at now: Duration, duration: Duration, option: ThrottleOptions, payload: Payload
    ) -> CallResult {
        var result = CallResult(wake: .zero)
        if let end = closesAt, now >= end {
            result.catchUp = closeWindow(at: end)
            if let reopened = closesAt, now >= reopened { closesAt = nil }
        }
        if closesAt == nil {
            closesAt = now.adding(duration)
            if option == .trailing {
                trailing = payload
                trailingDuration = duration
            } else {
                result.runNow = payload
            }
        } else if option == .default {
            result.dropped = payload
        } else {
            result.dropped = trailing
            trailing = payload
            trailingDuration = duration
        }
        // Every branch leaves a window open.
        result.wake = closesAt ?? now
        return result
    }

    /// The timer woke at `now`.
    mutating func fire(at now: Duration) -> FireResult {
        guard let end = closesAt else { return FireResult() }
        if now < end { return FireResult(run: nil, next: end) }
        let run = closeWindow(at: end)
        // A late wake-up can find even the window the trailing call opened already over.
        if let reopened = closesAt, reopened <= now { closesAt = nil }
        return FireResult(run: run, next: closesAt)
    }

    /// Forgets the group (cancel at `now`): the trailing call is dropped, the window closes. A
    /// trailing call whose window had already closed (the timer is late) is not dropped but
    /// returned as `due`: it runs, as it would have a moment earlier.
    mutating func cancel(at now: Duration) -> (due: Payload?, dropped: Payload?) {
        defer { self = ThrottleState() }
        guard let trailing else { return (nil, nil) }
        return closesAt.map { $0 <= now } == true ? (trailing, nil) : (nil, trailing)
    }

    /// Removes the trailing call (a withdrawn ticket), returning it.
    mutating func cancelTrailing() -> Payload? {
        defer { trailing = nil }
        return trailing
    }

    /// Runs the trailing call now (flush): it runs at `now` and opens a window there. When its
    /// window had already closed (the timer is late), it runs as it would have then: the window
    /// it opens starts when the old one closed.
    mutating func flush(at now: Duration) -> Payload? {
        guard let run = trailing else { return nil }
        if let end = closesAt, end <= now {
            _ = closeWindow(at: end)
            if let reopened = closesAt, reopened <= now { closesAt = nil }
            return run
        }
        trailing = nil
        closesAt = now.adding(trailingDuration)
        return run
    }

    /// Closes the window at `end`: a trailing call runs and opens the next window at `end`.
    private mutating func closeWindow(at end: Duration) -> Payload? {
        guard let run = trailing else {
            closesAt = nil
            return nil
        }
        trailing = nil
        closesAt = end.adding(trailingDuration)
        return run
    }
}

extension ThrottleState: Sendable where Payload: Sendable {}
extension ThrottleState.CallResult: Sendable where Payload: Sendable {}
