/// Where a scheduled operation runs.
///
/// An asynchronous operation runs isolated to the actor it is given, from its first line to its
/// last, across its `await`s: inside it `MainActor.assertIsolated()` (for ``mainActor``) or
/// `TempoActor.shared.assertIsolated()` (for ``ownedActor``) holds. That needs the closure
/// written at the call, as below: its type is `nonisolated(nonsending)`, so it runs where Tempo
/// calls it. A function value made elsewhere, of type `@Sendable () async throws -> Void`,
/// still compiles, but Swift runs it on the generic executor, as it would anywhere; write
/// `{ try await save() }` at the call instead, or mark the function `@MainActor` (or
/// `@TempoActor`).
///
/// ```swift
/// debounce(.milliseconds(300), by: .ownedActor) { index.rebuild() }
/// delay(.seconds(1), by: .mainActor) { () async in
///     MainActor.assertIsolated()   // holds, also after an await
/// }
/// ```
///
/// An `onError` handler runs on the operation's actor, right after the operation throws, and
/// the run counts as finished once it returns. A handler written in main-actor code is
/// isolated to the main actor (its parameter is `@_inheritActorContext`, as `Task`'s closure
/// is), so a `@MainActor` view model publishes an error directly, whatever `by:` says:
///
/// ```swift
/// @MainActor final class SaveModel {
///     var errorMessage: String?
///
///     func save() {
///         debounce(
///             .seconds(1), identifier: "save",
///             onError: { self.errorMessage = "\($0)" }
///         ) {
///             try await api.save(draft)
///         }
///     }
/// }
/// ```
public enum ActorType: Sendable, Hashable {
    /// The main actor. The default of the scheduling helpers, since most callers update UI.
    ///
    /// ```swift
    /// debounce(.milliseconds(300), by: .mainActor) { MainActor.assertIsolated() }
    /// ```
    case mainActor
    /// One serial actor owned by Tempo, ``TempoActor``. Operations that share it never run at
    /// the same time, and none of them blocks the main actor.
    ///
    /// An asynchronous operation keeps the actor's turn across its `await`s: the next
    /// `.ownedActor` operation, synchronous or asynchronous, starts once it has returned, in
    /// the order they reached the actor (the actor alone would let them interleave at each
    /// `await`). So an `.ownedActor` operation must not wait for another `.ownedActor`
    /// operation to finish (awaiting the `Task` of `execute(on: .ownedActor)` inside one, say):
    /// that one waits for its turn, which never comes. Code you mark `@TempoActor` yourself
    /// takes no turn, and neither does an `onError` handler: it runs on the actor once the
    /// operation that threw has given up its turn, so it may await another `.ownedActor` call.
    ///
    /// ```swift
    /// throttle(.seconds(1), by: .ownedActor) { cache.trim() }   // off the main actor
    /// ```
    case ownedActor
    /// The task that carries the scheduled work, with no hop to another actor. A synchronous
    /// operation whose call runs it at once (a leading call, a zero duration) runs inline, in
    /// the caller, also when the caller is an operation Tempo started; one a timer releases
    /// runs in a task of its own. An asynchronous operation runs in the task the call returned.
    ///
    /// ```swift
    /// let work = execute(on: .taskContext) { await cache.warm() }
    /// await work.value
    /// ```
    case taskContext
}

/// The serial actor behind ``ActorType/ownedActor``.
///
/// Tempo's `.ownedActor` operations run on it one at a time, an asynchronous one keeping its
/// turn until it returns (see ``ActorType/ownedActor``).
///
/// ```swift
/// delay(.seconds(1), by: .ownedActor) { () async in
///     TempoActor.shared.assertIsolated()
/// }
/// ```
@globalActor
public actor TempoActor {
    /// The one instance every `.ownedActor` operation runs on.
    ///
    /// ```swift
    /// execute(on: .ownedActor) { TempoActor.shared.preconditionIsolated() }
    /// ```
    public static let shared = TempoActor()
}

