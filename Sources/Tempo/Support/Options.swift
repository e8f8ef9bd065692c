/// How ``debounce(_:identifier:by:option:fileID:line:column:operation:)-(_,_,_,_,_,_,_,()->Void)`` treats a burst of calls.
///
/// ```swift
/// debounce(.milliseconds(300), option: .runFirst) { save() }   // first now, last at the end
/// ```
public enum DebounceOptions: Sendable, Hashable {
    /// Trailing: each call restarts the quiet window; when it passes, the latest call runs.
    case `default`
    /// Leading and trailing: a call that finds the group idle (nothing pending and at least
    /// `duration` since the group last ran) runs at once; the others are debounced as in
    /// ``default``. A single call runs once, never twice.
    case runFirst
}

/// How ``throttle(_:identifier:by:option:fileID:line:column:operation:)-(_,_,_,_,_,_,_,()->Void)`` treats calls inside an open window.
///
/// ```swift
/// throttle(.milliseconds(100), option: .ensureLast) { render(offset) }
/// ```
public enum ThrottleOptions: Sendable, Hashable {
    /// Leading: a call that finds the window closed runs at once and opens a window of
    /// `duration`; calls while it is open are dropped.
    case `default`
    /// Leading and trailing: as ``default``, and the latest call dropped during the window runs
    /// when it closes, which opens the next window.
    case ensureLast
}
