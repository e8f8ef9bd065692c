/// Runs `operation` once calls of its group stop coming for `duration`.
///
/// Calls are grouped by `identifier`, or, without one, by the call site (`fileID:line:column`).
/// With ``DebounceOptions/default`` every call restarts the quiet window and only the latest
/// call of a burst runs, `duration` after it. With ``DebounceOptions/runFirst`` a call that
/// finds the group idle also runs at once. With ``DebounceOptions/leading`` only the first call
/// of a burst runs, at once, and every call pushes the end of the burst out (a double-submit
/// guard). An operation already running is never cancelled by a newer call. A `duration` of
/// zero or less runs the operation at once, outside its group: a call the group holds still
/// runs at its own instant.
///
/// `maxWait` bounds the trailing modes (`.default`, `.runFirst`): a burst that never pauses
/// still runs its latest call no later than `maxWait` after the burst's first call, and then no
/// later than `maxWait` after each run while the burst goes on (with `.default` a run leaves the
/// group idle, so the count starts again at the next call). A `maxWait` below `duration` counts
/// as `duration`; `nil`, zero or negative means no maximum. `.leading` ignores it.
///
/// Control a group by its identifier with ``cancelDebounce(identifier:)``,
/// ``flushDebounce(identifier:)`` and ``pendingDebounce(identifier:)``.
///
/// The call is applied before this function returns, in the order calls are made, stamped with
/// the clock reading at the call; it creates no `Task` (the group's one timer is made when the
/// group becomes live).
///
/// ```swift
/// func textChanged(_ text: String) {
///     debounce(
///         .milliseconds(300),
///         identifier: "search",
///         by: .ownedActor
///     ) {
///         index.query(text)
///     }
/// }
///
/// // Save while the user types: no
/// // keystroke waits more than
/// // 5 seconds to be saved.
/// debounce(
///     .seconds(1),
///     identifier: "draft",
///     by: .ownedActor,
///     maxWait: .seconds(5)
/// ) {
///     store.save(draft)
/// }
/// ```
///
/// - Parameters:
///   - duration: The quiet time that must pass after the latest call. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - actorType: Where the operation runs. Leave the argument out to run on the main actor:
///     the call then goes to the main-actor overload, whose closure may also touch main-actor
///     state (so `debounce { self.label.text = text }` compiles in a `@MainActor` type).
///   - option: Trailing only (`.default`), leading and trailing (`.runFirst`) or leading only
///     (`.leading`).
///   - maxWait: The longest a burst waits for a run: counted from its first call, then from
///     its latest run. `nil` (the default), zero or negative: no maximum.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run.
public func debounce(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType,
    option: DebounceOptions = .default,
    maxWait: Duration? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @Sendable () -> Void
) {
    TempoRegistry.withCurrentRegistry {
        $0.debounce(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            maxWait: maxWait, operation: .sync(operation, actorType))
    }
}

/// Runs a main-actor operation once calls of its group stop coming for `duration`.
///
/// This is the form main-actor code calls: without a `by:` argument the closure is
/// `@MainActor`, so it may update the interface and the view model's state.
///
/// Calls are grouped by `identifier`, or, without one, by the call site (`fileID:line:column`).
/// With ``DebounceOptions/default`` every call restarts the quiet window and only the latest
/// call of a burst runs, `duration` after it. With ``DebounceOptions/runFirst`` a call that
/// finds the group idle also runs at once. With ``DebounceOptions/leading`` only the first call
/// of a burst runs, at once, and every call pushes the end of the burst out (a double-submit
/// guard). An operation already running is never cancelled by a newer call. A `duration` of
/// zero or less runs the operation at once, on the main actor's next turn.
///
/// `maxWait` bounds the trailing modes: a burst that never pauses still runs its latest call
/// no later than `maxWait` after the burst's first call, and then after each run. Control a
/// group by its identifier with ``cancelDebounce(identifier:)``,
/// ``flushDebounce(identifier:)`` and ``pendingDebounce(identifier:)``. The call is applied
/// before this function returns, in the order calls are made; it creates no `Task`.
///
/// ```swift
/// @MainActor func textChanged() {
///     debounce(.milliseconds(250)) {
///         self.label.text =
///             self.model.summary
///     }
/// }
/// ```
///
/// - Parameters:
///   - duration: The quiet time that must pass after the latest call. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - option: Trailing only (`.default`), leading and trailing (`.runFirst`) or leading only
///     (`.leading`).
///   - maxWait: The longest a burst waits for a run: counted from its first call, then from
///     its latest run. `nil` (the default), zero or negative: no maximum.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run, on the main actor.
public func debounce(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    option: DebounceOptions = .default,
    maxWait: Duration? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @MainActor @Sendable () -> Void
) {
    TempoRegistry.withCurrentRegistry {
        $0.debounce(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            maxWait: maxWait, operation: .main(operation))
    }
}

/// Debounces an asynchronous, throwing operation, and returns a task that stands for the call
/// having been handed to the engine, as Throttler's does.
///
/// The call is applied before this function returns, like every other call. The operation is
/// kept by the engine, not by the returned task: it runs when the group says (the latest call
/// of a burst, `duration` after it), in a task of its own, and its errors go to `onError`. So
/// awaiting the returned task does not wait for a stored call to run, and a loop that awaits
/// each returned task still coalesces. When the call runs at once (a ``DebounceOptions/runFirst``
/// or ``DebounceOptions/leading`` call that finds the group idle, or a `duration` of zero or
/// less) the task returned is the one running it, so awaiting it waits for that run; for any
/// other call it is one shared task that is already done (no `Task` is made per call).
///
/// `onError` runs right after the operation, on its actor, before the run counts as finished; a
/// handler written in main-actor code is isolated to the main actor and may update its state
/// (see ``ActorType``).
///
/// Withdraw a pending call with ``cancelDebounce(identifier:)``; cancelling the returned task
/// does not withdraw it. To await the operation, or withdraw one call by cancelling its task,
/// use a ``Debouncer``.
///
/// ```swift
/// debounce(
///     .milliseconds(300),
///     identifier: "save",
///     onError: { log($0) }
/// ) {
///     try await api.save(draft)
/// }
/// ```
///
/// - Parameters:
///   - duration: The quiet time that must pass after the latest call. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - actorType: Where the operation runs, isolated to that actor across its `await`s.
///     Defaults to the main actor.
///   - option: Trailing only (`.default`), leading and trailing (`.runFirst`) or leading only
///     (`.leading`).
///   - maxWait: The longest a burst waits for a run: counted from its first call, then from
///     its latest run. `nil` (the default), zero or negative: no maximum.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - onError: Called with any error the operation throws (`CancellationError` included), on
///     the operation's actor. `nil` (the default): errors are dropped.
///   - operation: The work to run.
/// - Returns: The task running the operation when this call runs it at once; otherwise a
///   shared task that has already finished. Either way, not a handle on a stored call.
@discardableResult
public func debounce(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType = .mainActor,
    option: DebounceOptions = .default,
    maxWait: Duration? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    @_inheritActorContext onError: (nonisolated(nonsending) @Sendable (any Error) async -> Void)? =
        nil,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    TempoRegistry.withCurrentRegistry {
        $0.debounce(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            maxWait: maxWait,
            operation: .async(AsyncOperation(operation, on: actorType, onError: onError)))
    } ?? appliedCallTask
}
