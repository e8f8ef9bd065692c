import Synchronization

/// The link between one call of a `Task`-returning overload and the task it returned.
///
/// The engine decides (``grant(_:)`` or ``close()``); the task waits (``wait()``) and then, on
/// the operation's actor, asks to ``start()``. Cancelling the task closes the ticket unless the
/// operation already started, so once `cancel()` returns the operation can no longer start,
/// even if the engine had granted it and it was waiting for its actor.
///
/// The ticket of an awaited latest-wins call carries its ``LatestClaim``: the grant itself
/// makes the run its group's run in flight, in the order the engine grants, whatever the
/// caller's actor is doing.
final class Ticket: Sendable {
    private enum State {
        case undecided
        case waiting(CheckedContinuation<Void, Never>)
        case granted(SettleToken?)
        case started
        case closed
    }

    private let state = Lock<State>(.undecided)
    /// Removes the ticket's call from the engine; set once when the call is registered. It is
    /// handed the ticket rather than capturing it, so no reference cycle keeps a ticket alive.
    private let withdrawal = Lock<(@Sendable (Ticket) -> Void)?>(nil)
    /// The latest-wins run this ticket releases, if it is an awaited latest-wins call.
    private let latest: LatestClaim?
    /// The work token of the task that made the call, when that task runs an operation the
    /// engine launched on the same deterministic clock, and whether it is parked: parked from
    /// just after the call is registered until the call's outcome is handed over, or the call
    /// will never run (see ``holdCaller(of:)`` and ``parkCaller()``).
    private let caller = Lock<(token: SettleToken, parked: Bool)?>(nil)

    init() {
        latest = nil
    }

    init(latest: LatestClaim) {
        self.latest = latest
    }

    /// Notes the calling task's work token, when it carries one of `host` (it runs an operation
    /// the engine launched there): the task may be waiting for this call's outcome, which only
    /// an advance of `host` brings, and an advance that waited for the task would wait for
    /// itself. Called before the call is registered; ``parkCaller()``, called once it is,
    /// counts the task as asleep.
    func holdCaller(of host: (any DeterministicClock)?) {
        guard let token = SettleToken.current(of: host) else { return }
        caller.withLock { $0 = (token, false) }
    }

    /// Counts the noted calling task as asleep on its clock, unless the call was already
    /// decided. Called after the call is registered, so its timer is on the clock first: an
    /// advance that sees the task asleep sees that timer too, and fires it when it comes due.
    func parkCaller() {
        caller.withLock { caller in
            guard let held = caller, !held.parked else { return }
            held.token.park()
            caller = (held.token, true)
        }
    }

    /// The call's outcome is handed over, or it will never run: the calling task counts as
    /// running again. Called before the work that decided it ends; later calls do nothing.
    func releaseCaller() {
        caller.withLock { caller -> SettleToken? in
            defer { caller = nil }
            return caller?.parked == true ? caller?.token : nil
        }?.unpark()
    }

    func setWithdrawal(_ withdraw: @escaping @Sendable (Ticket) -> Void) {
        withdrawal.withLock { $0 = withdraw }
    }

    /// The engine says: run now. For a latest-wins call this is the run's start: it overtakes
    /// its group's run in flight here, before the caller's task is resumed.
    func grant(_ token: SettleToken?) {
        var overtaken: (any LatestRun)?
        let (waiter, unused) = state.withLock {
            state -> (CheckedContinuation<Void, Never>?, SettleToken?) in
            let waiter: CheckedContinuation<Void, Never>?
            switch state {
            case .undecided: waiter = nil
            case .waiting(let continuation): waiter = continuation
            case .granted, .started, .closed: return (nil, token)
            }
            state = .granted(token)
            // Under this lock: the caller cannot see the grant, run and end its run before
            // the run is written as its group's run in flight.
            if let latest { overtaken = LatestRuns.begin(latest) }
            return (waiter, nil)
        }
        unused?.finish()
        // Outside the lock: cancelling runs the task's cancellation handlers.
        overtaken?.cancelRun()
        waiter?.resume()
    }

