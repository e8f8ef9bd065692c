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
/// - `times: nil` repeats until the task is cancelled; `times: n` stops after n successful
///   iterations. `startingImmediately: true` runs once at once, then waits; `false` waits first.
/// - Iterations never overlap. `mode` spaces them end-to-start (``RepeatMode/fixedDelay``, the
///   default) or on a fixed grid (``RepeatMode/fixedRate``).
/// - A zero or negative `interval`, or `times <= 0`, finishes without running.
/// - An iteration that throws hands its error to `onError` and stops the loop;
///   `CancellationError` stops it silently.
/// - With an `identifier`, starting a repeat cancels any loop running under the same name (in
///   the same registry) and takes its place; ``cancelRepeat(identifier:)`` stops it by name.
///   An iteration of the old loop that is already running finishes; no new one starts.
/// - Time comes from the current registry's clock, read at the call.
///
/// The loop appears in ``TempoRegistry/snapshot()``, under its identifier or call site, with
/// its runs so far and its next tick, until it ends.
///
/// ```swift
/// let polling = `repeat`(every: .seconds(30), startingImmediately: true, by: .ownedActor) {
///     try await inbox.refresh()
/// }
/// // later
/// polling.cancel()
///
/// `repeat`(every: .seconds(5), identifier: "heartbeat") { try await server.ping() }
/// cancelRepeat(identifier: "heartbeat")
/// ```
@discardableResult
public func `repeat`(
    every interval: Duration = .seconds(1),
    mode: RepeatMode = .fixedDelay,
    times limit: Int? = nil,
    startingImmediately: Bool = false,
    identifier: String? = nil,
    by actorType: ActorType = .mainActor,
    onError: (@Sendable (any Error) -> Void)? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    startRepeat(
        RepeatPlan(
            interval: interval, mode: mode, limit: limit,
            startingImmediately: startingImmediately, actorType: actorType, onError: onError),
        clock: HelperClock(), site: HelperSite(identifier: identifier, fileID, line, column),
        operation: operation)
}

/// ``repeat(every:mode:times:startingImmediately:identifier:by:onError:fileID:line:column:operation:)``
/// on `clock`.
///
/// ```swift
/// let clock = ManualClock()
/// let loop = `repeat`(every: .seconds(1), mode: .fixedRate, by: .taskContext, clock: clock) {
///     ticks.append(clock.now)
/// }
/// ```
@discardableResult
public func `repeat`(
    every interval: Duration = .seconds(1),
    mode: RepeatMode = .fixedDelay,
    times limit: Int? = nil,
    startingImmediately: Bool = false,
    identifier: String? = nil,
    by actorType: ActorType = .mainActor,
    onError: (@Sendable (any Error) -> Void)? = nil,
    clock: some Clock<Duration>,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    startRepeat(
        RepeatPlan(
            interval: interval, mode: mode, limit: limit,
            startingImmediately: startingImmediately, actorType: actorType, onError: onError),
        clock: HelperClock(clock), site: HelperSite(identifier: identifier, fileID, line, column),
        operation: operation)
}

/// Stops the repeat named `identifier` in the current registry; returns whether one was
/// running. Once this returns, no new iteration of it starts.
///
/// ```swift
/// `repeat`(every: .seconds(10), identifier: "autosave") { try await document.save() }
/// cancelRepeat(identifier: "autosave")
/// ```
@discardableResult
public func cancelRepeat(identifier: String) -> Bool {
    TempoRegistry.current.cancelRepeat(identifier: identifier)
}

extension TempoRegistry {
    /// Stops this registry's repeat named `identifier`; returns whether one was running. Once
    /// this returns, no new iteration of it starts.
    ///
    /// ```swift
    /// TempoRegistry.shared.cancelRepeat(identifier: "heartbeat")
    /// ```
    @discardableResult
    public func cancelRepeat(identifier: String) -> Bool {
        NamedRepeats.cancel(identifier, in: self)
    }

    /// Whether a repeat named `identifier` is running in this registry.
    ///
    /// ```swift
    /// if !TempoRegistry.shared.isRepeating(identifier: "heartbeat") { startHeartbeat() }
    /// ```
    public func isRepeating(identifier: String) -> Bool {
        NamedRepeats.contains(identifier, in: self)
    }
}

