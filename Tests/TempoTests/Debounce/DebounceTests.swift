import TempoTesting
import Testing

@testable import Tempo

@Suite struct DebounceTests {
    @Test func burstRunsOnlyTheLastCallAfterTheQuietWindow() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            for i in 1...5 {
                debounce(.milliseconds(300), identifier: "q", by: .taskContext) { log.append(i) }
                await clock.advance(by: .milliseconds(100))
            }
            #expect(log.all == [])
            await clock.advance(by: .milliseconds(199))
            #expect(log.all == [])
            await clock.advance(by: .milliseconds(1))
            #expect(log.all == [5])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func runFirstRunsTheFirstCallNowAndTheLastAtTheEnd() async {
        let log = Log<(Int, Duration)>()
        await onManualClock { clock, registry in
            for i in 1...4 {
                debounce(.seconds(1), identifier: "k", by: .taskContext, option: .runFirst) {
                    log.append((i, clock.now.offset))
                }
                await clock.advance(by: .milliseconds(200))
            }
            #expect(log.all.map(\.0) == [1])
            await clock.runUntilIdle()
            #expect(log.all.map(\.0) == [1, 4])
            // The last call came at 600 ms; it runs one second later.
            #expect(log.all.map(\.1) == [.zero, .milliseconds(1_600)])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func runFirstSingleCallRunsOnceNeverTwice() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "one", by: .taskContext, option: .runFirst) {
                log.append(1)
            }
            #expect(log.all == [1])
            await clock.advance(by: .seconds(5))
            #expect(log.all == [1])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func runFirstDebouncesACallWithinDurationOfTheLastRun() async {
        let log = Log<Int>()
        await onManualClock { clock, _ in
            debounce(.seconds(1), identifier: "k", by: .taskContext, option: .runFirst) {
                log.append(1)
            }
            await clock.advance(by: .milliseconds(500))
            debounce(.seconds(1), identifier: "k", by: .taskContext, option: .runFirst) {
                log.append(2)
            }
            #expect(log.all == [1])  // only 500 ms since the group ran
            await clock.advance(by: .seconds(1))
            #expect(log.all == [1, 2])
            await clock.advance(by: .seconds(1))
            debounce(.seconds(1), identifier: "k", by: .taskContext, option: .runFirst) {
                log.append(3)
            }
            #expect(log.all == [1, 2, 3])  // a full second since the last run: runs at once
        }
    }

    @Test(arguments: [Duration.zero, .milliseconds(-5), .seconds(Int64.min)])
    func zeroOrNegativeDurationRunsAtOnce(duration: Duration) async {
        let log = Log<Int>()
        await onManualClock { _, registry in
            debounce(duration, by: .taskContext) { log.append(1) }
            debounce(duration, by: .taskContext, option: .runFirst) { log.append(2) }
            #expect(log.all == [1, 2])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func callSitesAreSeparateGroupsAndIdentifiersAreShared() async {
        let log = Log<String>()
        await onManualClock { clock, _ in
            for _ in 0..<3 {
                debounce(.seconds(1), by: .taskContext) { log.append("site A") }
                debounce(.seconds(1), by: .taskContext) { log.append("site B") }
            }
            debounce(.seconds(1), identifier: "shared", by: .taskContext) { log.append("one") }
            debounce(.seconds(1), identifier: "shared", by: .taskContext) { log.append("two") }
            await clock.advance(by: .seconds(1))
            #expect(log.all.sorted() == ["site A", "site B", "two"])
        }
    }

    @Test func debounceAndThrottleStateAreSeparateForOneIdentifier() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "same", by: .taskContext) { log.append("debounce") }
            throttle(.seconds(1), identifier: "same", by: .taskContext) { log.append("throttle") }
            #expect(log.all == ["throttle"])
            #expect(registry.liveKeyCount == 2)
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["throttle", "debounce"])
        }
    }

    @Test func emptyAndVeryLongUnicodeIdentifiersAreOrdinary() async {
        let log = Log<String>()
        let long = String(repeating: "ταχύτητα🚀", count: 10_000)
        await onManualClock { clock, registry in
            for id in ["", long, "e\u{301}"] {
                debounce(.seconds(1), identifier: id, by: .taskContext) { log.append("first") }
                debounce(.seconds(1), identifier: id, by: .taskContext) { log.append(id) }
            }
            // "é" precomposed is the same identifier as "e" + combining accent.
            debounce(.seconds(1), identifier: "\u{e9}", by: .taskContext) { log.append("é") }
            #expect(registry.liveKeyCount == 3)
            await clock.advance(by: .seconds(1))
            #expect(log.all.sorted() == ["", "é", long].sorted())
        }
    }

    @Test func mainActorOverloadsRunOnTheMainActor() async {
        let log = Log<String>()
        await onManualClock { clock, _ in
            debounce(.milliseconds(300)) { log.append("by default") }
            debounce(.milliseconds(300), identifier: "m") { @MainActor in
                MainActor.assertIsolated()
                log.append("main closure")
            }
            debounce(.milliseconds(300), identifier: "o", by: .ownedActor) {
                log.append("owned")
            }
            await clock.advance(by: .milliseconds(300))
            #expect(log.all.sorted() == ["by default", "main closure", "owned"])
        }
    }

    @Test func asyncOverloadRunsTheLastCallAndReportsErrors() async {
        struct Boom: Error, Equatable { let n: Int }
        let log = Log<Int>()
        let errors = Log<Int>()
        await onManualClock { clock, registry in
            var tasks: [Task<Void, Never>] = []
            for i in 1...3 {
                tasks.append(
                    debounce(
                        .seconds(1), identifier: "a", by: .taskContext,
                        onError: { errors.append(($0 as? Boom)?.n ?? -1) }
                    ) {
                        log.append(i)
                        throw Boom(n: i)
                    })
            }
            // The calls are stored in the engine: their tasks are done at once.
            await tasks[0].value
            await tasks[1].value
            #expect(log.all == [])
            await clock.advance(by: .seconds(1))
            await tasks[2].value
            #expect(log.all == [3])
            #expect(errors.all == [3])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func cancellingADebouncersTaskWithdrawsThePendingCall() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.seconds(1), by: .taskContext)
            let task = debouncer(onError: nil) { log.append(1) }
            #expect(registry.liveKeyCount == 1)
            task.cancel()
            await task.value
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(2))
            #expect(log.all == [])
        }
    }

    @Test func cancelDebounceWithdrawsAPendingAsyncCall() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "c", by: .taskContext, onError: nil) {
                log.append(1)
            }
            #expect(registry.liveKeyCount == 1)
            cancelDebounce(identifier: "c")
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(2))
            #expect(log.all == [])
        }
    }

    @Test func aRunningOperationIsNotCancelledByANewerCall() async {
        let log = Log<String>()
        await onManualClock { clock, _ in
            debounce(.seconds(1), identifier: "r", by: .taskContext) {
                log.append("start 1")
                // Sleeps on the manual clock: still running when the next call comes.
                try await clock.sleep(for: .seconds(5))
                log.append("end 1 cancelled=\(Task.isCancelled)")
            }
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["start 1"])
            debounce(.seconds(1), identifier: "r", by: .taskContext) { log.append("2") }
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["start 1", "2"])
            await clock.advance(by: .seconds(4))
            #expect(log.all == ["start 1", "2", "end 1 cancelled=false"])
        }
    }

    @Test func theOperationRunsAtTheLastCallsInstantPlusDuration() async {
        let ranAt = Log<Duration>()
        await onManualClock { clock, _ in
            debounce(.milliseconds(250), identifier: "t", by: .taskContext) {
                ranAt.append(clock.now.offset)
            }
            await clock.advance(by: .milliseconds(70))
            debounce(.milliseconds(250), identifier: "t", by: .taskContext) {
                ranAt.append(clock.now.offset)
            }
            await clock.advance(by: .seconds(10))
            #expect(ranAt.all == [.milliseconds(320)])
        }
    }

    @Test func anOperationMayCallBackIntoTheEngine() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "outer", by: .taskContext) {
                log.append("outer, live keys: \(registry.liveKeyCount)")
                debounce(.seconds(1), identifier: "inner", by: .taskContext) { log.append("inner") }
                _ = registry.snapshot()
            }
            await clock.advance(by: .seconds(1))
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["outer, live keys: 0", "inner"])
        }
    }
}
