import Synchronization

// The awaited forms of `debounce` and `throttle`: the caller registers a ticket, as the
// `Task`-returning forms do, and then waits in its own task, with no task made for it. A call
// that never runs is settled when its ticket is closed; a call that runs gets one task, which
// runs the operation on its actor and hands the outcome back through a `RunOutcome`. A
// latest-wins call's run starts when the engine grants its ticket (`LatestClaim`), so runs
// overtake in the order they are released, whenever their callers wake.

/// The outcome of one run, handed to its awaiting caller once: the operation's value or error,
/// ``DiscardedCall/overtaken`` when a newer latest-wins run is released first, or
/// `CancellationError` when the caller's cancellation stopped the run before it started.
final class RunOutcome<T: Sendable>: LatestRun {
    private enum State {
        case running
        case waiting(CheckedContinuation<(Result<T, any Error>, SettleToken?), Never>)
        case settled(Result<T, any Error>, SettleToken?)
        case delivered
    }

    private let state = Lock<State>(.running)
    /// The task running the operation.
    let handle: RunHandle
    /// The call's ticket, whose parked caller counts as running again once the outcome is
    /// handed over. Set once, before the call is registered (``bind(_:)``): a latest-wins
    /// call's ticket carries this outcome, so it is made after it.
    private let ticket = AtomicLazyReference<Ticket>()

    init(_ handle: RunHandle) {
        self.handle = handle
    }

    /// Names the call's ticket; before the call is registered, so before any settling.
    func bind(_ ticket: Ticket) {
        _ = self.ticket.storeIfNil(ticket)
    }

    /// Settles the run with `result`, unless it is settled already. `token`, when given, is
    /// the work of delivering the outcome: it stays open until the caller has it in hand.
    /// Returns whether this settled it.
    @discardableResult
    func settle(_ result: Result<T, any Error>, token: SettleToken? = nil) -> Bool {
        let (waiter, settled) = state.withLock {
            state -> (CheckedContinuation<(Result<T, any Error>, SettleToken?), Never>?, Bool) in
            switch state {
            case .running:
                state = .settled(result, token)
                return (nil, true)
            case .waiting(let continuation):
                state = .delivered
                return (continuation, true)
            case .settled, .delivered:
                return (nil, false)
            }
        }
        if !settled { token?.finish() }
        // The caller, if it was an operation asleep on this wait, runs again before the work
        // that settled the run ends.
        if settled { ticket.load()?.releaseCaller() }
        waiter?.resume(returning: (result, token))
        return settled
    }

    /// Whether the outcome is decided (handed over or waiting to be).
    var isSettled: Bool {
        state.withLock { state -> Bool in
            switch state {
            case .running, .waiting: return false
            case .settled, .delivered: return true
            }
        }
    }

    /// Waits for the outcome, then finishes its delivery token and returns or throws it.
    nonisolated(nonsending) func value() async throws -> T {
        let (result, token) = await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> (Result<T, any Error>, SettleToken?)? in
                switch state {
                case .running:
                    state = .waiting(continuation)
                    return nil
                case .settled(let result, let token):
                    state = .delivered
                    return (result, token)
                case .waiting, .delivered:
                    preconditionFailure("a run's outcome has one waiter")
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
        // When the outcome came through the continuation, take the lock once more: the token
        // was made and handed over under it on the settling thread, and ThreadSanitizer sees
        // that ordering through the lock. Through the continuation's resumption alone it can
        // miss it, and report `token.host` (written in `init`, read in `finish`) as a race.
        if token != nil { state.withLock { _ in } }
        // The caller has the outcome: on its own actor, what it does next with it runs before
        // a clock advance that waited for this token goes on.
        token?.finish()
        return try result.get()
    }

    func settleOvertaken() -> Bool {
        settle(.failure(DiscardedCall.overtaken))
    }

    func cancelRun() { handle.cancelRun() }
}

/// The task that runs a granted awaited call, for cancelling it: by the caller's cancellation,
/// or by a newer latest-wins run. Not generic, so that a call that never runs touches no
/// generic type.
final class RunHandle: Sendable {
    private let task = Lock<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

