import Tempo
import TempoTesting
import Testing

// Every rule of `concurrencyLimit`, on the manual clock. Each operation logs its start and end
// stamped with the registry's time (`"start a@1000"`: at 1 000 ms) and sleeps on the clock.

@Suite struct ConcurrencyLimitTests {
    @Test func atMostLimitRunAndTheRestRunInArrivalOrder() async throws {
        try await onManualClock { clock, registry in
            let log = Log<String>()
            let inFlight = InFlight()
            var tasks: [Task<Void, any Error>] = []
            for (index, label) in ["a", "b", "c", "d", "e"].enumerated() {
                tasks.append(
                    limitedCall(
                        label, limit: 2, clock: clock, registry: registry, log: log,
                        inFlight: inFlight))
                #expect(
                    await awaitCounts(
                        registry, "api", running: min(index + 1, 2), queued: max(index - 1, 0)))
            }
            await clock.advance(by: .seconds(1))
            #expect(limitCounts(registry, "api")! == (2, 1))
            await clock.advance(by: .seconds(1))
            #expect(limitCounts(registry, "api")! == (1, 0))
            await clock.advance(by: .seconds(1))
            for task in tasks { try await task.value }
            #expect(inFlight.peak == 2)
            let starts = log.all.filter { $0.hasPrefix("start") }
            #expect(
                starts == [
                    "start a@0", "start b@0", "start c@1000", "start d@1000", "start e@2000",
                ]
                    || starts == [
                        "start a@0", "start b@0", "start d@1000", "start c@1000", "start e@2000",
                    ])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func oneAtATimeRunsInStrictArrivalOrder() async throws {
        try await onManualClock { clock, registry in
            let log = Log<String>()
            var tasks: [Task<Void, any Error>] = []
            for (index, label) in ["a", "b", "c", "d"].enumerated() {
                tasks.append(
                    limitedCall(label, limit: 1, clock: clock, registry: registry, log: log))
                #expect(await awaitCounts(registry, "api", running: 1, queued: index))
            }
            await clock.advance(by: .seconds(4))
            for task in tasks { try await task.value }
            #expect(
                log.all == [
                    "start a@0", "end a@1000", "start b@1000", "end b@2000", "start c@2000",
                    "end c@3000", "start d@3000", "end d@4000",
                ])
        }
    }

    @Test func aFullQueueTurnsCallsAwayAtOnce() async throws {
        try await onManualClock { clock, registry in
            let log = Log<String>()
            let a = limitedCall("a", limit: 1, queue: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            let b = limitedCall("b", limit: 1, queue: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 1))
            let c = limitedCall("c", limit: 1, queue: 1, clock: clock, registry: registry, log: log)
            let error = await thrown(c)
            #expect(error as? ConcurrencyLimitError == .queueFull(running: 1, queued: 1))
            await clock.advance(by: .seconds(2))
            try await a.value
            try await b.value
            #expect(log.all == ["start a@0", "end a@1000", "start b@1000", "end b@2000"])
        }
    }

    @Test func aQueueOfZeroTurnsAwayEveryCallThatCannotRun() async throws {
        try await onManualClock { clock, registry in
            let log = Log<String>()
            let a = limitedCall("a", limit: 1, queue: 0, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            let b = limitedCall("b", limit: 1, queue: 0, clock: clock, registry: registry, log: log)
            #expect(await thrown(b) as? ConcurrencyLimitError == .queueFull(running: 1, queued: 0))
            await clock.advance(by: .seconds(1))
            try await a.value
        }
    }

    @Test func aCancelledWaiterLeavesTheQueueAndNeverRuns() async throws {
        try await onManualClock { clock, registry in
            let log = Log<String>()
            let a = limitedCall("a", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            let b = limitedCall("b", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 1))
            let c = limitedCall("c", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 2))
            b.cancel()
            #expect(await thrown(b) is CancellationError)
            #expect(limitCounts(registry, "api")! == (1, 1))
            await clock.advance(by: .seconds(2))
            try await a.value
            try await c.value
            #expect(log.all == ["start a@0", "end a@1000", "start c@1000", "end c@2000"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aWaiterGivesUpAfterItsQueueTimeout() async throws {
        try await onManualClock { clock, registry in
            let log = Log<String>()
            let a = limitedCall(
                "a", limit: 1, seconds: 5, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            let b = limitedCall(
                "b", limit: 1, queueTimeout: .seconds(2), clock: clock, registry: registry, log: log
            )
            #expect(await awaitCounts(registry, "api", running: 1, queued: 1))
            let c = limitedCall("c", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 2))
            await clock.advance(by: .milliseconds(1_999))
            #expect(limitCounts(registry, "api")! == (1, 2))
            await clock.advance(by: .milliseconds(1))
            #expect(await thrown(b) as? ConcurrencyLimitError == .queueTimedOut(.seconds(2)))
            #expect(limitCounts(registry, "api")! == (1, 1))
            await clock.advance(by: .seconds(4))
            try await a.value
            try await c.value
            #expect(log.all == ["start a@0", "end a@5000", "start c@5000", "end c@6000"])
        }
    }

    @Test func theSlotIsReleasedOnSuccessErrorAndCancellation() async throws {
        try await onManualClock { clock, registry in
            let log = Log<String>()
            let a = limitedCall(
                "a", limit: 1, clock: clock, registry: registry, log: log, fails: true)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            let b = limitedCall(
                "b", limit: 1, seconds: 10, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 1))
            let c = limitedCall("c", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 2))
            await clock.advance(by: .seconds(1))  // a throws: b gets the slot
            #expect(await thrown(a) is Boom)
            #expect(log.all == ["start a@0", "end a@1000", "start b@1000"])
            b.cancel()  // b is cancelled while it runs: c gets the slot
            #expect(await thrown(b) is CancellationError)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            await clock.advance(by: .seconds(1))  // c returns
            try await c.value
            #expect(
                log.all == [
                    "start a@0", "end a@1000", "start b@1000", "start c@1000", "end c@2000",
                ])
            #expect(registry.liveKeyCount == 0)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func aCallMadeAsASlotIsHandedOnMustWait() async throws {
        // The slot a call releases belongs to the first waiter before the releasing call
        // returns: a call made right after it, in the same task, finds no free slot.
        try await onManualClock { clock, registry in
            let log = Log<String>()
            let outcome = Log<String>()
            let a = Task {
                try await concurrencyLimit(1, queue: 1, identifier: "api") {
                    try await clock.sleep(for: .seconds(1))
                }
                do {
                    try await concurrencyLimit(1, queue: 0, identifier: "api") {
                        outcome.append("barged in")
                    }
                } catch {
                    outcome.append("\(error)")
                }
            }
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            let b = limitedCall("b", limit: 1, queue: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 1))
            await clock.advance(by: .seconds(1))
            try await a.value
            #expect(outcome.all == ["queueFull(running: 1, queued: 0)"])
            await clock.advance(by: .seconds(1))
            try await b.value
            #expect(log.all == ["start b@1000", "end b@2000"])
        }
    }

    @Test func resetTurnsAwayTheWaitersAndLetsRunningCallsFinish() async throws {
        try await onManualClock { clock, registry in
            let log = Log<String>()
            let a = limitedCall("a", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            let b = limitedCall(
                "b", limit: 1, queueTimeout: .seconds(5), clock: clock, registry: registry, log: log
            )
            #expect(await awaitCounts(registry, "api", running: 1, queued: 1))
            resetConcurrencyLimit(identifier: "api")
            #expect(await thrown(b) as? ConcurrencyLimitError == .reset)
            #expect(limitCounts(registry, "api")! == (1, 0))
            // The limit still holds: a's slot is taken until a ends.
            let c = limitedCall("c", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 1))
            await clock.advance(by: .seconds(2))
            try await a.value
            try await c.value
            #expect(log.all == ["start a@0", "end a@1000", "start c@1000", "end c@2000"])
            registry.resetConcurrencyLimit(identifier: "idle")  // nothing live: does nothing
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func callSitesAreKeysOfTheirOwn() async throws {
        try await onManualClock { clock, registry in
            let inFlight = InFlight()
            let tasks =
                (0..<2).map { _ in
                    Task {
                        try await concurrencyLimit(1) {
                            inFlight.enter()
                            defer { inFlight.leave() }
                            try await clock.sleep(for: .seconds(1))
                        }
                    }
                }
                + (0..<2).map { _ in
                    Task {
                        try await concurrencyLimit(1) {
                            inFlight.enter()
                            defer { inFlight.leave() }
                            try await clock.sleep(for: .seconds(1))
                        }
                    }
                }
            #expect(
                await eventually {
                    registry.snapshot().entries.map(\.state) == [
                        .concurrencyLimit(running: 1, queued: 1),
                        .concurrencyLimit(running: 1, queued: 1),
                    ]
                })
            #expect(inFlight.now == 2)
            await clock.advance(by: .seconds(2))
            for task in tasks { try await task.value }
            #expect(inFlight.peak == 2)
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func theSnapshotShowsRunningAndWaitingCalls() async throws {
        try await onManualClock { clock, registry in
            let log = Log<String>()
            let a = limitedCall(
                "a", key: "db", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "db", running: 1, queued: 0))
            let b = limitedCall(
                "b", key: "db", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "db", running: 1, queued: 1))
            let snapshot = registry.snapshot()
            #expect(snapshot.entries.count == 1)
            #expect(snapshot.entries.first?.kind == .concurrencyLimit)
            #expect(snapshot.entries.first?.key == "db")
            #expect(snapshot.entries.first?.state == .concurrencyLimit(running: 1, queued: 1))
            #expect(snapshot.description == "concurrencyLimit  db  1 running, 1 queued")
            await clock.advance(by: .seconds(2))
            try await a.value
            try await b.value
            #expect(registry.snapshot().isEmpty)
        }
    }
}
