import Foundation
import TempoTesting
import Testing

@testable import Tempo

// Calls a hostile user makes: a rate-limited call that waits inside an operation the engine
// launched on a manual clock (its work token must not hold the advance that frees the permit),
// a cancelled task whose call takes nothing, calls from one actor that must queue in order,
// and plain threads and tasks on one key.

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
        // `CancellationError` without running, as it does for a call that takes a permit. So
        // does a weight that could never be admitted (above the burst, or a limit of no
        // permits), for a token bucket and a window limit: "whatever its weight". (Those two
        // threw `cannotAdmit` before the fix.)
        await onManualClock { _, registry in
            let ran = Flag()
            let calls: [(RateLimit, Int)] = [
                (RateLimit(1, per: .seconds(1)), 0), (RateLimit(1, per: .seconds(1)), -1),
                (RateLimit(1, per: .zero), 1), (RateLimit(1, per: .seconds(1)), 1),
                (RateLimit(2, per: .seconds(1)), 5), (RateLimit(0, per: .seconds(1)), 1),
                (.window(2, per: .seconds(1)), 0), (.window(2, per: .seconds(1)), 1),
                (.window(2, per: .seconds(1)), 5), (.window(0, per: .seconds(1)), 1),
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

/// A count that any thread may add to.
private final class Counter: Sendable {
    private let count = Lock(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// Runs the jobs of an actor on a thread of its own, strictly in the order they come, whatever
/// their priority.
private final class FIFOExecutor: ThreadExecutor, SerialExecutor, @unchecked Sendable {
    override func runJob(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedSerialExecutor())
    }
}

/// An actor on a ``FIFOExecutor`` whose calls wait for permits of one key.
private actor OrderedCaller {
    let executor = FIFOExecutor()
    var started: [String] = []
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Starts one task per label, in order, each on this actor: the first at the lowest
    /// priority, the others at a high one.
    func start(
        _ labels: [String], limit: RateLimit, key: String, registry: TempoRegistry,
        log: Log<String>
    ) -> [Task<Void, Never>] {
        labels.map { label in
            Task(priority: label == labels[0] ? .background : .high) {
                started.append(label)
                await self.call(label, limit: limit, key: key, registry: registry, log: log)
            }
        }
    }

    func takeStarted() -> [String] {
        defer { started = [] }
        return started
    }

    func call(
        _ label: String, limit: RateLimit, key: String, registry: TempoRegistry, log: Log<String>
    ) async {
        await registry.withCurrent {
            try? await rateLimit(limit, identifier: key) {
                self.preconditionIsolated()
                log.append(label)
            }
        }
    }
}

extension RateLimitAdversarialTests {
    @Test func waitersFromOneActorQueueInTheOrderTheyCalled() async {
        // Calls made one after another on an actor join the queue in that order: the wait
        // starts on the caller's actor, so no call can overtake another on its way to the
        // queue, whatever their priorities.
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let caller = OrderedCaller()
        let limit = RateLimit(1, per: .seconds(1))
        let labels = ["a", "b", "c", "d", "e", "f", "g", "h"]
        for round in 0..<20 {
            let key = "order-\(round)"
            registry.withCurrent { #expect(take(limit, key: key) == nil) }
            let log = Log<String>()
            let tasks = await caller.start(
                labels, limit: limit, key: key, registry: registry, log: log)
            #expect(await eventually { rateWaiters(registry, key) == labels.count })
            await clock.advance(by: .seconds(labels.count))
            for task in tasks { await task.value }
            #expect(log.all == labels, "round \(round)")
            #expect(await caller.takeStarted() == labels, "round \(round)")
        }
        caller.executor.stop()
    }
}

extension RateLimitAdversarialTests {
    @Test func realClockTasksAndPlainThreadsNeverExceedTheRate() async {
        // More threads than cores: 16 tasks wait for permits of one key while 8 plain threads
        // take permits without waiting. Over the whole run the key admits at most its burst
        // plus its rate times the time elapsed, and it leaves the registry once idle.
        let registry = TempoRegistry(clock: ContinuousClock())
        let limit = RateLimit(400, per: .milliseconds(100), burst: 20)  // one per 250 µs
        let key = "hammer"
        let admitted = Counter()
        let refused = Counter()
        let start = ContinuousClock.now
        let threadsDone = DispatchGroup()
        for _ in 0..<8 {
            threadsDone.enter()
            Thread {
                registry.withCurrent {
                    for _ in 0..<300 {
                        do {
                            try takeRatePermit(limit, identifier: key)
                            admitted.add()
                        } catch {
                            refused.add()
                        }
                    }
                }
                threadsDone.leave()
            }.start()
        }
        await registry.withCurrent {
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<16 {
                    group.addTask {
                        for index in 0..<40 {
                            let policy: RateLimitPolicy =
                                index % 3 == 0 ? .wait(atMost: .milliseconds(2)) : .wait
                            do {
                                try await rateLimit(limit, whenLimited: policy, identifier: key) {
                                    admitted.add()
                                }
                            } catch {
                                refused.add()
                            }
                            if (task + index) % 9 == 0 { await Task.yield() }
                        }
                    }
                }
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                threadsDone.wait()
                continuation.resume()
            }
        }
        let elapsed = ContinuousClock.now - start
        let total = admitted.value
        // burst + rate × elapsed, with the elapsed time rounded up to whole permits.
        let allowed = 20 + Int((elapsed / .microseconds(250)).rounded(.up)) + 1
        #expect(total <= allowed, "\(total) admitted in \(elapsed), at most \(allowed)")
        #expect(total + refused.value == 8 * 300 + 16 * 40)
        #expect(total >= 16 * 26)  // the 26 calls of each task that wait without a maximum ran
        #expect(await eventually { registry.liveKeyCount == 0 })
    }
}
