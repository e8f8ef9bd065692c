/// Runs `operation` at most once per `duration` for its group.
///
/// Calls are grouped by `identifier`, or, without one, by the call site (`fileID:line:column`).
/// With ``ThrottleOptions/default`` a call that finds the window closed runs at once and opens
/// a window of `duration`; calls while it is open are dropped. With
/// ``ThrottleOptions/ensureLast`` the latest dropped call also runs when the window closes,
/// which opens the next window. With ``ThrottleOptions/trailing`` the call that finds the
/// window closed opens it without running, and the latest call runs when it closes. A
/// `duration` of zero or less runs the operation at once.
///
/// Control a group by its identifier with ``cancelThrottle(identifier:)``,
/// ``flushThrottle(identifier:)`` and ``pendingThrottle(identifier:)``.
///
/// A dropped call costs a clock read and a table lookup under a lock: no `Task`, no timer.
///
/// ```swift
/// func scrollViewDidScroll(offset: Double) {
///     throttle(.milliseconds(100), identifier: "prefetch", by: .ownedActor) {
///         prefetcher.load(around: offset)
///     }
/// }
/// ```
///
/// - Parameters:
///   - duration: The window length. Defaults to 1 second.
///   - identifier: Groups calls from any call site; `nil` groups by call site.
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
    TempoRegistry.current.throttle(
        GroupKey(identifier, fileID, line, column), duration: duration, option: option,
        operation: .sync(operation, actorType))
}

/// Throttles a main-actor operation; otherwise as
/// ``throttle(_:identifier:by:option:fileID:line:column:operation:)-(_,_,_,_,_,_,_,()->Void)``.
///
/// ```swift
/// @MainActor func likeTapped() {
///     throttle(.seconds(2)) { self.model.like() }
/// }
/// ```
public func throttle(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    option: ThrottleOptions = .default,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @MainActor @Sendable () -> Void
) {
    TempoRegistry.current.throttle(
        GroupKey(identifier, fileID, line, column), duration: duration, option: option,
        operation: .main(operation))
}

/// Throttles an asynchronous, throwing operation, and returns the task that runs it if this
/// call is one that runs.
///
/// The returned task finishes at once when the call is dropped, or after the operation when it
/// runs. Cancelling it before the operation starts withdraws the call. Errors thrown by the
/// operation go to `onError`.
///
/// ```swift
/// throttle(.seconds(5), identifier: "refresh", onError: { log($0) }) {
///     try await feed.refresh()
/// }
/// ```
@discardableResult
public func throttle(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType = .mainActor,
    option: ThrottleOptions = .default,
    onError: (@Sendable (any Error) -> Void)? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    ticketedTask(after: duration, by: actorType, onError: onError, operation: operation) {
        TempoRegistry.current.throttle(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            operation: $0)
    }
}
