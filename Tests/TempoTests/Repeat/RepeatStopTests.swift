import TempoTesting
import Testing

@testable import Tempo

/// A `repeat` stopped before its first iteration starts never runs it: a loop that starts at
/// once gets its task scheduled, and a cancel that reaches it before the task runs must win.
@Suite struct RepeatFirstIterationStopTests {
    // A loop's task may start before the cancel reaches it (another thread picks it up at
    // once), and then its first iteration rightly runs; most are stopped first. Without the
    // check before each iteration, every loop runs once.
    @Test func aRepeatStoppedBeforeItsFirstIterationNeverRunsIt() async {
        let ran = Log<Int>()
        let rounds = 50
        await onManualClock { _, _ in
            var tasks: [Task<Void, Never>] = []
            for round in 0..<rounds {
                let byName = `repeat`(
                    every: .seconds(1), startingImmediately: true, identifier: "r", by: .taskContext
                ) { ran.append(round) }
                cancelRepeat(identifier: "r")
                let byTask = `repeat`(
                    every: .seconds(1), startingImmediately: true, by: .taskContext
                ) { ran.append(round) }
                byTask.cancel()
                tasks += [byName, byTask]
            }
            for task in tasks { await task.value }
        }
        #expect(ran.count < rounds)
    }
}
