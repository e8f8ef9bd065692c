/// Why an awaited `debounce` or `throttle` call gives no value of its own: its operation never
/// ran, or, under latest wins, a newer run of its group started before it finished.
///
/// The awaited forms (``debounceResult(_:identifier:by:option:maxWait:latestWins:fileID:line:column:operation:)``,
/// ``throttleResult(_:identifier:by:option:latestWins:fileID:line:column:operation:)``,
/// ``Debouncer/result(latestWins:_:)`` and ``Throttler/result(latestWins:_:)``) settle every
/// caller: the caller whose call runs gets its operation's value or error, and every other
/// caller gets this error, at once, when its fate is decided. It is an error rather than a
/// `nil` so that it can never be taken for a value (the operation may itself return an
/// optional) and so that no caller is handed another call's result; `try?` turns it into `nil`
/// where that is what you want. A caller whose own task is cancelled before its call starts gets
/// `CancellationError` instead.
///
/// ```swift
/// func queryChanged(_ query: String) async {
///     do {
///         let hits = try await debounceResult(
///             .milliseconds(300), identifier: "search"
///         ) {
///             try await api.search(query)
///         }
///         show(hits)
///     } catch is DiscardedCall {
///         // A newer keystroke took over: its caller shows the results.
///     } catch {
///         show(error)
///     }
/// }
/// ```
public enum DiscardedCall: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call never ran: a newer call replaced it (debounce, and a throttle's kept trailing
    /// call), its group dropped it (a closed throttle window, a `.leading` debounce burst), or
    /// its group was cancelled (`cancel()`, ``cancelDebounce(identifier:)``,
    /// ``TempoRegistry/cancelAll()``).
    ///
    /// ```swift
    /// // nil when the call did not run
    /// let hits = try? await searcher.result { try await api.search(query) }
    /// ```
    case notRun
    /// The call ran with latest wins, and a newer run of its group started (was released by the
    /// engine) before it finished: its task was cancelled and whatever it returns or throws is
    /// discarded. Also when the newer run was released while this caller's actor was busy and
    /// before this call's operation started: the operation then never starts.
    ///
    /// ```swift
    /// do {
    ///     show(try await searcher.result(latestWins: true) { try await api.search(query) })
    /// } catch DiscardedCall.overtaken {
    ///     // A newer search is running; its caller shows the results.
    /// }
    /// ```
    case overtaken

    /// What happened, in words.
    ///
    /// ```swift
    /// print(DiscardedCall.notRun)   // "the call never ran (replaced, dropped or cancelled)"
    /// ```
    public var description: String {
        switch self {
        case .notRun:
            return "the call never ran (replaced, dropped or cancelled)"
        case .overtaken:
            return "overtaken: a newer run of the latest-wins group started first"
        }
    }
}
