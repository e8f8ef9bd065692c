// The loop behind `repeat`: the plan a call makes, the registration and the task, the loop
// itself and the ticks of `.fixedRate`.

/// What a `repeat` call asked for.
struct RepeatPlan: Sendable {
    let interval: Duration
    let mode: RepeatMode
    let limit: Int?
    let startingImmediately: Bool
    let actorType: ActorType
    let onError: ErrorHandler?
    let afterError: RepeatErrorPolicy
}

/// Registers the loop and starts its task. The start instant is read here, at the call, and
/// the first tick is armed here too.
func startRepeat(
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
    // Started inside an operation the engine launched on this (manual) clock, the loop may be
    // awaited there: that operation counts as asleep on the clock until the loop has ended.
    let caller = SettleToken.current(of: clock.engine.host)
    // Running at once: on a manual clock, advancing waits for this first iteration.
    let token = plan.startingImmediately ? clock.engine.settleToken() : nil
    if plan.startingImmediately {
        ticks.holdAdvances(at: start)
    } else {
        ticks.arm(at: first)
    }
    // Parked once the first tick (or the hold) is on the clock, and before the loop's task
    // exists (it unparks at its end): an advance that sees the operation asleep fires the tick.
    caller?.park()
    // Takes the loop out of the registry: at its end, or at once when it is stopped while
    // waiting (so `cancelRepeat` leaves no entry and no timer behind, even on a manual clock
    // that nobody advances). Running it twice does nothing more.
    let end: @Sendable () -> Void = {
        ticks.stop()
        registry.endRunningWork(id)
        if let name = site.identifier {
            NamedRepeats.remove(name, in: registry, ifCurrent: control)
        }
    }
    let task = Task {
        let held = await withTaskCancellationHandler {
            await runLoop(
                plan, start: start, clock: clock, ticks: ticks, token: token, id: id,
                control: control, operation: operation)
        } onCancel: {
            control.stop(wake: false)
        }
        end()
        control.detach()
        // Before the loop's last work ends: the operation that started it runs again.
        caller?.unpark()
        held?.finish()
    }
    control.attach(task, cleanup: end)
    return task
}

/// Thrown inside an iteration whose claim was refused: the loop was stopped before it started.
private struct RepeatStopped: Error {}

/// Thrown out of an iteration whose error was reported and stops the loop (``RepeatErrorPolicy/stop``).
private struct RepeatFailed: Error {}

/// Thrown out of an `.ownedActor` iteration whose error is still to be reported.
private struct IterationFailed: Error {
    let error: any Error
}

/// The loop: wait for the tick, run, arm the next tick. Returns the work token it still holds.
private func runLoop(
    _ plan: RepeatPlan,
    start: Duration,
    clock: HelperClock,
    ticks: TickWaiter,
    token: SettleToken?,
    id: UInt64,
    control: RepeatControl,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) async -> SettleToken? {
    let registry = clock.registry
    var token = token
    var runs = 0
    var tick: Int128 = plan.startingImmediately ? 0 : 1
    if !plan.startingImmediately {
        do { token = try await ticks.wait() } catch { return nil }
    }
    while true {
        registry.updateRunningWork(id, .repeating(runs: runs, nextRunAt: nil))
        do {
            try await SettleToken.$current.withValue(token) {
                try await plan.actorType.run {
                    // The claim is made here, after the hop to the iteration's actor and right
                    // before the operation: a stop that returned first keeps it from starting.
                    guard control.claim() else { throw RepeatStopped() }
                    do {
                        try await operation()
                    } catch let error as CancellationError {
                        throw error
                    } catch let error where plan.actorType == .ownedActor {
                        // Reported below, once the iteration has given up the actor's turn.
                        throw IterationFailed(error: error)
                    } catch {
                        // Reported here, on the iteration's actor, before the iteration ends.
                        await plan.onError?(error)
                        if plan.afterError == .stop { throw RepeatFailed() }
                    }
                }
            }
        } catch let failed as IterationFailed {
            // On the actor but outside the turn (see `ActorType.run(onError:_:)`), before the
            // iteration ends.
            await SettleToken.$current.withValue(token) {
                await TempoActor.report(failed.error, to: plan.onError)
            }
            if plan.afterError == .stop { return token }
        } catch {
            // Stopped before the claim, cancelled, or failed under `.stop`: the loop ends.
            return token
        }
        runs += 1
        // Stopped by name or by a replacement while the iteration ran: it has finished; no
        // other starts.
        guard control.endIteration() else { return token }
        if let limit = plan.limit, runs >= limit { return token }
        let next: Duration
        switch plan.mode {
        case .fixedDelay:
            next = clock.now().adding(plan.interval)
        case .fixedRate:
            tick = max(tick + 1, ticksUntil(clock.now(), start: start, interval: plan.interval))
            next = gridTick(start: start, interval: plan.interval, index: tick)
        }
        registry.updateRunningWork(
            id, .repeating(runs: runs, nextRunAt: clock.registryInstant(next)))
        // A tick that is already due runs now, without a round trip through the clock, but
        // after giving the executor a turn: a loop faster than its iterations never starves it.
        if next <= clock.now() {
            // The clock reads its last instant and the next tick lies past it (it saturated to
            // that instant): it never comes, and the loop ends instead of running for ever.
            if next == .saturatedMax { return token }
            await Task.yield()
            continue
        }
        ticks.arm(at: next)
        ticks.releaseAdvances()
        token?.finish()
        do { token = try await ticks.wait() } catch { return nil }
    }
}

/// `start + index × interval`, saturating.
private func gridTick(start: Duration, interval: Duration, index: Int128) -> Duration {
    start.adding(interval.saturatingMultiplied(by: index))
}

/// The index of the first grid tick at or after `now`.
private func ticksUntil(_ now: Duration, start: Duration, interval: Duration) -> Int128 {
    let elapsed = max(now.subtracting(start), .zero).attoseconds
    let (quotient, remainder) = elapsed.quotientAndRemainder(dividingBy: interval.attoseconds)
    return remainder > 0 ? quotient + 1 : quotient
}
