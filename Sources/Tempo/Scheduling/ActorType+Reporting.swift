extension ActorType {
    /// Runs `body` on this actor as ``run(_:)`` does, and hands an error it throws to
    /// `onError`, on this actor, before returning.
    ///
    /// On ``ActorType/ownedActor`` the handler runs after `body` has given up the actor's turn
    /// (isolated to ``TempoActor``, as code marked `@TempoActor` is): a handler that awaits
    /// another `.ownedActor` call (a logger that goes through Tempo) would otherwise wait for a
    /// turn its own run still held, and a handler that waits a long time (for the user to
    /// dismiss an alert) would hold up every other `.ownedActor` operation meanwhile. On the
    /// other actors, which have no turn, it runs right after `body`, in the same hop.
    func run(
        onError: ErrorHandler?,
        _ body: nonisolated(nonsending) @Sendable () async throws -> Void
    ) async {
        guard self == .ownedActor else {
            await run {
                do {
                    try await body()
                } catch {
                    await onError?(error)
                }
            }
            return
        }
        do {
            try await TempoActor.start(body)
        } catch {
            await TempoActor.report(error, to: onError)
        }
    }
}

extension TempoActor {
    /// Hands `error` to `handler` on the actor, outside any operation's turn.
    @TempoActor static func report(_ error: any Error, to handler: ErrorHandler?) async {
        guard let handler else { return }
        // Keeps the hop to the actor: see `MainActor.start(_:)`.
        TempoActor.shared.preconditionIsolated()
        await handler(error)
    }
}