    func setTask(_ made: Task<Void, Never>) {
        let cancelled = task.withLock { task -> Bool in
            task.task = made
            return task.cancelled
        }
        if cancelled { made.cancel() }
    }

    /// Cancels the task running the operation (now, or as soon as it is made).
    func cancelRun() {
        task.withLock { task -> Task<Void, Never>? in
            task.cancelled = true
            return task.task
        }?.cancel()
    }
}

/// A run in a latest-wins group, as ``LatestRuns`` sees it.
protocol LatestRun: AnyObject, Sendable {
    /// A newer run of the group was released: tells this run's caller at once. Returns `false`
    /// when the run's outcome was already settled.
    func settleOvertaken() -> Bool
    /// Cancels the task running the operation.
    func cancelRun()
}

/// An awaited latest-wins call's run and its group, made before the call is registered and
/// carried by its ticket, so that the engine's grant writes the run as its group's run in
/// flight (``LatestRuns/begin(_:)``).
final class LatestClaim: Sendable {
    let group: LatestRuns.Key
    let run: any LatestRun

    init(_ site: AwaitedCallSite, _ run: any LatestRun) {
        group = LatestRuns.Key(
            registry: ObjectIdentifier(site.registry), kind: site.kind, key: site.key)
        self.run = run
    }
}

/// Where a helper's awaited call goes: the registry that times it, which table its group is in,
/// and its group.
struct AwaitedCallSite: Sendable {
    enum Kind: UInt8, Sendable, Hashable {
        case debounce
        case throttle
    }