extension ActorType {
    /// Runs `body` isolated to this actor, from an asynchronous context, and returns when it
    /// has finished.
    ///
    /// `body` starts and stays on the actor: an `await` inside it comes back to the actor (for
    /// ``ActorType/taskContext``, to the calling task's context). Whatever decides whether an
    /// operation may still run (a ticket, a cancellation check, a loop's control) belongs inside
    /// `body`, so that it is decided on the actor, after the hop: a cancel that returns there
    /// before `body` starts then stops it. On ``ActorType/ownedActor`` `body` first waits for
    /// its turn (see ``TempoActor``), and holds it until it returns.
    func run(_ body: nonisolated(nonsending) @Sendable () async throws -> Void) async rethrows {
        switch self {
        case .mainActor: try await MainActor.start(body)
        case .ownedActor: try await TempoActor.start(body)
        case .taskContext: try await body()
        }
    }
}

extension TempoActor {
    /// Who holds the turn, and who waits for it, first come first served, with the work token
    /// each one carries on a manual clock.
    ///
    /// A waiter whose clock is the holder's counts as asleep on that clock (it is parked): the
    /// holder may be asleep on it, and an advance that waited for the waiter would then wait
    /// for itself. While the holder runs, the advance waits for the holder instead, and the
    /// waiter is unparked before the holder's work ends. A waiter behind work of another clock
    /// (or of none) is not parked: its advance waits until that work gives the turn up.
    private struct Turn {
        struct Waiter {
            var continuation: CheckedContinuation<Void, Never>
            var work: SettleToken?
            var parked: Bool
        }

        var held = false
        var holder: SettleToken?
        var waiters: [Waiter] = []
        var next = 0

        func sharesClock(_ work: SettleToken?) -> Bool {
            guard let host = work?.host, let holder = holder?.host else { return false }
            return host === holder
        }

        /// Hands the turn to the first waiter and re-parks the rest for the new holder's clock.
        mutating func handOver() -> Waiter? {
            guard next < waiters.count else { return nil }
            var first = waiters[next]
            next += 1
            if first.parked {
                first.work?.unpark()
                first.parked = false
            }
            holder = first.work
            for index in next..<waiters.count {
                let parked = sharesClock(waiters[index].work)
                guard parked != waiters[index].parked else { continue }
                if parked { waiters[index].work?.park() } else { waiters[index].work?.unpark() }
                waiters[index].parked = parked
            }
            if next == waiters.count {
                waiters.removeAll(keepingCapacity: waiters.count <= 64)
                next = 0
            }
            return first
        }
    }

    @TempoActor private static var turn = Turn()

    /// Waits until no other Tempo operation holds the actor's turn, then takes it; at once,
    /// with no suspension, when the turn is free.
    @TempoActor static func takeTurn(_ work: SettleToken?) async {
        guard turn.held else {
            turn.held = true
            turn.holder = work
            return
        }
        let parked = turn.sharesClock(work)
        if parked { work?.park() }
        await withCheckedContinuation {
            turn.waiters.append(Turn.Waiter(continuation: $0, work: work, parked: parked))
        }
    }

    /// Hands the turn to the next waiter, in the order they came, or frees it. Called before
    /// the holder's work token is finished, so an advance never sees both idle in between.
    @TempoActor static func passTurn() {
        if let waiter = turn.handOver() {
            waiter.continuation.resume()
        } else {
            turn.held = false
            turn.holder = nil
        }
    }

    /// Runs `body` on the actor, in its turn.
    @TempoActor static func start(
        _ body: nonisolated(nonsending) @Sendable () async throws -> Void
    ) async rethrows {
        await takeTurn(SettleToken.current)
        defer { passTurn() }
        // Keeps the hop to the actor: see `MainActor.start(_:)`.
        TempoActor.shared.preconditionIsolated()
        try await body()
    }

    /// Runs a synchronous `operation` on the actor, in its turn: at once when the turn is free.
    @TempoActor static func perform(_ operation: @Sendable () -> Void, work: SettleToken?) async {
        await takeTurn(work)
        operation()
        passTurn()
    }
}

extension MainActor {
    /// Runs `body` on the main actor.
    @MainActor static func start(
        _ body: nonisolated(nonsending) @Sendable () async throws -> Void
    ) async rethrows {
        // With nothing but the call of a `nonisolated(nonsending)` closure in its body, Swift
        // 6.2 and 6.3 drop the hop to the actor on entry, and `body` runs on the caller's
        // executor while believing it is on the main actor. A call that needs the actor keeps
        // the hop (ActorIsolationTests pin it).
        MainActor.preconditionIsolated()
        try await body()
    }
}
