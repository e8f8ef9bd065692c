/// Runs `operation`, and starts another attempt of it each time `delay` passes with no attempt
/// succeeded, up to `maxAttempts` attempts in all; returns the first success.
///
/// The first attempt starts at once. When `delay` passes with no success, the next attempt
/// starts alongside the ones in flight, and so on until `maxAttempts` have started. An attempt
/// that fails starts the next one at once, without waiting for the delay (the next hedge is
/// then due `delay` after that start). The first attempt to succeed wins: its value is
/// returned, and every other attempt is cancelled and awaited first, so no attempt outlives
/// the call (an attempt that ignores cancellation holds the call until it ends). Once every
/// attempt has failed, the call throws ``HedgingError/allAttemptsFailed(_:)`` with all their
/// errors, in the order the attempts started. Cancelling the caller cancels every attempt,
/// awaits them, and throws `CancellationError`.
///
/// `operation` is told its attempt number, 1 for the first. Attempts run in child tasks of the
/// caller's task, concurrently, on the caller's actor, as `retry`'s attempts do: written in
/// main-actor code they are isolated to the main actor (and take turns on it at their
/// `await`s), inside an actor's method they are isolated to that actor when they use `self`,
/// and in code isolated to no actor they run on the global executor (mark the closure
/// `@concurrent` to run them there from actor code). An attempt still waiting for its actor
/// when the call is decided or cancelled never starts. The delay is a timer on
/// the current registry's clock, so a ``TempoTesting/ManualClock`` drives it. The call appears
/// in ``TempoRegistry/snapshot()`` under its call site or `identifier`, with the attempts
/// started, those in flight and when the next hedge is due
/// (``TempoSnapshot/State/hedge(attemptsStarted:inFlight:nextHedgeAt:)``).
/// Called inside an operation that a manual clock's timer started, the caller counts as asleep
/// on that clock while it waits for its attempts, so an advance fires the hedge timer.
///
/// ```swift
/// // A read from a replica set: if
/// // the first read takes more than
/// // 50 ms, ask again.
/// let user = try await hedge(
///     maxAttempts: 2,
///     after: .milliseconds(50)
/// ) { attempt in
///     try await api.user(id)
/// }
/// ```
///
/// - A `delay` of zero or less starts every attempt at once.
/// - Any `delay` is safe: `.seconds(Int64.max)` never hedges on time, only after failures.
/// - `maxAttempts` of 1 runs the operation once. Zero or less, or more than 1,000 (each
///   attempt is a task and a request, and with no delay they all start at once), throws
///   ``HedgingError/invalidAttemptCount(_:)`` without running it.
/// - An attempt that throws `CancellationError` while the caller is not cancelled counts as a
///   failed attempt; its error is kept like any other.
///
/// - Parameters:
///   - maxAttempts: How many attempts in all, the first included: 1 to 1,000. Defaults
///     to 2.
///   - delay: How long to wait for a success before starting the next attempt.
///   - identifier: The name under which ``TempoRegistry/snapshot()`` lists the call; `nil`
///     (the default) lists it under its call site.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the call when `identifier` is `nil`.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: One attempt, on the caller's actor (see above); it receives the attempt
///     number, starting at 1.
/// - Returns: The value of the first attempt that succeeds.
/// - Throws: ``HedgingError/allAttemptsFailed(_:)`` when every attempt failed;
///   `CancellationError` when the caller is cancelled; ``HedgingError/invalidAttemptCount(_:)``
///   when `maxAttempts` is not in 1...1,000.
public func hedge<Value: Sendable>(
    maxAttempts: Int = 2,
    after delay: Duration,
    identifier: String? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    @_inheritActorContext operation:
        @escaping @isolated(any) @Sendable (_ attempt: Int) async throws -> Value
) async throws -> Value {
    guard (1...1_000).contains(maxAttempts) else {
        throw HedgingError.invalidAttemptCount(maxAttempts)
    }
    try Task.checkCancellation()
    return try await runHedge(
        plan: HedgePlan(maxAttempts: maxAttempts, delay: delay), registry: .current,
        site: HelperSite(identifier: identifier, fileID, line, column), operation: operation)
}

