import Synchronization
import TempoTesting
import Testing

@testable import Tempo

// Calls a hostile user makes: a rate-limited call that waits inside an operation the engine
// launched on a manual clock (its work token must not hold the advance that frees the permit).

@Suite struct RateLimitAdversarialTests {
    /// Runs `advance` in a task of its own and says whether it returned within a few seconds
    /// of real time; when it did not, `unstick` frees what held it, so the test ends either way.
    private func advanceReturns(
        _ advance: @escaping @Sendable () async -> Void, unstick: () -> Void
    ) async -> Bool {
        let returned = Flag()
        let task = Task {
            await advance()
            returned.set()
        }
        let inTime = await eventually(within: .seconds(3)) { returned.isSet }
        if !inTime { unstick() }
        await task.value
        return inTime
    }

    @Test func aWaiterInsideALaunchedOperationDoesNotHoldTheClock() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let limit = RateLimit(1, per: .seconds(2))
            #expect(take(limit, key: "k") == nil)  // the next permit is free at 2 s
            delay(.seconds(1), by: .taskContext) {
                try await rateLimit(limit, identifier: "k") { log.append(at("admitted", registry)) }
                // Work after the permit that is not a sleep on the clock: the advance waits
                // for it.
                for _ in 0..<20 { await Task.yield() }
                log.append(at("done", registry))
            }
            let returned = await advanceReturns({ await clock.advance(by: .seconds(3)) }) {
                registry.resetRateLimit(identifier: "k")
            }
            #expect(returned, "the advance waited for a task that waits for the advance")
            #expect(log.all == ["admitted@2000", "done@2000"])
            await clock.advance(by: .seconds(2))
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aWaiterInsideALaunchedOperationThatGivesUpDoesNotHoldTheClock() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let limit = RateLimit(1, per: .seconds(2))
            #expect(take(limit, key: "k") == nil)
            delay(.seconds(1), by: .taskContext) {
                do {
                    try await rateLimit(
                        limit, whenLimited: .wait(atMost: .milliseconds(500)), identifier: "k")
                } catch {
                    for _ in 0..<20 { await Task.yield() }
                    log.append(at("\(error)", registry))
                }
            }
            let returned = await advanceReturns({ await clock.advance(by: .seconds(3)) }) {
                registry.resetRateLimit(identifier: "k")
            }
            #expect(returned, "the advance waited for a task that waits for the advance")
            #expect(log.all == ["limited(retryAfter: 0.5 seconds)@1500"])
        }
    }
}

extension RateLimitAdversarialTests {
    @Test func aCancelledTaskThrowsEvenWhenTheCallWouldTakeNothing() async {
        // Weight zero, and a limit with no interval, take nothing: a cancelled task still throws
        // `CancellationError` without running, as it does for a call that takes a permit.
        await onManualClock { _, registry in
            let ran = Flag()
            let calls: [(RateLimit, Int)] = [
                (RateLimit(1, per: .seconds(1)), 0), (RateLimit(1, per: .seconds(1)), -1),
                (RateLimit(1, per: .zero), 1), (RateLimit(1, per: .seconds(1)), 1),
            ]
            for (limit, weight) in calls {
                let task = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    try await rateLimit(limit, weight: weight, identifier: "k") { ran.set() }
                }
                #expect(await thrown(task) is CancellationError, "\(limit), weight \(weight)")
                let bare = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    try await rateLimit(limit, weight: weight, identifier: "k")
                }
                #expect(await thrown(bare) is CancellationError, "\(limit), weight \(weight)")
            }
            #expect(!ran.isSet)
            #expect(registry.liveKeyCount == 0)
        }
    }
}
