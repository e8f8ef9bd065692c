import Tempo
import TempoTesting
import Testing

/// Which `delay` overload a closure picks, as the docs describe: a closure that neither awaits
/// nor throws picks a synchronous form (no task), and `() async in` picks the one that returns
/// the task to cancel.
@Suite struct DelayOverloadChoiceTests {
    @Test func anAsyncMarkedClosureReturnsATaskWhoseCancelWithdrawsTheDelay() async {
        await onManualClock { clock, registry in
            let runs = Log<String>()
            let undo = delay(.seconds(5), by: .taskContext) { () async in runs.append("sent") }
            let task: Task<Void, Never> = undo  // the type the docs promise
            #expect(registry.snapshot().entries.count == 1)
            task.cancel()
            await task.value
            await clock.advance(by: .seconds(5))
            #expect(runs.all.isEmpty)
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aPlainClosurePicksTheSynchronousFormWhichReturnsNothing() async {
        await onManualClock { clock, registry in
            let runs = Log<String>()
            // Compiles only while this picks the form that returns nothing.
            let result: Void = delay(.seconds(5), by: .taskContext) { runs.append("x") }
            _ = result
            // Kept in the engine: no task, one pending entry that runs at its instant.
            #expect(registry.snapshot().entries.count == 1)
            await clock.advance(by: .seconds(5))
            #expect(runs.all == ["x"])
        }
    }
}
