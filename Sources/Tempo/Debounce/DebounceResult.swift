/// Debounces an asynchronous, throwing operation and waits for its outcome: the caller whose
/// call runs gets the operation's value or error; every other caller is settled at once.
///
/// Calls are grouped and timed exactly as by
/// ``debounce(_:identifier:by:option:maxWait:fileID:line:column:onError:operation:)-(_,_,_,_,_,StaticString,_,_,_,_)``,
/// in every ``DebounceOptions`` mode and with `maxWait`. The call is applied before the first
/// suspension, in the order calls are made, stamped with the clock reading at the call. What
/// each caller gets:
///
/// - The call runs (it is the latest of its burst, or runs at once as a leading call): the
///   operation's value, or the error it throws. The operation runs on `actorType`, in one task
///   made when the call is granted.
/// - The call never runs (a newer call replaced it, a `.leading` burst dropped it, or the group
///   was cancelled): ``DiscardedCall/notRun``, thrown as soon as that is decided. No task is
///   made for such a call: the caller waits on a continuation in its own task.
/// - The caller's task is cancelled before the call runs: the call is withdrawn (as if it had
///   never been made) and `CancellationError` is thrown. Cancelled while the operation runs:
///   the operation's task is cancelled and its outcome is returned or thrown.
/// - With `latestWins`, a newer run of the group starts while this one runs:
///   ``DiscardedCall/overtaken``, thrown at once, and this run's task is cancelled. Its value
///   or error, whenever it comes, is discarded, so no run's outcome is handed over after a
///   newer run of the group started (a caller whose actor was busy takes an outcome handed
///   over before that when its actor is free, which can be after). A run starts when the engine releases it (its time comes,
///   a flush runs it, or it runs at once), so runs overtake in release order: a call released
///   while its caller's actor is busy, and overtaken before that caller wakes, throws
///   ``DiscardedCall/overtaken`` without running its operation. Without `latestWins` (the
///   default) a running operation is never cancelled, and a slow older run can finish after a
///   newer one.
///
/// A caller never gets another call's outcome. Latest wins applies among the awaited,
/// latest-wins calls of a group: a run started by another form of `debounce` is neither
/// cancelled nor cancels. Cancellation is cooperative: an overtaken operation stops at its next
/// cancellation check (a `Task.sleep`, a `URLSession` request); work it does before then is
/// still done, so publish what it finds through the value it returns.
///
/// ```swift
/// let hits =
///     try await debounceResult(
///         .milliseconds(300),
///         identifier: "search",
///         latestWins: true
///     ) {
///         try await api.search(text)
///     }
/// ```
///
/// In a view model, publish the value a call returns. A call that was replaced or overtaken
/// throws ``DiscardedCall``, and the newer call publishes instead
/// (<doc:BuildingASearchViewModel> does the same with a ``Debouncer`` of its own):
///
/// ```swift
/// @MainActor final class QuickSearchModel {
///     var results: [String] = []
///
///     func queryChanged(_ query: String) async {
///         do {
///             results = try await debounceResult(
///                 .milliseconds(300), identifier: "search", latestWins: true
///             ) {
///                 try await api.search(query)
///             }
///         } catch is DiscardedCall {
///             // a newer query took over
///         } catch {
///             results = []
///         }
///     }
/// }
/// ```
///
/// - Parameters:
///   - duration: The quiet time that must pass after the latest call. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - actorType: Where the operation runs. Defaults to the main actor.
///   - option: Trailing only (`.default`), leading and trailing (`.runFirst`) or leading only
///     (`.leading`).
///   - maxWait: The longest a burst waits for a run: counted from its first call, then from
///     its latest run. `nil` (the default), zero or negative: no maximum.
///   - latestWins: Whether this call's run, when the engine releases it, cancels the group's
///     latest-wins run still in flight. Defaults to `false`.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     that groups calls when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to run; its value is this call's value.
/// - Returns: The operation's value, when this call is the one that runs.
/// - Throws: The operation's error; ``DiscardedCall`` when the call never ran or was overtaken;
///   `CancellationError` when the caller's task was cancelled before the call ran.
public nonisolated(nonsending) func debounceResult<T: Sendable>(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType = .mainActor,
    option: DebounceOptions = .default,
    maxWait: Duration? = nil,
    latestWins: Bool = false,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> T
) async throws -> T {
    let registry = TempoRegistry.current
    let key = GroupKey(identifier, fileID, line, column)
    return try await awaitTicketedCall(
        AwaitedCallSite(registry: registry, kind: .debounce, key: key), by: actorType,
        latestWins: latestWins, operation: operation
    ) {
        registry.debounce(
            key, duration: duration, option: option, maxWait: maxWait, operation: $0)
    }
}

extension Debouncer {
    /// Debounces an asynchronous, throwing operation, which runs on ``actorType``, and waits for
    /// its outcome.
    ///
    /// Each caller is settled as by
    /// ``debounceResult(_:identifier:by:option:maxWait:latestWins:fileID:line:column:operation:)``:
    /// the call that runs gets the operation's value or error, a replaced or dropped call gets
    /// ``DiscardedCall/notRun`` at once (so does a waiting call when the debouncer is
    /// cancelled), a caller cancelled before its call runs withdraws it and gets
    /// `CancellationError`, and with `latestWins` a run still in flight when a newer one is
    /// released gets ``DiscardedCall/overtaken`` at once, its task cancelled (one not started
    /// yet, its caller's actor busy, never starts). Without `latestWins` a running operation is
    /// never cancelled.
    ///
    /// ```swift
    /// @MainActor final class SearchViewModel {
    ///     private(set) var results: [String] = []
    ///     private(set) var failure: String?
    ///
    ///     private let searcher = Debouncer(.milliseconds(300))
    ///     private let search: @Sendable (String) async throws -> [String]
    ///
    ///     /// In the app: `SearchViewModel(search: api.search)`
    ///     init(search: @escaping @Sendable (String) async throws -> [String]) {
    ///         self.search = search
    ///     }
    ///
    ///     func queryChanged(_ query: String) async {
    ///         do {
    ///             results = try await searcher.result(latestWins: true) { [search] in
    ///                 try await search(query)
    ///             }
    ///             failure = nil
    ///         } catch is DiscardedCall {
    ///             // a newer query took over: its caller publishes
    ///         } catch is CancellationError {
    ///             // the view went away
    ///         } catch {
    ///             failure = "\(error)"
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// <doc:BuildingASearchViewModel> tests this view model on a manual clock.
    ///
    /// - Parameters:
    ///   - latestWins: Whether this call's run, when the engine releases it, cancels the
    ///     debouncer's latest-wins run still in flight. Defaults to `false`.
    ///   - operation: The work to run; its value is this call's value.
    /// - Returns: The operation's value, when this call is the one that runs.
    /// - Throws: The operation's error; ``DiscardedCall`` when the call never ran or was
    ///   overtaken; `CancellationError` when the caller's task was cancelled before it ran.
    public nonisolated(nonsending) func result<T: Sendable>(
        latestWins: Bool = false,
        _ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await awaitTicketedCall(
            AwaitedCallSite(registry: registry, kind: .debounce, key: key), by: actorType,
            latestWins: latestWins, operation: operation
        ) {
            registry.debounce(
                key, duration: duration, option: option, maxWait: maxWait, operation: $0)
        }
    }
}
