/// How ``debounce(_:identifier:by:option:maxWait:fileID:line:column:operation:)-(_,_,_,_,_,StaticString,_,_,()->Void)`` treats a burst of calls.
///
/// ```swift
/// debounce(.milliseconds(300), option: .runFirst) { save() }  // first now, last at end
/// debounce(.seconds(1), option: .leading) { submit() }        // first only
/// ```
public enum DebounceOptions: Sendable, Hashable {
    /// Trailing: each call restarts the quiet window; when it passes, the latest call runs.
    ///
    /// ```swift
    /// debounce(.milliseconds(300), identifier: "search") { search(text) }
    /// ```
    case `default`
    /// Leading and trailing: a call that finds the group idle (nothing pending and at least
    /// `duration` since the group last ran) runs at once; the others are debounced as in
    /// ``default``. A single call runs once, never twice.
    ///
    /// ```swift
    /// debounce(.milliseconds(500), identifier: "sync", option: .runFirst) { sync() }
    /// ```
    case runFirst
    /// Leading only: the first call of a burst runs at once and the later ones are dropped.
    /// Every call, run or dropped, restarts the quiet window, so a new burst only starts after
    /// `duration` without calls: the double-submit guard. Nothing is ever pending, so `maxWait`
    /// does not apply.
    ///
    /// ```swift
    /// func submitTapped() {
    ///     debounce(.seconds(1), identifier: "submit", option: .leading) { order.submit() }
    /// }
    /// ```
    case leading
}