/// What a `repeat` call asked for.
private struct RepeatPlan: Sendable {
    let interval: Duration
    let mode: RepeatMode
    let limit: Int?
    let startingImmediately: Bool
    let actorType: ActorType
    let onError: (@Sendable (any Error) -> Void)?
}

/// Registers the loop and starts its task. The start instant is read here, at the call, and
/// the first tick is armed here too.
private func startRepeat(
    _ plan: RepeatPlan,
    clock: HelperClock,
    site: HelperSite,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    let registry = clock.registry
    let valid = plan.interval > .zero && (plan.limit.map { $0 > 0 } ?? true)
    let control = RepeatControl()
    if let name = site.identifier {
        NamedRepeats.replace(name, in: registry, with: valid ? control : nil)
    }
    guard valid else { return Task {} }
    let start = clock.now()
    let first = plan.startingImmediately ? start : start.adding(plan.interval)
    let id = site.begin(
        .repeat, in: registry,
        state: .repeating(runs: 0, nextRunAt: clock.registryInstant(first)))
    let ticks = TickWaiter(clock.engine)
    // Running at once: on a manual clock, advancing waits for this first iteration.
    let token = plan.startingImmediately ? clock.engine.beginWork() : nil
    if plan.startingImmediately {
        ticks.holdAdvances(at: start)
    } else {
        ticks.arm(at: first)
    }
    let task = Task {
        let held = await runLoop(
            plan, start: start, clock: clock, ticks: ticks, token: token, id: id,
            control: control, operation: operation)
        ticks.releaseAdvances()
        registry.endWork(id)
        if let name = site.identifier {
            NamedRepeats.remove(name, in: registry, ifCurrent: control)
        }
        held?.finish()
    }
    control.attach(task)
    return task
}

/// The loop: wait for the tick, run, arm the next tick. Returns the work token it still holds.
private func runLoop(
    _ plan: RepeatPlan,
    start: Duration,
    clock: HelperClock,
    ticks: TickWaiter,
    token: WorkToken?,
    id: UInt64,
    control: RepeatControl,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) async -> WorkToken? {
    let registry = clock.registry
    var token = token
    var runs = 0
    var tick: Int128 = plan.startingImmediately ? 0 : 1
    if !plan.startingImmediately {
        do { token = try await ticks.wait() } catch { return nil }
    }
    while true {
        guard control.claimRun() else { return token }
        registry.updateWork(id, .repeating(runs: runs, nextRunAt: nil))
        do {
            try await WorkToken.$current.withValue(token) {
                try await plan.actorType.run(operation)
            }
        } catch is CancellationError {
            return token
        } catch {
            plan.onError?(error)
            return token
        }
        runs += 1
        if let limit = plan.limit, runs >= limit { return token }
        let next: Duration
        switch plan.mode {
        case .fixedDelay:
            next = clock.now().adding(plan.interval)
        case .fixedRate:
            tick = max(tick + 1, ticksUntil(clock.now(), start: start, interval: plan.interval))
            next = gridTick(start: start, interval: plan.interval, index: tick)
        }
        registry.updateWork(id, .repeating(runs: runs, nextRunAt: clock.registryInstant(next)))
        // A tick that is already due runs now, without a round trip through the clock.
        if next <= clock.now() { continue }
        ticks.arm(at: next)
        ticks.releaseAdvances()
        token?.finish()
        do { token = try await ticks.wait() } catch { return nil }
    }
}

/// `start + index × interval`, saturating.
private func gridTick(start: Duration, interval: Duration, index: Int128) -> Duration {
    let (offset, overflow) = interval.attoseconds.multipliedReportingOverflow(by: index)
    return start.adding(overflow ? .saturatedMax : Duration(attoseconds: offset))
}

/// The index of the first grid tick at or after `now`.
private func ticksUntil(_ now: Duration, start: Duration, interval: Duration) -> Int128 {
    let elapsed = max(now.subtracting(start), .zero).attoseconds
    let (quotient, remainder) = elapsed.quotientAndRemainder(dividingBy: interval.attoseconds)
    return remainder > 0 ? quotient + 1 : quotient
}
