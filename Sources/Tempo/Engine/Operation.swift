import Synchronization

/// An operation waiting in the engine. Synchronous operations are stored as they are, and so
/// are the asynchronous ones of the free `debounce` and `throttle` (``AsyncOperation``); the
/// other `Task`-returning calls store a ``Ticket`` that their task waits on, so the engine only
/// tells that task whether, and when, to run.
enum Operation: Sendable {
    case sync(@Sendable () -> Void, ActorType)
    case main(@MainActor @Sendable () -> Void)
    case ticket(Ticket)
    case async(AsyncOperation)

    /// Runs the operation now, or hands it to its actor. Never blocks on another actor.
    ///
    /// Tasks started here never inherit the timer runner's ``TimerDriver/isRunner`` flag, so
    /// code in an operation sees the flag of wherever it really runs.
    func launch(_ clock: EngineClock) {
        if TimerDriver.isRunner {
            TimerDriver.$isRunner.withValue(false) { launch(clock, onRunner: true) }
        } else {
            launch(clock, onRunner: false)
        }
    }

    private func launch(_ clock: EngineClock, onRunner: Bool) {
        switch self {
        case .sync(let operation, .taskContext):
            // In the caller (a leading call) it runs right here. On a timer runner it gets a
            // task of its own, so a slow operation never holds up other timers.
            if onRunner {
                Task { operation() }
            } else {
                operation()
            }
        case .sync(let operation, .mainActor):
            let token = clock.beginWork()
            Task { @MainActor in
                operation()
                token?.finish()
            }
        case .sync(let operation, .ownedActor):
            let token = clock.beginWork()
            Task { @TempoActor in
                await TempoActor.perform(operation, work: token)
                token?.finish()
            }
        case .main(let operation):
            let token = clock.beginWork()
            Task { @MainActor in
                operation()
                token?.finish()
            }
        case .ticket(let ticket):
            ticket.grant(clock.beginWork())
        case .async(let operation):
            operation.launch(clock)
        }
    }

    /// Launches the operation as ``launch(_:)`` does and, for an ``AsyncOperation``, returns
    /// the task that runs it.
    func launchReturningTask(_ clock: EngineClock) -> Task<Void, Never>? {
        guard case .async(let operation) = self else {
            launch(clock)
            return nil
        }
        return operation.launch(clock)
    }

    /// Tells a waiting task that its call will never run. Synchronous operations need nothing.
    func discard() {
        if case .ticket(let ticket) = self { ticket.close() }
    }

    func isTicket(_ other: Ticket) -> Bool {
        if case .ticket(let ticket) = self { return ticket === other }
        return false
    }
}

/// An asynchronous operation stored in the engine itself, with where it runs and where its
/// errors go: the free `debounce` and `throttle` overloads hand the engine their call and
/// return at once (Throttler's meaning of their task), so the engine launches it when it is due.
struct AsyncOperation: Sendable {
    let operation: nonisolated(nonsending) @Sendable () async throws -> Void
    let actorType: ActorType
    let onError: (@Sendable (any Error) -> Void)?

    init(
        _ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void,
        on actorType: ActorType,
        onError: (@Sendable (any Error) -> Void)?
    ) {
        self.operation = operation
        self.actorType = actorType
        self.onError = onError
    }

    /// Starts a task that runs the operation on its actor, errors to `onError`. A
    /// deterministic clock tracks it until it ends or parks in a sleep on that clock.
    @discardableResult
    func launch(_ clock: EngineClock) -> Task<Void, Never> {
        let token = clock.beginWork()
        return Task { [operation, actorType, onError] in
            // Bound out here: a closure handed to `withValue` inside `run` would leave the actor.
            await TimerDriver.$isRunner.withValue(false) {
                await WorkToken.$current.withValue(token) {
                    await actorType.run {
                        // A call that ran at once returned this task: cancelling it before the
                        // operation starts on its actor stops it, as for `immediateTask`.
                        guard !Task.isCancelled else { return }
                        do {
                            try await operation()
                        } catch {
                            onError?(error)
                        }
                    }
                }
            }
            // After `run` has given up the actor's turn.
            token?.finish()
        }
    }
}

/// The task the free async `debounce` and `throttle` return for a call that does not run at
/// once (it is stored for later, replaced or dropped): as in Throttler, their task stands for
/// handing the call to the engine, which is done before they return. One task serves every
/// such call, so a call makes no task of its own. Where `Task.immediate` exists the task has
/// finished when it is made, so awaiting it never waits for a thread of the pool.
let appliedCallTask: Task<Void, Never> = {
    if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
        return Task.immediate {}
    }
    return Task {}
}()