    /// The engine says: this call will never run (it was replaced, dropped or cancelled). A
    /// granted call is closed only by its task's cancellation; a latest-wins run then leaves
    /// its group's table (the run it overtook stays overtaken).
    func close() {
        let (waiter, token, wasGranted) = state.withLock {
            state -> (CheckedContinuation<Void, Never>?, SettleToken?, Bool) in
            switch state {
            case .undecided:
                state = .closed
                return (nil, nil, false)
            case .waiting(let continuation):
                state = .closed
                return (continuation, nil, false)
            case .granted(let token):
                state = .closed
                return (nil, token, true)
            case .started, .closed:
                return (nil, nil, false)
            }
        }
        if wasGranted, let latest { LatestRuns.end(latest) }
        releaseCaller()
        token?.finish()
        waiter?.resume()
    }

    /// The task was cancelled: close the ticket and take the call out of the engine.
    func cancel() {
        close()
        withdrawal.withLock { withdrawal in
            defer { withdrawal = nil }
            return withdrawal
        }?(self)
    }

    /// Waits until the engine has decided, on the caller's executor: a call already decided (a
    /// dropped awaited call) costs no hop.
    nonisolated(nonsending) func wait() async {
        // Decided already (a call the engine dropped or ran at once): no suspension at all.
        let decided = state.withLock { state -> Bool in
            if case .undecided = state { return false }
            return true
        }
        if decided { return }
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                switch state {
                case .undecided:
                    state = .waiting(continuation)
                    return false
                case .waiting:
                    preconditionFailure("a ticket has one waiter")
                case .granted, .started, .closed:
                    return true
                }
            }
            if ready { continuation.resume() }
        }
    }

    /// The work token of a ticket the engine said run, while nobody has taken that back; `nil`
    /// otherwise. A hint, read before hopping to the operation's actor so that a dropped call
    /// costs no hop: only ``start()``, on the actor, decides.
    var grantedToken: SettleToken?? {
        state.withLock { state -> SettleToken?? in
            if case .granted(let token) = state { return .some(token) }
            return .none
        }
    }

    /// Claims the right to run. Returns `nil` when the call must not run, else the work token
    /// (itself optional) to finish when the operation ends. Called on the operation's actor,
    /// right before the operation: a cancel that returned before this claim stops the call.
    func start() -> SettleToken?? {
        state.withLock { state -> SettleToken?? in
            guard case .granted(let token) = state else { return .none }
            state = .started
            return .some(token)
        }
    }
}

/// The body of every `Task` a `Task`-returning helper gives back: wait for the engine's verdict,
/// then, on the operation's actor, claim the right to run and run it, sending errors to
/// `onError`.
func runWhenGranted(
    _ ticket: Ticket,
    by actorType: ActorType,
    onError: ErrorHandler?,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    Task {
        // Cancelling the task closes the ticket up to the claim (and does nothing after it).
        await withTaskCancellationHandler {
            await ticket.wait()
            // Bound out here: a closure handed to `withValue` inside `run` would leave the actor.
            guard let token = ticket.grantedToken else { return ticket.releaseCaller() }
            await SettleToken.$current.withValue(token) {
                await actorType.run(onError: onError) {
                    // The claim is made here, on the actor: a cancel that returned first wins.
                    guard ticket.start() != nil else { return }
                    try await operation()
                }
            }
            // The task has ended: a caller awaiting its value runs again, before this work
            // ends. After `run` has given up the actor's turn (see `TempoActor.passTurn()`).
            ticket.releaseCaller()
            token?.finish()
        } onCancel: {
            ticket.cancel()
        }
    }
}

/// What every `Task`-returning overload does: for a duration of zero or less, `register` hands
/// the engine the operation itself, which it runs at once (and reports, as it reports every
/// run), returning the task that runs it; otherwise a ticket task, whose call `register` hands to
/// the engine before the task is returned (so the call is applied in call order, stamped at the
/// call).
func makeTicketedTask(
    after duration: Duration,
    in registry: TempoRegistry,
    by actorType: ActorType,
    onError: ErrorHandler?,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void,
    register: (Operation) -> Task<Void, Never>?
) -> Task<Void, Never> {
    guard duration > .zero else {
        // The engine runs an asynchronous operation of no duration at once and returns its
        // task: never `nil` here.
        return register(.async(AsyncOperation(operation, on: actorType, onError: onError)))
            ?? appliedCallTask
    }
    let ticket = Ticket()
    // A task made inside an operation of the same manual clock may be awaited there: the
    // operation counts as asleep until the task has run or will never run.
    ticket.holdCaller(of: registry.clock.host)
    let task = runWhenGranted(ticket, by: actorType, onError: onError, operation: operation)
    _ = register(.ticket(ticket))
    ticket.parkCaller()
    return task
}
