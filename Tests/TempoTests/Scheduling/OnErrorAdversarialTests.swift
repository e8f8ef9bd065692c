import Tempo
import TempoTesting
import Testing

/// `onError` handlers that do more than log: wait for other Tempo work, re-enter their own
/// helper, or receive a `CancellationError`.
@Suite struct OnErrorAdversarialTests {
    /// A handler of an `.ownedActor` operation that awaits another `.ownedActor` call (a logger
    /// that writes through Tempo, say) must not wait for a turn its own run still holds.
    @Test func anOwnedActorHandlerThatAwaitsAnotherOwnedActorCallFinishes() async {
        let log = Log<String>()
        await onManualClock { clock, _ in
            debounce(
                .milliseconds(10), identifier: "owned-logger", by: .ownedActor,
                onError: { _ in
                    await execute(on: .ownedActor) { log.append("logged") }.value
                    log.append("handled")
                }
            ) { throw Boom() }
            #expect(await finishes { await clock.advance(by: .milliseconds(10)) })
        }
        #expect(log.all == ["logged", "handled"])
    }

    @Test func aScopedOwnedActorHandlerThatAwaitsAnotherOwnedActorCallFinishes() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.milliseconds(10), by: .ownedActor, registry: registry)
            debouncer(onError: { _ in
                await execute(on: .ownedActor) { log.append("logged") }.value
                log.append("handled")
            }) { throw Boom() }
            #expect(await finishes { await clock.advance(by: .milliseconds(10)) })
        }
        #expect(log.all == ["logged", "handled"])
    }

    @Test func anOwnedActorRepeatHandlerThatAwaitsAnotherOwnedActorCallFinishes() async {
        let log = Log<String>()
        await onManualClock { clock, _ in
            let loop = `repeat`(
                every: .milliseconds(10), times: 2, by: .ownedActor,
                onError: { _ in
                    await execute(on: .ownedActor) { log.append("logged") }.value
                    log.append("handled")
                }, afterError: .keepGoing
            ) { throw Boom() }
            #expect(await finishes { await clock.advance(by: .milliseconds(20)) })
            #expect(await finishes { await loop.value })
        }
        #expect(log.all == ["logged", "handled", "logged", "handled"])
    }

    /// A handler that waits a long time (for the user, say) holds up no other `.ownedActor`
    /// operation.
    @Test func aSlowOwnedActorHandlerHoldsUpNoOtherOwnedActorOperation() async {
        let log = Log<String>()
        let gate = Gate()
        await onManualClock { clock, _ in
            debounce(
                .milliseconds(10), identifier: "slow-handler", by: .ownedActor,
                onError: { _ in
                    log.append("waiting")
                    await gate.wait()
                    log.append("handled")
                }
            ) { throw Boom() }
            let advancing = Task { await clock.advance(by: .milliseconds(10)) }
            #expect(await eventually { log.all == ["waiting"] })
            let other = execute(on: .ownedActor) { log.append("other ran") }
            #expect(await eventually { log.all == ["waiting", "other ran"] })
            gate.open()
            await advancing.value
            await other.value
        }
        #expect(log.all == ["waiting", "other ran", "handled"])
    }

    @Test func aCancellationErrorThrownByTheOperationReachesOnError() async {
        let log = Log<String>()
        await onManualClock { clock, _ in
            debounce(
                .milliseconds(10), identifier: "cancelled", by: .taskContext,
                onError: { log.append($0 is CancellationError ? "cancellation" : "other") }
            ) { throw CancellationError() }
            await clock.advance(by: .milliseconds(10))
        }
        #expect(log.all == ["cancellation"])
    }

    /// A handler that calls its own debouncer again: the new call is a new burst.
    @Test func aHandlerThatReentersItsDebouncerStartsANewBurst() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.milliseconds(10), by: .ownedActor, registry: registry)
            debouncer(onError: { _ in
                log.append("failed")
                debouncer { log.append("retried") }
            }) { throw Boom() }
            await clock.advance(by: .milliseconds(10))
            #expect(log.all == ["failed"])
            await clock.advance(by: .milliseconds(10))
        }
        #expect(log.all == ["failed", "retried"])
    }
}
