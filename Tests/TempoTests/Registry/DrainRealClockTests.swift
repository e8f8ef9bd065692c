import Tempo
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `drain(within:)` on `ContinuousClock`, at shutdown: 1,000 debounced writes on 100 keys are
/// pending (a minute from running), on every actor and through every front; the drain runs
/// each key's latest write exactly once, returns once all have finished, and nothing runs
/// after it returns. The margins are generous: the writes' quiet window is a minute, and the
/// drain's limit 60 s, where the drain takes milliseconds.
@Suite struct DrainRealClockTests {
    /// Every write that landed, with whether the drain had already returned.
    final class Store: Sendable {
        private let state = Lock<(writes: [String: [Int]], late: Int, drained: Bool)>(
            ([:], 0, false))

        func write(_ key: String, _ value: Int) {
            state.withLock { state in
                state.writes[key, default: []].append(value)
                if state.drained { state.late += 1 }
            }
        }

        func markDrained() { state.withLock { $0.drained = true } }
        var writes: [String: [Int]] { state.withLock { $0.writes } }
        var late: Int { state.withLock { $0.late } }
    }

    @Test func everyKeysLatestWriteLandsOnceAndNothingRunsAfterTheDrain() async throws {
        let registry = TempoRegistry(clock: ContinuousClock())
        let store = Store()
        let keys = (0..<100).map { "doc\($0)" }
        let scoped = keys.map { _ in Debouncer(.seconds(60), by: .ownedActor, registry: registry) }
        // The writes: ten per key, the last one (9) the one that must land.
        registry.withCurrent {
            for value in 0..<10 {
                for (index, key) in keys.enumerated() {
                    let quiet = Duration.seconds(60)
                    switch index % 5 {
                    case 0:
                        debounce(quiet, identifier: key, by: .taskContext) {
                            store.write(key, value)
                        }
                    case 1:
                        debounce(quiet, identifier: key, by: .mainActor) {
                            store.write(key, value)
                        }
                    case 2:
                        // Asynchronous: still running (asleep) when the drain first looks.
                        debounce(quiet, identifier: key, by: .ownedActor) { () async throws in
                            try await Task.sleep(for: .milliseconds(20))
                            store.write(key, value)
                        }
                    case 3:
                        let debouncer = scoped[index]
                        debouncer { store.write(key, value) }
                    default:
                        throttle(quiet, identifier: key, by: .taskContext, option: .trailing) {
                            store.write(key, value)
                        }
                    }
                }
            }
        }
        #expect(store.writes.isEmpty)
        #expect(registry.liveKeyCount == 100)

        let report = await registry.drain(within: .seconds(60))
        store.markDrained()

        #expect(report.isComplete, "\(report)")
        #expect(report.runningOperations == 0)
        let writes = store.writes
        #expect(writes.count == 100)
        for key in keys {
            #expect(writes[key] == [9], "\(key): \(writes[key] ?? [])")
        }
        // The throttle groups' windows opened by their flushed runs are still live; nothing
        // in them is pending. Cancel them, then watch: nothing may run any more.
        #expect(registry.snapshot().entries.allSatisfy { $0.kind == .throttle })
        registry.cancelAll()
        try await Task.sleep(for: .milliseconds(300))
        #expect(store.late == 0)
        #expect(registry.liveKeyCount == 0)
        #expect(registry.snapshot().runningOperations == 0)
        withExtendedLifetime(scoped) {}
    }

    /// A drain racing a `.taskContext` call from another task: the call may enter its group
    /// after the drain's flush and before its look, and then run in the caller when it flushes
    /// its group itself (a drain is in progress), uncounted. That flush wakes the drain, which
    /// looks again and returns. (Before it did, about one round in a few thousand never
    /// returned.)
    @Test func aDrainRacingATaskContextCallFromAnotherTaskReturns() async {
        for round in 0..<4_000 {
            let registry = TempoRegistry(clock: ContinuousClock())
            let done = Log<Bool>()
            let drain = Task {
                await registry.drain()
                done.append(true)
            }
            await Task {
                registry.withCurrent {
                    debounce(.milliseconds(1), identifier: "k", by: .taskContext) {}
                }
            }.value
            let returned = await eventually(within: .seconds(10)) { done.count == 1 }
            if !returned {
                Issue.record("round \(round): the drain never returned: \(registry.snapshot())")
                drain.cancel()
                return
            }
        }
    }

    /// A `.taskContext` operation a timer starts on the real clock runs in a task of its own
    /// (not on the timer's runner), and that task counts as running from its launch until the
    /// operation returns: a drain that looks while the operation runs reports it, and a drain
    /// returns only after it has finished. The operation is held until the test lets it go, so
    /// the outcome does not depend on how soon a busy pool gives the drain a thread (a drain
    /// that did not count the run used to survive a whole-suite run by looking only after a
    /// 200 ms or 1 s operation had written). The margins are generous: the test waits up to
    /// 60 s for the timer, which a loaded run has been seen to fire seconds late.
    @Test func aDrainWaitsForATaskContextRunItsTimerStarted() async {
        let registry = TempoRegistry(clock: ContinuousClock())
        let store = Store()
        // The operation says it has started, then blocks its thread until the gate opens. The
        // gate is opened before the last drain whatever the checks found, so nothing stays
        // blocked.
        let started = Log<Bool>()
        let gate = BlockingGate()
        registry.withCurrent {
            delay(.milliseconds(50), by: .taskContext) {
                started.append(true)
                gate.wait()
                store.write("delay", 1)
            }
        }
        // The test goes on from a thread of its own: the operation holds a thread of the task
        // pool until the test opens the gate, and in a parallel run on two cores another test
        // may hold the other one until a timer of its own fires, which needs a thread of the
        // pool too. Were this test's polls and drains to wait for the pool, neither could go
        // on (a CI run stalled 60 s that way). From its own thread the test reaches the gate
        // without a thread of the pool (a poll's wake-up may wait about a second for the
        // system to add a worker thread when both are held, no more).
        let executor = ThreadExecutor()
        defer { executor.stop() }
        await withTaskExecutorPreference(executor) {
            // The timer has fired and launched the operation, which is now blocked in its task.
            #expect(await eventually(within: .seconds(60)) { started.count == 1 })
            // A drain with no time to wait reports what it found at its one look: the delay is
            // no longer pending, and its operation is still running.
            let look = await registry.drain(within: .zero)
            let writtenAtTheLook = store.writes["delay"]
            gate.open()
            #expect(!look.isComplete, "\(look)")
            #expect(look.runningOperations == 1, "\(look)")
            #expect(look.pending.isEmpty, "\(look)")
            #expect(writtenAtTheLook == nil)

            let report = await registry.drain(within: .seconds(60))
            store.markDrained()
            #expect(report.isComplete, "\(report)")
            #expect(store.writes["delay"] == [1])
            #expect(store.late == 0)
            #expect(registry.snapshot().runningOperations == 0)
        }
    }
}
