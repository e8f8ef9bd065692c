import Tempo
import TempoTesting
import Testing

/// Every wait that makes an operation count as asleep on a manual clock has its wake-up timer on
/// the clock before it does: an advance that sees the operation asleep sees the timer too, and
/// fires it when it comes due. Each case runs many rounds (the fault is a race lost in a few
/// rounds in a hundred); each round runs under `finishes`, so a lost wake-up fails fast.
@Suite struct ManualClockParkOrderTests {
    /// Runs `rounds` rounds of: a delay of 1 s launches `body`, then one advance of 2 s.
    /// Returns how many rounds the advance did not return, or returned before `body` finished.
    private func missedRounds(
        _ rounds: Int, _ body: @escaping @Sendable () async throws -> Void
    ) async -> Int {
        var missed = 0
        for _ in 0..<rounds {
            let clock = ManualClock()
            let registry = TempoRegistry(clock: clock)
            let finished = Flag()
            let returned = await finishes {
                await registry.withCurrent {
                    delay(.seconds(1), by: .taskContext) {
                        try await body()
                        finished.set()
                    }
                    await clock.advance(by: .seconds(2))
                }
            }
            if !returned || !finished.isSet { missed += 1 }
            // A round that hung took `finishes`'s limit: stop at the first, to fail fast.
            if !returned { break }
            _ = await finishes {
                await registry.withCurrent { await clock.advance(by: .seconds(20)) }
            }
        }
        return missed
    }

    @Test func theValueOfANestedDelayIsInHandWithinTheAdvance() async {
        let missed = await missedRounds(300) {
            await delay(.milliseconds(500), by: .taskContext) {}.value
        }
        #expect(missed == 0)
    }

    /// A thousand rounds: with the park before the registration this missed 6 to 48 rounds of
    /// 300 run alone, and none of 300 once inside a parallel run of the whole suite.
    @Test func anAwaitedDebounceResultIsInHandWithinTheAdvance() async {
        let missed = await missedRounds(1_000) {
            _ = try await debounceResult(.milliseconds(500), identifier: "d", by: .taskContext) {
                7
            }
        }
        #expect(missed == 0)
    }

    @Test func theValueOfANestedRepeatIsInHandWithinTheAdvance() async {
        let missed = await missedRounds(300) {
            await `repeat`(every: .milliseconds(200), times: 2, by: .taskContext) {}.value
        }
        #expect(missed == 0)
    }
}
