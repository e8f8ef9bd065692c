import Tempo
import TempoTesting
import Testing

/// A hedge timer whose deadline a failure moved on: the event of the old timer, should it still
/// arrive, starts nothing.
@Suite struct HedgeStaleTimerTests {
    @Test func aTimerSupersededByAFailureStartsNoAttempt() async {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let started = Log<Int>()
        let call = Task {
            try await registry.withCurrent {
                try await hedge(maxAttempts: 3, after: .milliseconds(100)) { attempt in
                    started.append(attempt)
                    if attempt == 1 { throw Boom() }
                    try await Task.sleep(for: .seconds(60))
                    return attempt
                }
            }
        }
        // Attempt 1 failed at once: attempt 2 started, and the timer was re-armed.
        #expect(await eventually { started.count == 2 && clock.timers.count == 2 })
        #expect(clock.timers[0].cancelled)
        // The first timer fires anyway (as one that raced its cancellation would).
        clock.set(.milliseconds(100))
        _ = clock.fire(0)
        await yieldALot()
        #expect(started.all == [1, 2])
        // The live timer still hedges.
        _ = clock.fire(1)
        #expect(await eventually { started.count == 3 })
        call.cancel()
        _ = await call.result
    }
}
