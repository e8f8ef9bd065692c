import Tempo
import TempoTesting
import Testing

/// The awaited `throttle` forms: the callers whose calls run get their own values, every
/// dropped or replaced caller is settled at once, in every mode.
@MainActor @Suite(.timeLimit(.minutes(5))) struct ThrottleResultTests {
    @Test func theDefaultModeGivesTheFirstCallItsValueAndDropsTheRestAtOnce() async {
        await onMainManualClock { clock, _ in
            var tasks: [Task<Int, any Error>] = []
            for value in 1...3 {
                tasks.append(
                    await started {
                        try await throttleResult(.milliseconds(100), identifier: "t") { value }
                    })
            }
            // Dropped calls are settled without the clock moving.
            #expect(await outcomes(Array(tasks.suffix(2))) == [.notRun, .notRun])
            #expect(await Outcome(tasks[0]) == .value(1))
            await clock.advance(by: .milliseconds(100))
        }
    }

    @Test func ensureLastGivesTheFirstAndTheKeptLastCallTheirValues() async {
        await onMainManualClock { clock, _ in
            var tasks: [Task<Int, any Error>] = []
            for value in 1...4 {
                tasks.append(
                    await started {
                        try await throttleResult(
                            .milliseconds(100), identifier: "e", by: .ownedActor,
                            option: .ensureLast
                        ) { value }
                    })
                await clock.advance(by: .milliseconds(10))
            }
            await clock.advance(by: .milliseconds(200))
            #expect(await outcomes(tasks) == [.value(1), .notRun, .notRun, .value(4)])
        }
    }

    @Test func trailingGivesOnlyTheLastCallOfTheWindowItsValue() async {
        await onMainManualClock { clock, _ in
            let throttler = Throttler(.milliseconds(100), by: .taskContext, option: .trailing)
            var tasks: [Task<Int, any Error>] = []
            for value in 1...3 {
                tasks.append(await started { try await throttler.result { value } })
            }
            #expect(await outcomes(Array(tasks.prefix(2))) == [.notRun, .notRun])
            await clock.advance(by: .milliseconds(100))
            #expect(await Outcome(tasks[2]) == .value(3))
        }
    }

    @Test func cancellingTheAwaitingTaskWithdrawsTheKeptTrailingCall() async {
        await onMainManualClock { clock, _ in
            let ran = Log<Int>()
            let throttler = Throttler(.milliseconds(100), option: .trailing)
            let task = await started {
                try await throttler.result { () -> Int in
                    ran.append(1)
                    return 1
                }
            }
            #expect(throttler.pending != nil)
            task.cancel()
            #expect(await Outcome(task) == .cancelled)
            #expect(throttler.pending == nil)
            await clock.advance(by: .milliseconds(200))
            #expect(ran.all.isEmpty)
        }
    }

    @Test func cancellingARunningCallCancelsItsOperation() async {
        await onMainManualClock { clock, _ in
            let throttler = Throttler(.milliseconds(100), by: .taskContext)
            let task = await started {
                try await throttler.result { () -> Int in
                    try await clock.sleep(for: .seconds(1))
                    return 1
                }
            }
            await clock.advance(by: .milliseconds(10))
            task.cancel()
            #expect(await Outcome(task) == .cancelled)
        }
    }
}
