/// What `repeat` does after an iteration throws.
///
/// Either way the error is handed to `onError` first, on the iteration's actor, before the
/// loop goes on or ends. A `CancellationError` is not reported, and always ends the loop.
///
/// ```swift
/// // Poll every 30 seconds; a failed poll is logged and the next one runs on time.
/// `repeat`(every: .seconds(30), onError: { log($0) }, afterError: .keepGoing) {
///     try await inbox.refresh()
/// }
/// ```
public enum RepeatErrorPolicy: Sendable, Hashable {
    /// The first error ends the loop, as in Throttler. The default.
    ///
    /// ```swift
    /// `repeat`(every: .seconds(30), afterError: .stop) { try await inbox.refresh() }
    /// ```
    case stop
    /// The loop goes on: the next iteration waits for its tick as after a successful one. A
    /// failed iteration counts toward `times`.
    ///
    /// ```swift
    /// `repeat`(every: .seconds(30), afterError: .keepGoing) { try await inbox.refresh() }
    /// ```
    case keepGoing
}
