/// How ``throttle(_:identifier:by:option:fileID:line:column:operation:)-(_,_,_,_,StaticString,_,_,()->Void)`` treats calls inside an open window.
///
/// ```swift
/// throttle(.milliseconds(100), option: .ensureLast) { render(offset) }
/// ```
///
/// A call that runs "at once" (one that finds the window closed in ``default`` and
/// ``ensureLast``, or any call with a duration of zero or less) is decided during the call, and
/// its operation starts on its actor without a timer: on the main actor (the default) on its
/// next turn, after the calling main-actor code returns or suspends, not before the call
/// returns; with `by: .taskContext` a synchronous operation runs inside the call. A main-actor
/// test sees it after `await clock.advance(by: .zero)`.
public enum ThrottleOptions: Sendable, Hashable {
    /// Leading: a call that finds the window closed runs at once and opens a window of
    /// `duration`; calls while it is open are dropped.
    ///
    /// ```swift
    /// throttle(.seconds(2), identifier: "like") { like() }
    /// ```
    case `default`
    /// Leading and trailing: as ``default``, and the latest call dropped during the window runs
    /// when it closes, which opens the next window. A single call runs once.
    ///
    /// ```swift
    /// throttle(.milliseconds(100), identifier: "scroll", option: .ensureLast) { render() }
    /// ```
    case ensureLast
    /// Trailing only: a call that finds the window closed opens a window of `duration` without
    /// running; the latest call made since then runs when the window closes, and that run opens
    /// the next window.
    ///
    /// ```swift
    /// throttle(.seconds(1), identifier: "autosave", option: .trailing) { save(draft) }
    /// ```
    case trailing
}
