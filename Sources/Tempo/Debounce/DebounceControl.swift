// Control of a debounce group by identifier: cancel, flush, and when its pending call runs.

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
///
/// - Parameter identifier: The `identifier` the group's calls pass to `debounce`. Groups keyed
///   by call site have none, so they cannot be reached here.
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
///
/// - Parameter identifier: The `identifier` the group's calls pass to `debounce`.
public func flushDebounce(identifier: String) {
    TempoRegistry.current.flushDebounce(identifier: identifier)
}

/// The pending call of the debounce group `identifier`, and when it runs; `nil` when nothing
/// is pending.
///
/// ```swift
/// let unsaved = pendingDebounce(identifier: "save") != nil
/// ```
///
/// - Parameter identifier: The `identifier` the group's calls pass to `debounce`.
/// - Returns: When the pending call runs and how long that is from now; `nil` when the group
///   has no pending call (it is idle, or a `.leading` group, which never keeps one).
public func pendingDebounce(identifier: String) -> PendingCall? {
    TempoRegistry.current.pendingDebounce(identifier: identifier)
}

extension TempoRegistry {
    /// Cancels the pending call of the debounce group `identifier` in this registry; see
    /// ``Tempo/cancelDebounce(identifier:)``.
    ///
    /// ```swift
    /// registry.cancelDebounce(identifier: "save")
    /// ```
    ///
    /// - Parameter identifier: The `identifier` the group's calls pass to `debounce`.
    public func cancelDebounce(identifier: String) {
        cancel(DebounceState<Operation>.self, .name(identifier))
    }

    /// Runs the pending call of the debounce group `identifier` in this registry now; see
    /// ``Tempo/flushDebounce(identifier:)``.
    ///
    /// ```swift
    /// registry.flushDebounce(identifier: "save")
    /// ```
    ///
    /// - Parameter identifier: The `identifier` the group's calls pass to `debounce`.
    public func flushDebounce(identifier: String) {
        flush(DebounceState<Operation>.self, .name(identifier))
    }

    /// The pending call of the debounce group `identifier` in this registry; see
    /// ``Tempo/pendingDebounce(identifier:)``.
    ///
    /// ```swift
    /// let runsAt = registry.pendingDebounce(identifier: "save")?.runsAt
    /// ```
    ///
    /// - Parameter identifier: The `identifier` the group's calls pass to `debounce`.
    /// - Returns: When the pending call runs and how long that is from now; `nil` when nothing
    ///   is pending.
    public func pendingDebounce(identifier: String) -> PendingCall? {
        pending(DebounceState<Operation>.self, .name(identifier))
    }

}
