/// How `repeat` spaces its iterations.
///
/// ```swift
/// `repeat`(every: .seconds(1), mode: .fixedRate) { await meter.sample() }
/// ```
public enum RepeatMode: Sendable, Hashable {
    /// The next wait starts when an iteration ends: iterations are `interval` apart from end to
    /// start, so a slow iteration pushes every later one back. The default.
    ///
    /// ```swift
    /// // a 300 ms iteration every second: runs at 1 s, 2.3 s, 3.6 s, ...
    /// `repeat`(every: .seconds(1), mode: .fixedDelay) { try await sync() }
    /// ```
    case fixedDelay
    /// Iterations start on the grid `start + n × interval`, `start` being the call. An
    /// iteration that overruns one or more ticks makes the loop skip them: the next iteration
    /// starts at the first tick at or after the overrun's end, never several back to back.
    /// Ticks are computed from `start`, not from the previous run, so the loop never drifts.
    ///
    /// ```swift
    /// // a 300 ms iteration every second: runs at 1 s, 2 s, 3 s, ...
    /// `repeat`(every: .seconds(1), mode: .fixedRate) { try await sync() }
    /// ```
    case fixedRate
}

/// Runs `operation` repeatedly, every `interval`, and returns the task that owns the loop:
/// cancel it to stop.
///
/// - `times: nil` repeats until the task is cancelled; `times: n` stops after n iterations.
///   `startingImmediately: true` runs once at once, then waits; `false` waits first.
/// - Iterations never overlap. `mode` spaces them end-to-start (``RepeatMode/fixedDelay``, the
///   default) or on a fixed grid (``RepeatMode/fixedRate``).
/// - A zero or negative `interval`, or `times <= 0`, finishes without running.
/// - An iteration that throws hands its error to `onError`, on the iteration's actor, and stops
///   the loop; with `afterError: .keepGoing` (``RepeatErrorPolicy``) the loop goes on with its
///   next tick instead, and the failed iteration counts toward `times`. `CancellationError` is
///   not reported and always stops it. A handler written in main-actor code runs on the main
///   actor (see ``ActorType``).
/// - With an `identifier`, starting a repeat stops any loop running under the same name (in
///   the same registry) and takes its place; ``cancelRepeat(identifier:)`` stops it by name.
///   Neither cancels the old loop's iteration that is already running: it finishes (its
///   `Task.sleep` is not interrupted), then the old loop ends.
/// - Cancelling the returned task stops the loop *and* cancels the iteration that is running,
///   as Swift cancellation does: its `Task.sleep` throws `CancellationError`, which ends the
///   loop silently.
/// - Once any of these returns, no new iteration starts. Each iteration claims its run on its
///   actor, after the hop to it, right before `operation` starts; a stopped loop refuses the
///   claim. (A stop made on another thread at the same moment as a claim is ordered by a
///   lock: the claim that came first runs.)
/// - Every iteration gives the executor a turn first: when the next tick is already due (an
///   interval shorter than the iteration), the loop calls `Task.yield()` before running it.
/// - Time comes from the current registry's clock, read at the call.
///
/// The loop appears in ``TempoRegistry/snapshot()``, under its identifier or call site, with
/// its runs so far and its next tick, until it ends. A loop stopped while it waits for a tick
/// leaves the snapshot, ``TempoRegistry/liveKeyCount`` and the clock's timers before the
/// stopping call returns; one stopped during an iteration leaves them when that iteration
/// returns.
///
/// ```swift
/// let polling = `repeat`(
///     every: .seconds(30),
///     startingImmediately: true,
///     by: .ownedActor
/// ) {
///     try await inbox.refresh()
/// }
/// // later
/// polling.cancel()
/// ```
///
/// A loop with an identifier is stopped by its name:
///
/// ```swift
/// `repeat`(every: .seconds(5), identifier: "heartbeat") {
///     try await server.ping()
/// }
/// cancelRepeat(identifier: "heartbeat")
/// ```
///
/// A poller that survives a bad network reports each error and keeps its schedule:
///
/// ```swift
/// `repeat`(every: .seconds(30), onError: { log($0) }, afterError: .keepGoing) {
///     try await inbox.refresh()
/// }
/// ```
///
/// Pass `clock:` to measure on another clock: `nil`, the default, is the current registry's clock.
///
/// ```swift
/// let clock = ManualClock()
/// let loop = `repeat`(
///     every: .seconds(1), mode: .fixedRate, by: .taskContext, clock: clock
/// ) {
///     ticks.append(clock.now)
/// }
/// ```
///
/// - Parameters:
///   - interval: The time between iterations: from one's end to the next's start with
///     `.fixedDelay`, between starts with `.fixedRate`. Defaults to 1 second; zero or negative
///     runs nothing.
///   - mode: How iterations are spaced: ``RepeatMode/fixedDelay`` (the default) or
///     ``RepeatMode/fixedRate``.
///   - limit: How many iterations to run before the loop ends (with `afterError: .keepGoing`
///     a failed one counts too); `nil` (the default) repeats until the loop is stopped, zero or
///     negative runs nothing.
///   - startingImmediately: Whether the first iteration runs at once (`true`) or after
///     `interval` (`false`, the default).
///   - identifier: A name to stop the loop by with ``cancelRepeat(identifier:)``; a new loop
///     under the same name replaces it. `nil` (the default): no name; the snapshot lists the
///     loop under its call site.
///   - actorType: Where each iteration runs, isolated to that actor across its `await`s.
///     Defaults to the main actor.
///   - onError: Called with the error of an iteration that throws (not `CancellationError`),
///     on the iteration's actor and awaited before the loop goes on or ends; a handler written
///     in main-actor code runs on the main actor. `nil` (the default): errors are not reported.
///   - afterError: What the loop does after an iteration throws: ``RepeatErrorPolicy/stop``
///     (the default) ends it, ``RepeatErrorPolicy/keepGoing`` goes on with the next tick.
///   - clock: The clock to wait on; `nil` (the default) is the current registry's clock.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists a loop without `identifier`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: One iteration.
/// - Returns: The task that runs the loop, finished once the loop has ended. Cancel it to stop
///   the loop and cancel the running iteration.
@discardableResult
public func `repeat`(
    every interval: Duration = .seconds(1),
    mode: RepeatMode = .fixedDelay,
    times limit: Int? = nil,
    startingImmediately: Bool = false,
    identifier: String? = nil,
    by actorType: ActorType = .mainActor,
    @_inheritActorContext onError: (nonisolated(nonsending) @Sendable (any Error) async -> Void)? =
        nil,
    afterError: RepeatErrorPolicy = .stop,
    clock: (any Clock<Duration>)? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    startRepeat(
        RepeatPlan(
            interval: interval, mode: mode, limit: limit,
            startingImmediately: startingImmediately, actorType: actorType, onError: onError,
            afterError: afterError),
        clock: HelperClock(clock), site: HelperSite(identifier: identifier, fileID, line, column),
        operation: operation)
}