    let registry: TempoRegistry
    let kind: Kind
    let key: GroupKey
}

/// An awaited call: registers a ticket through `register` before its first suspension (so the
/// call is applied in call order, stamped at the call), waits for the engine's verdict and, if
/// granted, runs `operation` on `actorType` in one task and returns its outcome.
///
/// A latest-wins call makes its outcome and claim before it registers: its run starts, and
/// overtakes the one before it, when the engine grants the ticket.
nonisolated(nonsending) func awaitTicketedCall<T: Sendable>(
    _ site: AwaitedCallSite,
    by actorType: ActorType,
    latestWins: Bool,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> T,
    register: (Operation) -> Void
) async throws -> T {
    let handle = RunHandle()
    // Awaited inside an operation of the same manual clock (or a task a test started on it),
    // the call counts as that task asleep on the clock from its registration until its
    // outcome is handed over.
    let host = site.registry.clock.host
    let outcome = RunOutcome<T>(handle)
    // A latest-wins call's ticket carries its claim, so that the grant starts its run.
    let claim = latestWins ? LatestClaim(site, outcome) : nil
    let ticket = claim.map { Ticket(latest: $0) } ?? Ticket()
    outcome.bind(ticket)
    ticket.holdCaller(of: host)
    register(.ticket(ticket))
    ticket.parkCaller()
    let token = try await waitForGrant(ticket, handle)
    return try await runGranted(
        ticket, outcome, claim, token: token, site: site, by: actorType, operation: operation)
}

/// Waits for the engine's verdict on `ticket`; returns the granted call's work token, or throws
/// ``DiscardedCall/notRun`` (`CancellationError` when the caller's cancellation withdrew it).
/// Not generic: a call that never runs costs no generic code.
nonisolated(nonsending) private func waitForGrant(_ ticket: Ticket, _ handle: RunHandle)
    async throws -> SettleToken?
{
    try await withTaskCancellationHandler {
        await ticket.wait()
        guard let token = ticket.grantedToken else {
            // Closed: withdrawn because this task was cancelled, or never to run.
            if Task.isCancelled { throw CancellationError() }
            throw DiscardedCall.notRun
        }
        return token
    } onCancel: {
        ticket.cancel()
        handle.cancelRun()
    }
}

/// Runs a granted call in one task, on its actor, and waits for its outcome. `latest` is the
/// claim of a latest-wins call, whose run started at the grant.
nonisolated(nonsending) private func runGranted<T: Sendable>(
    _ ticket: Ticket, _ outcome: RunOutcome<T>, _ latest: LatestClaim?, token: SettleToken?,
    site: AwaitedCallSite, by actorType: ActorType,
    operation: nonisolated(nonsending) @escaping @Sendable () async throws -> T
) async throws -> T {
    if latest != nil, outcome.isSettled {
        // Overtaken before its caller woke (a newer run was released while the caller's actor
        // was busy): it never runs, and gets no task. The claim stops it for good.
        if let claimed = ticket.start() { claimed?.finish() }
        return try await outcome.value()
    }
    let handle = outcome.handle
    let clock = site.registry.clock
    return try await withTaskCancellationHandler {
        handle.setTask(
            Task {
                // Bound out here: a closure handed to `withValue` inside `run` would leave the
                // actor.
                await SettleToken.$current.withValue(token) {
                    await actorType.run {
                        // The claim is made on the actor: a cancel that returned first wins.
                        guard ticket.start() != nil else {
                            outcome.settle(.failure(CancellationError()))
                            return
                        }
                        // Overtaken before it started (a newer run was released while this one
                        // waited for its actor): its outcome is discarded, so it does not run.
                        // On `.ownedActor` an older run holds the actor's turn until it returns,
                        // which is why a run overtakes at its release, not here.
                        if outcome.isSettled { return }
                        let result: Result<T, any Error>
                        do {
                            result = .success(try await operation())
                        } catch {
                            result = .failure(error)
                        }
                        outcome.settle(result, token: clock.launchToken())
                    }
                }
                if let latest { LatestRuns.end(latest) }
                // After `run` has given up the actor's turn.
                token?.finish()
            })
        return try await outcome.value()
    } onCancel: {
        // Up to the claim, the call is withdrawn; after it, the operation's task is cancelled.
        ticket.cancel()
        handle.cancelRun()
    }
}

/// The run in flight of each latest-wins group, in every registry: releasing a run (the grant of
/// its ticket) overtakes the one before it, under one lock, so that no run's outcome is handed
/// over once a newer run of its group has been released.
enum LatestRuns {
    struct Key: Hashable, Sendable {
        let registry: ObjectIdentifier
        let kind: AwaitedCallSite.Kind
        let key: GroupKey
    }

    private static let runs = Lock<[Key: any LatestRun]>([:])

    /// Makes `claim`'s run its group's run in flight and overtakes the previous one, which it
    /// returns for the caller to cancel (outside its locks: cancelling runs the task's
    /// cancellation handlers). Called by the grant of the claim's ticket.
    static func begin(_ claim: LatestClaim) -> (any LatestRun)? {
        // Settled under the lock: a run hands its outcome over either before this point (and
        // the newer run starts after it) or not at all.
        runs.withLock { runs -> (any LatestRun)? in
            guard let previous = runs.updateValue(claim.run, forKey: claim.group) else {
                return nil
            }
            return previous.settleOvertaken() ? previous : nil
        }
    }

    /// The run has ended (or its caller withdrew it after its release): it leaves the table
    /// unless a newer run has taken its place.
    static func end(_ claim: LatestClaim) {
        runs.withLock { runs in
            if runs[claim.group] === claim.run { runs[claim.group] = nil }
        }
    }

    /// How many groups have a latest-wins run in flight (for tests).
    static var count: Int { runs.withLock { $0.count } }

    /// How many groups of `registry` have a latest-wins run in flight (for tests).
    static func count(_ registry: TempoRegistry) -> Int {
        let id = ObjectIdentifier(registry)
        return runs.withLock { runs in runs.keys.count { $0.registry == id } }
    }
}
