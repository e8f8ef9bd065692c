import TempoTesting
import Testing

@testable import Tempo

@Suite struct ThrottleTests {
    @Test func defaultRunsTheFirstCallAndDropsTheRestOfTheWindow() async {
        let log = Log<(Int, Duration)>()
        await onManualClock { clock, registry in
            // Calls every 300 ms for 3 s with a 1 s window: runs at 0, 1.2, 2.4.
            for i in 0..<10 {
                throttle(.seconds(1), identifier: "t", by: .taskContext) {
                    log.append((i, clock.now.offset))
                }
                await clock.advance(by: .milliseconds(300))
            }
            await clock.runUntilIdle()
            #expect(log.all.map(\.0) == [0, 4, 8])
            #expect(log.all.map(\.1) == [.zero, .milliseconds(1_200), .milliseconds(2_400)])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aCallExactlyAtTheWindowsEndFindsItClosed() async {
        let log = Log<Int>()
        await onManualClock { clock, _ in
            throttle(.seconds(1), identifier: "edge", by: .taskContext) { log.append(1) }
            await clock.advance(by: .seconds(1))
            throttle(.seconds(1), identifier: "edge", by: .taskContext) { log.append(2) }
            #expect(log.all == [1, 2])
        }
    }

    @Test func ensureLastRunsTheLatestDroppedCallWhenTheWindowCloses() async {
        let log = Log<(Int, Duration)>()
        await onManualClock { clock, registry in
            for i in 0..<5 {
                throttle(.seconds(1), identifier: "e", by: .taskContext, option: .ensureLast) {
                    log.append((i, clock.now.offset))
                }
                await clock.advance(by: .milliseconds(100))
            }
            #expect(log.all.map(\.0) == [0])
            await clock.advance(by: .milliseconds(500))
            #expect(log.all.map(\.0) == [0, 4])
            #expect(log.all.map(\.1) == [.zero, .seconds(1)])
            // The trailing run opened a window at 1 s: a call at 1.5 s waits for 2 s.
            throttle(.seconds(1), identifier: "e", by: .taskContext, option: .ensureLast) {
                log.append((5, clock.now.offset))
            }
            #expect(log.all.count == 2)
            await clock.runUntilIdle()
            #expect(log.all.map(\.0) == [0, 4, 5])
            #expect(log.all.map(\.1) == [.zero, .seconds(1), .seconds(2)])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func ensureLastSingleCallRunsOnce() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            throttle(.seconds(1), identifier: "s", by: .taskContext, option: .ensureLast) {
                log.append(1)
            }
            await clock.runUntilIdle()
            #expect(log.all == [1])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test(arguments: [Duration.zero, .nanoseconds(-1)])
    func zeroOrNegativeDurationRunsEveryCallAtOnce(duration: Duration) async {
        let log = Log<Int>()
        await onManualClock { _, registry in
            for i in 0..<3 { throttle(duration, by: .taskContext) { log.append(i) } }
            #expect(log.all == [0, 1, 2])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func asyncOverloadDropsCallsAndFinishesTheirTasks() async {
        let log = Log<Int>()
        await onManualClock { clock, _ in
            let first =
                throttle(.seconds(1), identifier: "a", by: .taskContext) { log.append(1) }
                as Task<Void, Never>
            let dropped =
                throttle(.seconds(1), identifier: "a", by: .taskContext) { log.append(2) }
                as Task<Void, Never>
            await first.value
            await dropped.value
            #expect(log.all == [1])
            await clock.advance(by: .seconds(1))
            #expect(log.all == [1])
        }
    }

    @Test func cancellingAThrottlersTrailingTaskWithdrawsIt() async {
        let log = Log<Int>()
        await onManualClock { clock, _ in
            let throttler = Throttler(.seconds(1), by: .taskContext, option: .ensureLast)
            throttler { log.append(1) }
            let trailing = throttler(onError: nil) { log.append(2) }
            trailing.cancel()
            await trailing.value
            await clock.runUntilIdle()
            #expect(log.all == [1])
        }
    }

    @Test func cancelThrottleWithdrawsAKeptAsyncTrailingCall() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            throttle(.seconds(1), identifier: "w", by: .taskContext, option: .ensureLast) {
                log.append(1)
            }
            _ =
                throttle(.seconds(1), identifier: "w", by: .taskContext, option: .ensureLast) {
                    log.append(2)
                } as Task<Void, Never>
            #expect(pendingThrottle(identifier: "w") != nil)
            cancelThrottle(identifier: "w")
            await clock.runUntilIdle()
            #expect(log.all == [1])
            #expect(registry.liveKeyCount == 0)
        }
    }
}
