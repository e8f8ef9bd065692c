/// How ``debounce(_:identifier:by:option:maxWait:fileID:line:column:operation:)-(_,_,_,_,_,StaticString,_,_,()->Void)`` treats a burst of calls.
///
/// ```swift
/// debounce(.milliseconds(300), option: .runFirst) { save() }  // first now, last at end
/// debounce(.seconds(1), option: .leading) { submit() }        // first only
/// ```
///
/// A call that runs "at once" (in ``runFirst`` and ``leading``, or with a duration of zero or
/// less) is decided during the call, and its operation starts on its actor without a timer: on
/// the main actor (the default) on its next turn, after the calling main-actor code returns or
/// suspends, not before the call returns; with `by: .taskContext` a synchronous operation runs
/// inside the call. A main-actor test sees it after `await clock.advance(by: .zero)`.
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
