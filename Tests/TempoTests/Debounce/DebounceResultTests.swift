import Tempo
import TempoTesting
import Testing

/// The awaited `debounce` forms: the caller whose call runs gets its value or error, every
/// other caller is settled at once, in every mode.
@MainActor @Suite(.timeLimit(.minutes(5))) struct DebounceResultTests {
    @Test func theLatestCallOfABurstGetsTheValueAndTheReplacedOnesAreSettledAtOnce() async {
        await onMainManualClock { clock, registry in
            var tasks: [Task<Int, any Error>] = []
            for value in 1...3 {
                tasks.append(
                    await started {
                        try await debounceResult(.milliseconds(100), identifier: "d") { value }
                    })
            }
            // Settled without advancing the clock: a replaced call is told at once.
            #expect(await outcomes(Array(tasks.prefix(2))) == [.notRun, .notRun])
            await clock.advance(by: .milliseconds(100))
            #expect(await Outcome(tasks[2]) == .value(3))
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func theRunningCallerGetsTheOperationsError() async {
        await onMainManualClock { clock, _ in
            let task = await started {
                try await debounceResult(.milliseconds(10), identifier: "e") { () -> Int in
                    throw Boom(attempt: 7)
                }
            }
            await clock.advance(by: .milliseconds(10))
            #expect(await Outcome(task) == .failed("boom 7"))
        }
    }

    @Test func runFirstGivesTheLeadingAndTheTrailingCallTheirOwnValues() async {
        await onMainManualClock { clock, _ in
            var tasks: [Task<String, any Error>] = []
            for value in ["a", "b", "c"] {
                tasks.append(
                    await started {
                        try await debounceResult(
                            .milliseconds(50), identifier: "r", by: .taskContext,
                            option: .runFirst
                        ) { value }
                    })
                await clock.advance(by: .milliseconds(10))
            }
            await clock.advance(by: .milliseconds(100))
            #expect(await outcomes(tasks) == [.value("a"), .notRun, .value("c")])
        }
    }

    @Test func leadingGivesTheFirstCallItsValueAndDropsTheRest() async {
        await onMainManualClock { clock, _ in
            var tasks: [Task<Int, any Error>] = []
            for value in 1...3 {
                tasks.append(
                    await started {
                        try await debounceResult(
                            .milliseconds(50), identifier: "l", by: .ownedActor, option: .leading
                        ) {
                            TempoActor.shared.assertIsolated()
                            return value
                        }
                    })
            }
            await clock.advance(by: .milliseconds(100))
            #expect(await outcomes(tasks) == [.value(1), .notRun, .notRun])
        }
    }

    @Test func maxWaitRunsTheLatestCallOfAnEndlessBurstAndSettlesTheOthers() async {
        await onMainManualClock { clock, _ in
            var tasks: [Task<Int, any Error>] = []
            for value in 1...6 {
                tasks.append(
                    await started {
                        try await debounceResult(
                            .milliseconds(30), identifier: "m", maxWait: .milliseconds(50)
                        ) {
                            MainActor.assertIsolated()
                            return value
                        }
                    })
                await clock.advance(by: .milliseconds(20))
            }
            await clock.advance(by: .milliseconds(100))
            // Calls at 0, 20, 40, 60, 80, 100: maxWait runs the one from 40 at 50; the next
            // burst, from 60, runs its latest (from 100) at 110, again by maxWait.
            #expect(
                await outcomes(tasks) == [.notRun, .notRun, .value(3), .notRun, .notRun, .value(6)])
        }
    }

    @Test func aZeroDurationRunsAtOnceAndReturnsTheValue() async {
        await onMainManualClock { _, _ in
            let value = try? await debounceResult(.zero, by: .taskContext) { 42 }
            #expect(value == 42)
        }
    }

    @Test func cancellingTheAwaitingTaskWithdrawsItsCall() async {
        await onMainManualClock { clock, _ in
            let ran = Log<Int>()
            let debouncer = Debouncer(.milliseconds(50))
            let task = await started {
                try await debouncer.result { () -> Int in
                    ran.append(1)
                    return 1
                }
            }
            #expect(debouncer.pending != nil)
            task.cancel()
            #expect(await Outcome(task) == .cancelled)
            #expect(debouncer.pending == nil)
            await clock.advance(by: .milliseconds(100))
            #expect(ran.all.isEmpty)
        }
    }

    @Test func cancellingADebouncerSettlesItsWaitingCaller() async {
        await onMainManualClock { clock, _ in
            let debouncer = Debouncer(.milliseconds(50), by: .taskContext)
            let task = await started { try await debouncer.result { 1 } }
            debouncer.cancel()
            #expect(await Outcome(task) == .notRun)
            await clock.advance(by: .milliseconds(100))
        }
    }

    @Test func aDebouncerGivesItsLatestCallerTheValue() async {
        await onMainManualClock { clock, _ in
            let debouncer = Debouncer(.milliseconds(50))
            var tasks: [Task<String, any Error>] = []
            for value in ["x", "y"] {
                tasks.append(await started { try await debouncer.result { value } })
            }
            await clock.advance(by: .milliseconds(50))
            #expect(await outcomes(tasks) == [.notRun, .value("y")])
        }
    }
}