/// Stops the repeat named `identifier` in the current registry; returns whether one was
/// running. Once this returns, no new iteration of it starts. An iteration that is running is
/// not cancelled: it finishes, then the loop ends. A loop that was waiting for its next tick
/// has already left the registry when this returns.
///
/// ```swift
/// `repeat`(every: .seconds(10), identifier: "autosave") { try await document.save() }
/// cancelRepeat(identifier: "autosave")
/// ```
///
/// - Parameter identifier: The `identifier` the loop was started with.
/// - Returns: `true` when a loop of that name was running (it is now stopped), `false` when
///   none was.
@discardableResult
public func cancelRepeat(identifier: String) -> Bool {
    TempoRegistry.current.cancelRepeat(identifier: identifier)
}

extension TempoRegistry {
    /// Stops this registry's repeat named `identifier`; returns whether one was running. Once
    /// this returns, no new iteration of it starts; a running iteration finishes uncancelled.
    ///
    /// ```swift
    /// TempoRegistry.shared.cancelRepeat(identifier: "heartbeat")
    /// ```
    ///
    /// - Parameter identifier: The `identifier` the loop was started with.
    /// - Returns: `true` when a loop of that name was running (it is now stopped), `false` when
    ///   none was.
    @discardableResult
    public func cancelRepeat(identifier: String) -> Bool {
        NamedRepeats.cancel(identifier, in: self)
    }

    /// Whether a repeat named `identifier` is running in this registry.
    ///
    /// ```swift
    /// if !TempoRegistry.shared.isRepeating(identifier: "heartbeat") { startHeartbeat() }
    /// ```
    ///
    /// - Parameter identifier: The `identifier` a loop was started with.
    /// - Returns: `true` while a loop of that name runs: from its start until it ends or is
    ///   stopped (a new loop of that name takes its place and keeps the answer `true`).
    public func isRepeating(identifier: String) -> Bool {
        NamedRepeats.contains(identifier, in: self)
    }
}
