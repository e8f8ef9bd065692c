/// The error `timeout` throws when its time runs out before the operation finishes.
///
/// ```swift
/// do {
///     _ = try await timeout(.seconds(2)) { try await api.slowReport() }
/// } catch TimeoutError.timedOut(let limit) {
///     print("gave up after \(limit)")
/// }
/// ```
public enum TimeoutError: Error, Equatable, Hashable, Sendable {
    /// The operation did not finish within the associated duration (for the deadline form,
    /// the time from the call to the deadline).
    ///
    /// ```swift
    /// try await timeout(.milliseconds(500)) { try await slow() }
    /// // throws TimeoutError.timedOut(.milliseconds(500)) if slow() takes longer
    /// ```
    case timedOut(Duration)
}

/// Runs `operation` with a time limit on the current registry's clock.
///
/// Returns the operation's value, or rethrows its error, whichever comes first. If `duration`
/// passes first, cancels the operation, waits for it to finish unwinding, and throws
/// ``TimeoutError/timedOut(_:)`` with `duration`; a late result of an operation that ignores
/// cancellation is discarded. A `duration` of zero or less throws at once without running the
/// operation. Cancelling the caller throws `CancellationError`, unless the deadline passed
/// first: a caller cancelled while a timed-out operation unwinds gets the timeout. Any duration
/// is safe:
/// `.seconds(Int64.max)` waits until the operation finishes or the caller is cancelled.
///
/// ```swift
/// let page = try await timeout(
///     .seconds(5)
/// ) {
///     try await client.fetch(url)
/// }
/// ```
///
/// The operation runs in a child task, so that it can be cancelled at the deadline while the
/// caller goes on. It runs on the caller's actor, as `retry`'s attempts do: written in
/// main-actor code it is isolated to the main actor and may update its state, and inside an
/// actor's method it is isolated to that actor when it uses `self`. Written in code isolated
/// to no actor, it runs on the global executor; to run it there from main-actor code (work
/// that must not hold the main actor), mark the closure `@concurrent`. An operation still
/// waiting for its actor (the actor busy) when the deadline passes or the caller is cancelled
/// never starts.
///
/// ```swift
/// @MainActor final class ReportModel {
///     var attempts = 0
///     func refresh() async throws {
///         try await timeout(.seconds(1)) { self.attempts += 1 }
///     }
/// }
/// ```
///
/// The timeout appears in ``TempoRegistry/snapshot()`` under its call site, with its deadline,
/// while it runs.
///
/// On a ``TempoTesting/ManualClock``, the deadline is not the operation asleep: inside an
/// operation the engine launched, or in a task started with
/// ``TempoTesting/ManualClock/start(fileID:line:_:)``, an advance waits for the operation
/// unless it itself sleeps on the clock, and an advance that reaches the deadline returns once
/// that caller has the error. A caller in a plain `Task` gets the error soon after the advance
/// returns: await its value.
///
/// Pass `clock:` to measure on another clock: `nil`, the default, is the current registry's clock.
///
/// ```swift
/// let clock = ManualClock()
/// let task = Task { try await timeout(.seconds(1), clock: clock) { try await work() } }
/// await clock.waitForSleepers(1)
/// // The task throws TimeoutError.timedOut(.seconds(1))
/// await clock.advance(by: .seconds(1))
/// ```
///
/// - Parameters:
///   - duration: The time limit, from the call.
///   - clock: The clock to measure on; `nil` (the default) is the current registry's clock.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the timeout.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to race against the clock, in a child task, on the caller's actor
///     (see above).
/// - Returns: The operation's value, when it finishes first.
/// - Throws: ``TimeoutError/timedOut(_:)`` carrying `duration` when the time runs out first
///   (at once for zero or less); the operation's own error when it fails first;
///   `CancellationError` when the caller is cancelled.
public func timeout<Value: Sendable>(
    _ duration: Duration,
    clock: (any Clock<Duration>)? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    @_inheritActorContext operation: @escaping @isolated(any) @Sendable () async throws -> Value
) async throws -> Value {
    let clock = HelperClock(clock)
    return try await runTimeout(
        deadline: clock.now().adding(duration), limit: duration, clock: clock,
        site: HelperSite(fileID, line, column), operation: operation)
}

