/// Throttles an asynchronous, throwing operation and waits for its outcome: the caller whose
/// call runs gets the operation's value or error; every other caller is settled at once.
///
/// Calls are grouped and timed exactly as by
/// ``throttle(_:identifier:by:option:fileID:line:column:onError:operation:)-(_,_,_,_,StaticString,_,_,_,_)``,
/// in every ``ThrottleOptions`` mode. The call is applied before the first suspension, in the order
/// calls are made, stamped with the clock reading at the call. What each caller gets:
///
/// - The call runs (it opens the window, or is the trailing call kept for the window's end):
///   the operation's value, or the error it throws. The operation runs on `actorType`, in one
///   task made when the call is granted.
/// - The call never runs (the window dropped it, a newer call replaced it as the kept trailing
///   call, or the group was cancelled): ``DiscardedCall/notRun``, thrown as soon as that is
///   decided. No task is made for such a call: the caller waits on a continuation in its own
///   task.
/// - The caller's task is cancelled before the call runs: the call is withdrawn and
///   `CancellationError` is thrown. Cancelled while the operation runs: the operation's task is
///   cancelled and its outcome is returned or thrown.
/// - With `latestWins`, a newer run of the group starts while this one runs:
///   ``DiscardedCall/overtaken``, thrown at once, and this run's task is cancelled; its value or
///   error is discarded. A run starts when the engine releases it (its window opens, its
///   window ends, a flush runs it, or it runs at once), so runs overtake in release order: a
///   call released while its caller's actor is busy, and overtaken before that caller wakes,
///   throws ``DiscardedCall/overtaken`` without running its operation. Without `latestWins`
///   (the default) a running operation is never cancelled, and a slow run can finish after a
///   newer one.
///
/// A caller never gets another call's outcome. Latest wins applies among the awaited,
/// latest-wins calls of a group; cancellation is cooperative (see
/// ``debounceResult(_:identifier:by:option:maxWait:latestWins:fileID:line:column:operation:)``).
///
/// ```swift
/// func pullToRefresh() async throws -> Feed {
///     try await throttleResult(.seconds(5), identifier: "feed", option: .ensureLast) {
///         try await api.feed()
///     }
/// }
/// ```
///
/// - Parameters:
///   - duration: The window length. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - actorType: Where the operation runs. Defaults to the main actor.
///   - option: Leading only (`.default`), leading and trailing (`.ensureLast`) or trailing
///     only (`.trailing`).
///   - latestWins: Whether this call's run, when the engine releases it, cancels the group's
///     latest-wins run still in flight. Defaults to `false`.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run; its value is this call's value.
/// - Returns: The operation's value, when this call is one that runs.
/// - Throws: The operation's error; ``DiscardedCall`` when the call never ran or was overtaken;
///   `CancellationError` when the caller's task was cancelled before the call ran.
public nonisolated(nonsending) func throttleResult<T: Sendable>(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType = .mainActor,
    option: ThrottleOptions = .default,
    latestWins: Bool = false,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> T
) async throws -> T {
    let registry = TempoRegistry.current
    let key = GroupKey(identifier, fileID, line, column)
    return try await awaitTicketedCall(
        AwaitedCallSite(registry: registry, kind: .throttle, key: key), by: actorType,
        latestWins: latestWins, operation: operation
    ) {
        registry.throttle(key, duration: duration, option: option, operation: $0)
    }
}

extension Throttler {
    /// Throttles an asynchronous, throwing operation, which runs on ``actorType``, and waits for
    /// its outcome.
    ///
    /// Each caller is settled as by
    /// ``throttleResult(_:identifier:by:option:latestWins:fileID:line:column:operation:)``: a
    /// call that runs gets the operation's value or error, a dropped or replaced call gets
    /// ``DiscardedCall/notRun`` at once (so does the kept trailing call when the throttler is
    /// cancelled), a caller cancelled before its call runs withdraws it and
    /// gets `CancellationError`, and with `latestWins` a run still in flight when a newer one
    /// is released gets ``DiscardedCall/overtaken`` at once, its task cancelled (one not
    /// started yet, its caller's actor busy, never starts). Without `latestWins` a running
    /// operation is never cancelled.
    ///
    /// ```swift
    /// let refresher = Throttler(.seconds(5), option: .ensureLast)
    /// let latest = try await refresher.result(latestWins: true) { try await api.feed() }
    /// ```
    ///
    /// - Parameters:
    ///   - latestWins: Whether this call's run, when the engine releases it, cancels the
    ///     throttler's latest-wins run still in flight. Defaults to `false`.
    ///   - operation: The work to run; its value is this call's value.
    /// - Returns: The operation's value, when this call is one that runs.
    /// - Throws: The operation's error; ``DiscardedCall`` when the call never ran or was
    ///   overtaken; `CancellationError` when the caller's task was cancelled before it ran.
    public nonisolated(nonsending) func result<T: Sendable>(
        latestWins: Bool = false,
        _ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await awaitTicketedCall(
            AwaitedCallSite(registry: registry, kind: .throttle, key: key), by: actorType,
            latestWins: latestWins, operation: operation
        ) {
            registry.throttle(key, duration: duration, option: option, operation: $0)
        }
    }
}
