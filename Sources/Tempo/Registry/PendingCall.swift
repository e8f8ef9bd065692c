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
