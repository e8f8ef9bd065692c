/// A debounce or throttle call that is waiting to run: when it runs, and how long that is from
/// when it was asked.
///
/// ```swift
/// if let pending = pendingDebounce(identifier: "save") {
///     statusLabel.text = "Saving in \(pending.remaining)"
/// }
/// ```
public struct PendingCall: Sendable, Hashable {
    /// When the call runs, on the registry's clock: an offset like ``TempoRegistry/now``.
    ///
    /// ```swift
    /// let runsAt = registry.pendingDebounce(identifier: "save")?.runsAt   // e.g. 12.3 s
    /// ```
    public let runsAt: Duration
    /// How long until it runs, from when it was asked; zero when it is due.
    ///
    /// ```swift
    /// let left = pendingThrottle(identifier: "progress")?.remaining ?? .zero
    /// ```
    public let remaining: Duration

    init(runsAt: Duration, now: Duration) {
        self.runsAt = runsAt
        self.remaining = max(.zero, runsAt.subtracting(now))
    }
}

// MARK: - Free functions, on the current registry

/// Cancels the pending call of the debounce group `identifier`: it never runs, and the group is
/// forgotten, so its next call starts a new burst (a `.leading` or `.runFirst` call runs at
/// once). An operation already running goes on. Does nothing when nothing is live for
/// `identifier`. A call whose instant has already come (its timer is a moment late on a busy
/// clock) is not cancelled: it runs, as it would have a moment earlier.
///
/// ```swift
/// debounce(.seconds(1), identifier: "save") { store.save(draft) }
/// cancelDebounce(identifier: "save")   // the user discarded the draft: don't save
/// ```
public func cancelDebounce(identifier: String) {
    TempoRegistry.current.cancelDebounce(identifier: identifier)
}

/// Runs the pending call of the debounce group `identifier` now, with its latest operation,
/// instead of at the end of the quiet window. Does nothing when nothing is pending.
///
/// ```swift
/// func windowWillClose() {
///     flushDebounce(identifier: "save")   // save the draft now, not in a second
/// }
/// ```
public func flushDebounce(identifier: String) {
    TempoRegistry.current.flushDebounce(identifier: identifier)
}

/// The pending call of the debounce group `identifier`, and when it runs; `nil` when nothing
/// is pending.
///
/// ```swift
/// let unsaved = pendingDebounce(identifier: "save") != nil
/// ```
public func pendingDebounce(identifier: String) -> PendingCall? {
    TempoRegistry.current.pendingDebounce(identifier: identifier)
}

/// Cancels the trailing call of the throttle group `identifier`: it never runs, and the group
/// is forgotten, so its window closes and its next call is treated as the first. An operation
/// already running goes on. Does nothing when nothing is live for `identifier`. A trailing call
/// whose window has already closed (its timer is a moment late) is not cancelled: it runs.
///
/// ```swift
/// cancelThrottle(identifier: "scroll")
/// ```
public func cancelThrottle(identifier: String) {
    TempoRegistry.current.cancelThrottle(identifier: identifier)
}

/// Runs the trailing call of the throttle group `identifier` now, with its latest operation;
/// that run opens a new window. Does nothing when no trailing call is pending.
///
/// ```swift
/// flushThrottle(identifier: "progress")   // show the final progress value now
/// ```
public func flushThrottle(identifier: String) {
    TempoRegistry.current.flushThrottle(identifier: identifier)
}

/// The trailing call of the throttle group `identifier`, and when it runs; `nil` when none is
/// pending.
///
/// ```swift
/// if pendingThrottle(identifier: "progress") == nil { progressView.flash() }
/// ```
public func pendingThrottle(identifier: String) -> PendingCall? {
    TempoRegistry.current.pendingThrottle(identifier: identifier)
}

// MARK: - On a registry

extension TempoRegistry {
    /// Cancels the pending call of the debounce group `identifier` in this registry; see
    /// ``Tempo/cancelDebounce(identifier:)``.
    ///
    /// ```swift
    /// registry.cancelDebounce(identifier: "save")
    /// ```
    public func cancelDebounce(identifier: String) {
        cancelDebounce(.name(identifier))
    }

    /// Runs the pending call of the debounce group `identifier` in this registry now; see
    /// ``Tempo/flushDebounce(identifier:)``.
    ///
    /// ```swift
    /// registry.flushDebounce(identifier: "save")
    /// ```
    public func flushDebounce(identifier: String) {
        flushDebounce(.name(identifier))
    }

    /// The pending call of the debounce group `identifier` in this registry; see
    /// ``Tempo/pendingDebounce(identifier:)``.
    ///
    /// ```swift
    /// let runsAt = registry.pendingDebounce(identifier: "save")?.runsAt
    /// ```
    public func pendingDebounce(identifier: String) -> PendingCall? {
        pendingDebounce(.name(identifier))
    }

    /// Cancels the trailing call of the throttle group `identifier` in this registry; see
    /// ``Tempo/cancelThrottle(identifier:)``.
    ///
    /// ```swift
    /// registry.cancelThrottle(identifier: "scroll")
    /// ```
    public func cancelThrottle(identifier: String) {
        cancelThrottle(.name(identifier))
    }

    /// Runs the trailing call of the throttle group `identifier` in this registry now; see
    /// ``Tempo/flushThrottle(identifier:)``.
    ///
    /// ```swift
    /// registry.flushThrottle(identifier: "progress")
    /// ```
    public func flushThrottle(identifier: String) {
        flushThrottle(.name(identifier))
    }

    /// The trailing call of the throttle group `identifier` in this registry; see
    /// ``Tempo/pendingThrottle(identifier:)``.
    ///
    /// ```swift
    /// let waiting = registry.pendingThrottle(identifier: "progress") != nil
    /// ```
    public func pendingThrottle(identifier: String) -> PendingCall? {
        pendingThrottle(.name(identifier))
    }
}
