// Control of a throttle group by identifier: cancel, flush, and when its trailing call runs.

/// Cancels the trailing call of the throttle group `identifier`: it never runs, and the group
/// is forgotten, so its window closes and its next call is treated as the first. An operation
/// already running goes on. Does nothing when nothing is live for `identifier`. A trailing call
/// whose window has already closed (its timer is a moment late) is not cancelled: it runs.
///
/// ```swift
/// cancelThrottle(identifier: "scroll")
/// ```
///
/// - Parameter identifier: The `identifier` the group's calls pass to `throttle`. Groups keyed
///   by call site have none, so they cannot be reached here.
public func cancelThrottle(identifier: String) {
    TempoRegistry.current.cancelThrottle(identifier: identifier)
}

/// Runs the trailing call of the throttle group `identifier` now, with its latest operation;
/// that run opens a new window. Does nothing when no trailing call is pending.
///
/// ```swift
/// flushThrottle(identifier: "progress")   // show the final progress value now
/// ```
///
/// - Parameter identifier: The `identifier` the group's calls pass to `throttle`.
public func flushThrottle(identifier: String) {
    TempoRegistry.current.flushThrottle(identifier: identifier)
}

/// The trailing call of the throttle group `identifier`, and when it runs; `nil` when none is
/// pending.
///
/// ```swift
/// if pendingThrottle(identifier: "progress") == nil { progressView.flash() }
/// ```
///
/// - Parameter identifier: The `identifier` the group's calls pass to `throttle`.
/// - Returns: When the trailing call runs (the window's end) and how long that is from now;
///   `nil` when no trailing call waits, even while a window is open.
public func pendingThrottle(identifier: String) -> PendingCall? {
    TempoRegistry.current.pendingThrottle(identifier: identifier)
}

extension TempoRegistry {
    /// Cancels the trailing call of the throttle group `identifier` in this registry; see
    /// ``Tempo/cancelThrottle(identifier:)``.
    ///
    /// ```swift
    /// registry.cancelThrottle(identifier: "scroll")
    /// ```
    ///
    /// - Parameter identifier: The `identifier` the group's calls pass to `throttle`.
    public func cancelThrottle(identifier: String) {
        cancel(ThrottleState<Operation>.self, .name(identifier))
    }

    /// Runs the trailing call of the throttle group `identifier` in this registry now; see
    /// ``Tempo/flushThrottle(identifier:)``.
    ///
    /// ```swift
    /// registry.flushThrottle(identifier: "progress")
    /// ```
    ///
    /// - Parameter identifier: The `identifier` the group's calls pass to `throttle`.
    public func flushThrottle(identifier: String) {
        flush(ThrottleState<Operation>.self, .name(identifier))
    }

    /// The trailing call of the throttle group `identifier` in this registry; see
    /// ``Tempo/pendingThrottle(identifier:)``.
    ///
    /// ```swift
    /// let waiting = registry.pendingThrottle(identifier: "progress") != nil
    /// ```
    ///
    /// - Parameter identifier: The `identifier` the group's calls pass to `throttle`.
    /// - Returns: When the trailing call runs and how long that is from now; `nil` when none
    ///   waits.
    public func pendingThrottle(identifier: String) -> PendingCall? {
        pending(ThrottleState<Operation>.self, .name(identifier))
    }
}