/// The race behind `hedge`, in the caller's task: attempts in child tasks of one task group,
/// the delay as one timer of the registry, both reporting through one mailbox.
private func runHedge<Value: Sendable>(
    plan: HedgePlan,
    registry: TempoRegistry,
    site: HelperSite,
    operation: @escaping @isolated(any) @Sendable (Int) async throws -> Value
) async throws -> Value {
    var plan = plan
    let clock = registry.clock
    let mailbox = HedgeMailbox<Value>()
    // Closed by the first attempt to succeed: an attempt queued behind it never starts.
    let gate = StartGate()
    // The caller's own work token, when it runs an operation the engine launched on this
    // (manual) clock: parked while it waits for the attempts and the hedge timer.
    let caller = SettleToken.current(of: clock.host)
    let first = plan.begin(at: clock.now())
    let id = site.begin(.hedge, in: registry, state: plan.snapshotState)
    defer { registry.endRunningWork(id) }
    let result = await withTaskCancellationHandler {
        await withTaskGroup(of: Void.self) { group -> Result<Value, any Error> in
            var timer: TimerRef?
            var generation: UInt64 = 0
            // Starts `attempts`, then arms the timer for the next hedge, if one is left.
            func start(_ attempts: ClosedRange<Int>) {
                for attempt in attempts {
                    if attempt > 1 {
                        site.report(.hedge, .hedgeStarted(attempt: attempt), in: registry)
                    }
                    let token = clock.settleToken()
                    group.addTask { await runAttempt(attempt, token, mailbox, gate, operation) }
                }
                timer?.cancel()
                timer = nil
                guard let due = plan.nextHedgeAt else { return }
                generation &+= 1
                let armed = generation
                timer = clock.startTimer(at: due) { _ in
                    mailbox.post(.hedgeDue(generation: armed, clock.settleToken()))
                    return nil
                }
            }
            start(first)
            var outcome: Result<Value, any Error>?
            // The token of the event that decided the call, finished once the losers are
            // cancelled, so that a manual clock's advance waits for them to unwind.
            var deciding: SettleToken?
            while case .none = outcome {
                let event = await mailbox.next(parking: caller)
                // A cancelled caller's attempts may report their end before the cancellation
                // itself does: they are not failures, and start nothing.
                if Task.isCancelled {
                    outcome = .failure(CancellationError())
                    deciding = event.token
                    break
                }
                switch event {
                case .cancelled:
                    outcome = .failure(CancellationError())
                case .hedgeDue(let armed, let token):
                    if armed == generation, let attempts = plan.hedgeDue(at: clock.now()) {
                        start(attempts)
                        registry.updateRunningWork(id, plan.snapshotState)
                    }
                    token?.finish()
                case .finished(let attempt, .success(let value), let token):
                    site.report(.hedge, .hedgeWon(attempt: attempt), in: registry)
                    outcome = .success(value)
                    deciding = token
                case .finished(let attempt, .failure(let error), let token):
                    switch plan.failed(attempt, error, at: clock.now()) {
                    case .start(let attempts): start(attempts)
                    case .wait: break
                    case .allFailed(let errors):
                        site.report(.hedge, .hedgeFailed(attempts: errors.count), in: registry)
                        outcome = .failure(HedgingError.allAttemptsFailed(errors))
                    }
                    registry.updateRunningWork(id, plan.snapshotState)
                    if case .none = outcome { token?.finish() } else { deciding = token }
                }
            }
            timer?.cancel()
            mailbox.close()
            group.cancelAll()
            deciding?.finish()
            await group.waitForAll()
            return outcome ?? .failure(CancellationError())
        }
    } onCancel: {
        mailbox.post(.cancelled)
    }
    if Task.isCancelled { throw CancellationError() }
    return try result.get()
}

/// One attempt, in its child task: its outcome goes to the mailbox with its settle token.
private func runAttempt<Value: Sendable>(
    _ attempt: Int,
    _ token: SettleToken?,
    _ mailbox: HedgeMailbox<Value>,
    _ gate: StartGate,
    _ operation: @escaping @isolated(any) @Sendable (Int) async throws -> Value
) async {
    func run() async {
        let result: Result<Value, any Error>
        do {
            result = .success(
                try await startOnItsActor(operation.isolation, gate: gate) {
                    try await operation(attempt)
                })
        } catch is NotStarted {
            // Another attempt succeeded first, and reports it: this one neither ran nor failed.
            token?.finish()
            return
        } catch {
            result = .failure(error)
        }
        mailbox.post(.finished(attempt: attempt, result, token))
    }
    guard let token else { return await run() }
    await SettleToken.$current.withValue(token) { await run() }
}

extension HedgePlan {
    /// The call as ``TempoRegistry/snapshot()`` shows it.
    var snapshotState: TempoSnapshot.State {
        .hedge(attemptsStarted: started, inFlight: inFlight, nextHedgeAt: nextHedgeAt)
    }
}
