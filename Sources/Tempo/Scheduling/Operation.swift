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

    /// Runs the operation now, or hands it to its actor, and returns the task that runs it
    /// when it is an ``AsyncOperation``. Never blocks on another actor.
    ///
    /// The one place a run is reported: every path that runs a call (at once, at its instant, as
    /// a catch-up, flushed, found due by a cancel) launches it here, with the ``CallStamp`` of
    /// the decision, which reports `callRan` before the operation starts. `nil`: nobody
    /// observes, or the call is one no event is about (a `delay`'s).
    @discardableResult
    func launch(_ clock: EngineClock, reporting stamp: CallStamp?) -> Task<Void, Never>? {
        stamp?.report(.callRan)
        guard case .async(let operation) = self else {
            launch(clock)
            return nil
        }
        return operation.launch(clock)
    }

    /// Runs the operation now, or hands it to its actor, reporting nothing: only through
    /// ``launch(_:reporting:)``.
    ///
    /// Tasks started here never inherit the timer runner's ``TimerDriver/isRunner`` flag, so
    /// code in an operation sees the flag of wherever it really runs.
    private func launch(_ clock: EngineClock) {
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
                let token = clock.launchToken()
                Task {
                    operation()
                    token?.finish()
                }
            } else {
                operation()
            }
        case .sync(let operation, .mainActor):
            Self.launchOnMainActor(operation, clock)
        case .sync(let operation, .ownedActor):
            let token = clock.launchToken()
            Task { @TempoActor in
                await TempoActor.perform(operation, work: token)
                token?.finish()
            }
        case .main(let operation):
            Self.launchOnMainActor(operation, clock)
        case .ticket(let ticket):
            ticket.grant(clock.launchToken())
        case .async(let operation):
            operation.launch(clock)
        }
    }

    /// Runs a synchronous operation on the main actor, in a task of its own that `clock` tracks:
    /// how both `.sync(_, .mainActor)` and `.main` launch.
    private static func launchOnMainActor(
        _ operation: @escaping @MainActor @Sendable () -> Void, _ clock: EngineClock
    ) {
        let token = clock.launchToken()
        Task { @MainActor in
            operation()
            token?.finish()
        }
    }

    /// Tells a waiting task that its call will never run. Synchronous operations need nothing.
    ///
    /// The one place a drop is reported: every path that drops a call (replaced, dropped by its
    /// mode, cancelled, withdrawn by its task) discards it here, with the ``CallStamp`` of the
    /// decision, which reports `callDropped`.
    func discard(reporting stamp: CallStamp?) {
        stamp?.report(.callDropped)
        if case .ticket(let ticket) = self { ticket.close() }
    }

    /// The ticket of a `Task`-returning call's operation.
    var ticket: Ticket? {
        if case .ticket(let ticket) = self { return ticket }
        return nil
    }

    func isTicket(_ other: Ticket) -> Bool {
        if case .ticket(let ticket) = self { return ticket === other }
        return false
    }
}

/// An asynchronous operation stored in the engine itself, with where it runs and where its
/// errors go: the free `debounce` and `throttle` overloads hand the engine their call and
/// return at once (Throttler's meaning of their task), so the engine launches it when it is due.
///
/// A class, so that ``Operation`` stays two words and a flag: every call's transition result
/// holds up to three operations, and with this payload inline (five words) the compiler copies
/// and destroys those results through runtime metadata on every debounce and throttle call,
/// sync or async. One allocation per async call instead (see
/// ArchitectureHotPath.md for the rows this guards).
final class AsyncOperation: Sendable {
    let operation: nonisolated(nonsending) @Sendable () async throws -> Void
    let actorType: ActorType
    let onError: ErrorHandler?

    init(
        _ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void,
        on actorType: ActorType,
        onError: ErrorHandler?
    ) {
        self.operation = operation
        self.actorType = actorType
        self.onError = onError
    }

    /// Starts a task that runs the operation on its actor, errors to `onError`. A
    /// deterministic clock tracks it until it ends or parks in a sleep on that clock.
    @discardableResult
    func launch(_ clock: EngineClock) -> Task<Void, Never> {
        let token = clock.launchToken()
        return Task { [operation, actorType, onError] in
            // Bound out here: a closure handed to `withValue` inside `run` would leave the actor.
            await TimerDriver.$isRunner.withValue(false) {
                await SettleToken.$current.withValue(token) {
                    await actorType.run(onError: onError) {
                        // A call that ran at once returned this task: cancelling it before the
                        // operation starts on its actor stops it, as for `immediateTask`.
                        guard !Task.isCancelled else { return }
                        try await operation()
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

/// Where a helper's `onError` goes. A handler is asynchronous and `nonisolated(nonsending)`: it
/// runs where Tempo calls it, on the operation's actor, right after the failed operation (on
/// ``ActorType/ownedActor``, once the operation has given up the actor's turn). The
/// public parameters also carry `@_inheritActorContext`, so a handler written in main-actor
/// code is isolated to the main actor and may update its state (`self.errorMessage = ...`);
/// it is awaited before the run counts as finished, so a manual clock's `advance` waits for it.
typealias ErrorHandler = nonisolated(nonsending) @Sendable (any Error) async -> Void