/// Runs `operation` until `deadline`, an instant of `clock` (by default `ContinuousClock`).
///
/// As ``timeout(_:clock:fileID:line:column:operation:)``; the error carries the time from the call
/// to the deadline. A deadline already reached throws at once without running the operation.
/// Use it to share one deadline between several steps:
///
/// ```swift
/// let deadline = ContinuousClock.now
///     .advanced(by: .seconds(10))
/// let token = try await timeout(
///     at: deadline
/// ) {
///     try await auth.login()
/// }
/// let feed = try await timeout(
///     at: deadline
/// ) {
///     try await api.feed(token)
/// }
/// ```
///
/// - Parameters:
///   - deadline: The instant of `clock` by which the operation must finish.
///   - clock: The clock `deadline` belongs to, and the one waited on. Defaults to
///     `ContinuousClock`, whatever registry is current.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the timeout.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to race against the clock, in a child task, on the caller's actor
///     (see above).
/// - Returns: The operation's value, when it finishes first.
/// - Throws: ``TimeoutError/timedOut(_:)`` carrying the time from the call to `deadline` when
///   the deadline comes first (at once when it has already passed); the operation's own error
///   when it fails first; `CancellationError` when the caller is cancelled.
public func timeout<C: Clock, Value: Sendable>(
    at deadline: C.Instant,
    clock: C = ContinuousClock(),
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    @_inheritActorContext operation: @escaping @isolated(any) @Sendable () async throws -> Value
) async throws -> Value where C.Duration == Duration {
    let helper = HelperClock(clock)
    // The engine clock's origin is `clock.now` read just now, so this offset is the time left.
    let end = clock.now.duration(to: deadline)
    return try await runTimeout(
        deadline: helper.now().adding(end), limit: end, clock: helper,
        site: HelperSite(fileID, line, column), operation: operation)
}

/// How the race between the operation and the deadline ended.
private enum TimeoutOutcome<Value: Sendable>: Sendable {
    case finished(Result<Value, any Error>)
    case deadline
    case cancelled
}

/// The race behind every overload: `deadline` is an instant of `clock`, `limit` what the error
/// reports.
private func runTimeout<Value: Sendable>(
    deadline: Duration,
    limit: Duration,
    clock: HelperClock,
    site: HelperSite,
    operation: @escaping @isolated(any) @Sendable () async throws -> Value
) async throws -> Value {
    let registry = clock.registry
    guard limit > .zero else {
        site.report(.timeout, .timedOut(after: limit), in: registry)
        throw TimeoutError.timedOut(limit)
    }
    try Task.checkCancellation()
    let id = site.begin(
        .timeout, in: registry, state: .timeout(deadline: clock.registryInstant(deadline)))
    defer { registry.endRunningWork(id) }
    let gate = StartGate()
    let result = await withTaskGroup(of: TimeoutOutcome<Value>.self) {
        group -> Result<Value, any Error> in
        group.addTask {
            do {
                let value = try await startOnItsActor(operation.isolation, gate: gate) {
                    try await operation()
                }
                return .finished(.success(value))
            } catch is NotStarted {
                return .deadline  // the deadline closed the gate first
            } catch {
                return .finished(.failure(error))
            }
        }
        // On a manual clock the deadline is work of its own, not the operation's: asleep while
        // it waits, so it never makes the operation count as asleep, and awake from the moment
        // an advance reaches it until the operation is cancelled, so that advance waits for
        // the timeout to take effect.
        let deadlineWork = clock.engine.settleToken()
        group.addTask {
            do {
                try await SettleToken.$current.withValue(deadlineWork) {
                    try await clock.sleep(until: deadline)
                }
                gate.close()  // an operation still waiting for its actor never starts
                return .deadline
            } catch {
                return .cancelled
            }
        }
        let first = await group.next() ?? .cancelled
        // Cancel the loser; leaving the closure waits for it to finish unwinding. An operation
        // asleep on the clock is awake again once this returns.
        group.cancelAll()
        deadlineWork?.finish()
        switch first {
        case .finished(let result):
            return Task.isCancelled ? .failure(CancellationError()) : result
        case .deadline:
            site.report(.timeout, .timedOut(after: limit), in: registry)
            return .failure(TimeoutError.timedOut(limit))
        case .cancelled:
            return .failure(CancellationError())
        }
    }
    return try result.get()
}