/// The link between one call of a `Task`-returning overload and the task it returned.
///
/// The engine decides (``grant(_:)`` or ``close()``); the task waits (``wait()``) and then, on
/// the operation's actor, asks to ``start()``. Cancelling the task closes the ticket unless the
/// operation already started, so once `cancel()` returns the operation can no longer start,
/// even if the engine had granted it and it was waiting for its actor.
final class Ticket: Sendable {
    private enum State {
        case undecided
        case waiting(CheckedContinuation<Void, Never>)
        case granted(WorkToken?)
        case started
        case closed
    }

    private let state = Lock<State>(.undecided)
    /// Removes the ticket's call from the engine; set once when the call is registered. It is
    /// handed the ticket rather than capturing it, so no reference cycle keeps a ticket alive.
    private let withdrawal = Lock<(@Sendable (Ticket) -> Void)?>(nil)

    func setWithdrawal(_ withdraw: @escaping @Sendable (Ticket) -> Void) {
        withdrawal.withLock { $0 = withdraw }
    }

    /// The engine says: run now.
    func grant(_ token: WorkToken?) {
        let (waiter, unused) = state.withLock {
            state -> (CheckedContinuation<Void, Never>?, WorkToken?) in
            switch state {
            case .undecided:
                state = .granted(token)
                return (nil, nil)
            case .waiting(let continuation):
                state = .granted(token)
                return (continuation, nil)
            case .granted, .started, .closed:
                return (nil, token)
            }
        }
        unused?.finish()
        waiter?.resume()
    }

    /// The engine says: this call will never run (it was replaced, dropped or cancelled).
    func close() {
        let (waiter, token) = state.withLock {
            state -> (CheckedContinuation<Void, Never>?, WorkToken?) in
            switch state {
            case .undecided:
                state = .closed
                return (nil, nil)
            case .waiting(let continuation):
                state = .closed
                return (continuation, nil)
            case .granted(let token):
                state = .closed
                return (nil, token)
            case .started, .closed:
                return (nil, nil)
            }
        }
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

    /// Waits until the engine has decided.
    func wait() async {
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
    var grantedToken: WorkToken?? {
        state.withLock { state -> WorkToken?? in
            if case .granted(let token) = state { return .some(token) }
            return .none
        }
    }

    /// Claims the right to run. Returns `nil` when the call must not run, else the work token
    /// (itself optional) to finish when the operation ends. Called on the operation's actor,
    /// right before the operation: a cancel that returned before this claim stops the call.
    func start() -> WorkToken?? {
        state.withLock { state -> WorkToken?? in
            guard case .granted(let token) = state else { return .none }
            state = .started
            return .some(token)
        }
    }
}

/// The body of every `Task` a `Task`-returning helper gives back: wait for the engine's verdict,
/// then, on the operation's actor, claim the right to run and run it, sending errors to
/// `onError`.
func ticketTask(
    _ ticket: Ticket,
    by actorType: ActorType,
    onError: (@Sendable (any Error) -> Void)?,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    Task {
        // Cancelling the task closes the ticket up to the claim (and does nothing after it).
        await withTaskCancellationHandler {
            await ticket.wait()
            // Bound out here: a closure handed to `withValue` inside `run` would leave the actor.
            guard let token = ticket.grantedToken else { return }
            await WorkToken.$current.withValue(token) {
                await actorType.run {
                    // The claim is made here, on the actor: a cancel that returned first wins.
                    guard ticket.start() != nil else { return }
                    do {
                        try await operation()
                    } catch {
                        onError?(error)
                    }
                }
            }
            // After `run` has given up the actor's turn (see `TempoActor.passTurn()`).
            token?.finish()
        } onCancel: {
            ticket.cancel()
        }
    }
}

/// What every `Task`-returning overload does: for a duration of zero or less, a task that runs
/// the operation at once; otherwise a ticket task, whose call `register` hands to the engine
/// before the task is returned (so the call is applied in call order, stamped at the call).
func ticketedTask(
    after duration: Duration,
    by actorType: ActorType,
    onError: (@Sendable (any Error) -> Void)?,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void,
    register: (Operation) -> Void
) -> Task<Void, Never> {
    guard duration > .zero else {
        return immediateTask(by: actorType, onError: onError, operation: operation)
    }
    let ticket = Ticket()
    let task = ticketTask(ticket, by: actorType, onError: onError, operation: operation)
    register(.ticket(ticket))
    return task
}

/// A task that runs `operation` at once on its actor (durations of zero or less). Whether the
/// task was cancelled is checked on the actor, right before the operation.
func immediateTask(
    by actorType: ActorType,
    onError: (@Sendable (any Error) -> Void)?,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    Task {
        await actorType.run {
            guard !Task.isCancelled else { return }
            do {
                try await operation()
            } catch {
                onError?(error)
            }
        }
    }
}
