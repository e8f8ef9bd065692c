/// Runs `operation` at most once per `duration` for its group.
///
/// Calls are grouped by `identifier`, or, without one, by the call site (`fileID:line:column`).
/// With ``ThrottleOptions/default`` a call that finds the window closed runs at once and opens
/// a window of `duration`; calls while it is open are dropped. With
/// ``ThrottleOptions/ensureLast`` the latest dropped call also runs when the window closes,
/// which opens the next window. With ``ThrottleOptions/trailing`` the call that finds the
/// window closed opens it without running, and the latest call runs when it closes. A
/// `duration` of zero or less runs the operation at once, outside its group: a call the group
/// keeps for its window's end still runs then.
///
/// Control a group by its identifier with ``cancelThrottle(identifier:)``,
/// ``flushThrottle(identifier:)`` and ``pendingThrottle(identifier:)``.
///
/// A dropped call costs a clock read and a table lookup under a lock: no `Task`, no timer.
///
/// ```swift
/// func didScroll(offset: Double) {
///     throttle(
///         .milliseconds(100),
///         identifier: "prefetch",
///         by: .ownedActor
///     ) {
///         prefetcher.load(
///             around: offset
///         )
///     }
/// }
/// ```
///
/// - Parameters:
///   - duration: The window length. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - actorType: Where the operation runs. Leave the argument out to run on the main actor:
///     the call then goes to the main-actor overload, whose closure may also touch main-actor
///     state (so `throttle { self.label.text = text }` compiles in a `@MainActor` type).
///   - option: Leading only (`.default`), leading and trailing (`.ensureLast`) or trailing
///     only (`.trailing`).
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run.
public func throttle(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType,
    option: ThrottleOptions = .default,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @Sendable () -> Void
) {
    TempoRegistry.withCurrentRegistry {
        $0.throttle(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            operation: .sync(operation, actorType))
    }
}

/// Runs a main-actor operation at most once per `duration` for its group.
///
/// This is the form main-actor code calls: without a `by:` argument the closure is
/// `@MainActor`, so it may update the interface and the view model's state.
///
/// Calls are grouped by `identifier`, or, without one, by the call site (`fileID:line:column`).
/// With ``ThrottleOptions/default`` a call that finds the window closed runs at once and opens
/// a window of `duration`; calls while it is open are dropped. With
/// ``ThrottleOptions/ensureLast`` the latest dropped call also runs when the window closes,
/// which opens the next window. With ``ThrottleOptions/trailing`` the call that finds the
/// window closed opens it without running, and the latest call runs when it closes. A
/// `duration` of zero or less runs the operation at once, on the main actor's next turn.
///
/// Control a group by its identifier with ``cancelThrottle(identifier:)``,
/// ``flushThrottle(identifier:)`` and ``pendingThrottle(identifier:)``. A dropped call costs a
/// clock read and a table lookup under a lock: no `Task`, no timer.
///
/// ```swift
/// @MainActor func likeTapped() {
///     throttle(.seconds(2)) {
///         self.model.like()
///     }
/// }
/// ```
///
/// - Parameters:
///   - duration: The window length. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - option: Leading only (`.default`), leading and trailing (`.ensureLast`) or trailing
///     only (`.trailing`).
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run, on the main actor.
public func throttle(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    option: ThrottleOptions = .default,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @MainActor @Sendable () -> Void
) {
    TempoRegistry.withCurrentRegistry {
        $0.throttle(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            operation: .main(operation))
    }
}

/// Throttles an asynchronous, throwing operation, and returns a task that stands for the call
/// having been handed to the engine, as Throttler's does.
///
/// The call is applied before this function returns, like every other call. The operation is
/// kept by the engine, not by the returned task: a call that opens the window runs at once
/// (except with ``ThrottleOptions/trailing``), a call kept for the end of the window runs then,
/// in a task of its own, and errors go to `onError`. So awaiting the returned task does not
/// wait for a kept call to run, and a loop that awaits each returned task is still throttled.
/// When the call runs at once (it opens the window with `.default` or `.ensureLast`, or
/// `duration` is zero or less) the task returned is the one running it, so awaiting it waits
/// for that run; for any other call it is one shared task that is already done (no `Task` is
/// made per call).
///
/// `onError` runs right after the operation, on its actor, before the run counts as finished; a
/// handler written in main-actor code is isolated to the main actor and may update its state
/// (see ``ActorType``).
///
/// Withdraw a kept trailing call with ``cancelThrottle(identifier:)``; cancelling the returned
/// task does not withdraw it. To await the operation, or withdraw one call by cancelling its
/// task, use a ``Throttler``.
///
/// ```swift
/// throttle(
///     .seconds(5),
///     identifier: "refresh",
///     onError: { log($0) }
/// ) {
///     try await feed.refresh()
/// }
/// ```
///
/// - Parameters:
///   - duration: The window length. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - actorType: Where the operation runs, isolated to that actor across its `await`s.
///     Defaults to the main actor.
///   - option: Leading only (`.default`), leading and trailing (`.ensureLast`) or trailing
///     only (`.trailing`).
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - onError: Called with any error the operation throws (`CancellationError` included), on
///     the operation's actor. `nil` (the default): errors are dropped.
///   - operation: The work to run.
/// - Returns: The task running the operation when this call runs it at once; otherwise a
///   shared task that has already finished. Either way, not a handle on a kept call.
@discardableResult
public func throttle(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType = .mainActor,
    option: ThrottleOptions = .default,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    @_inheritActorContext onError: (nonisolated(nonsending) @Sendable (any Error) async -> Void)? =
        nil,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    TempoRegistry.withCurrentRegistry {
        $0.throttle(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            operation: .async(AsyncOperation(operation, on: actorType, onError: onError)))
    } ?? appliedCallTask
}
