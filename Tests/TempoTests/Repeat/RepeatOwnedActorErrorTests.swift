import Tempo
import TempoTesting
import Testing

/// The error of an `.ownedActor` iteration goes to its handler, outside the actor's turn, and
/// the loop then goes on or ends by its policy. Each wait here is bounded, so a loop that
/// drops the report fails the test in seconds instead of leaving `loop.value` waiting.
@Suite struct RepeatOwnedActorErrorTests {
    @Test(arguments: [RepeatErrorPolicy.stop, .keepGoing])
    func anOwnedActorIterationErrorReachesItsHandler(_ policy: RepeatErrorPolicy) async {
        let handled = Log<String>()
        let runs = Log<Int>()
        await onManualClock { clock, _ in
            let loop = `repeat`(
                every: .milliseconds(10), times: 2, by: .ownedActor,
                onError: { error in
                    TempoActor.shared.assertIsolated()
                    handled.append("\(error)")
                }, afterError: policy
            ) {
                runs.append(runs.count + 1)
                throw Boom()
            }
            #expect(await finishes { await clock.advance(by: .milliseconds(10)) })
            #expect(handled.count == 1)
            #expect(await finishes { await clock.advance(by: .milliseconds(10)) })
            #expect(await finishes { await loop.value })
        }
        let expected = policy == .stop ? 1 : 2
        #expect(runs.count == expected)
        #expect(handled.all == Array(repeating: "\(Boom())", count: expected))
    }
}
