import Tempo
import TempoTesting
import Testing

// Bad and extreme arguments, cancellation before the call, the caller's isolation, and calls
// made inside operations the engine launched (their work token is parked while they wait).

@Suite struct ConcurrencyLimitEdgeTests {
    @Test func invalidLimitsThrowWithoutRunning() async {
        let ran = Flag()
        for limit in [0, -1, Int.min] {
            await #expect(throws: ConcurrencyLimitError.invalidLimit(limit)) {
                try await concurrencyLimit(limit) { ran.set() }
            }
        }
        for queue in [-1, Int.min] {
            await #expect(throws: ConcurrencyLimitError.invalidQueueLimit(queue)) {
                try await concurrencyLimit(1, queue: queue) { ran.set() }
            }
        }
        #expect(!ran.isSet)
    }

    @Test func hugeLimitsAndTimeoutsAreSafe() async throws {
        try await onManualClock { clock, registry in
            #expect(
                try await concurrencyLimit(.max, queue: .max, queueTimeout: .seconds(Int64.max)) {
                    7
                } == 7)
            let log = Log<String>()
            let a = limitedCall(
                "a", limit: 1, queue: .max, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            let b = limitedCall(
                "b", limit: 1, queueTimeout: .seconds(Int64.max), clock: clock, registry: registry,
                log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 1))
            await clock.advance(by: .seconds(2))
            try await a.value
            try await b.value
            #expect(log.all == ["start a@0", "end a@1000", "start b@1000", "end b@2000"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aZeroOrNegativeQueueTimeoutMeansDoNotWait() async throws {
        try await onManualClock { clock, registry in
            // A call that can run at once runs, whatever its timeout.
            #expect(
                try await concurrencyLimit(1, queueTimeout: .zero, identifier: "api") { 1 } == 1)
            let log = Log<String>()
            let a = limitedCall("a", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            for wait in [Duration.zero, .seconds(-1), .seconds(Int64.min)] {
                await #expect(throws: ConcurrencyLimitError.queueTimedOut(wait)) {
                    try await concurrencyLimit(1, queueTimeout: wait, identifier: "api") {}
                }
            }
            #expect(limitCounts(registry, "api")! == (1, 0))
            await clock.advance(by: .seconds(1))
            try await a.value
        }
    }

    @Test func aCancelledCallerThrowsWithoutEntering() async throws {
        await onManualClock { _, registry in
            let ran = Flag()
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await concurrencyLimit(1) { ran.set() }
            }
            #expect(await thrown(task) is CancellationError)
            #expect(!ran.isSet)
            #expect(registry.liveKeyCount == 0)
        }
    }

    @MainActor @Test func theOperationRunsInTheCallersIsolation() async throws {
        var count = 0  // main-actor state, touched without a hop
        try await concurrencyLimit(2) {
            MainActor.assertIsolated()
            count += 1
        }
        #expect(count == 1)
    }

    @Test func anActorsQueuedCallRunsItsOperationOnTheActor() async throws {
        actor Account {
            var deposits = 0
            func deposit(_ identifier: String) async throws {
                try await concurrencyLimit(1, identifier: identifier) {
                    self.assertIsolated()
                    deposits += 1  // actor state, touched without a hop
                }
            }
        }
        // A registry of its own: other suites check that the shared one holds no limit.
        try await TempoRegistry(clock: ContinuousClock()).withCurrent {
            let identifier = "actor-\(UInt64.random(in: 0...UInt64.max))"
            let (gate, open) = AsyncStream<Void>.makeStream()
            let (entered, enter) = AsyncStream<Void>.makeStream()
            let holder = Task {
                try await concurrencyLimit(1, identifier: identifier) {
                    enter.finish()
                    for await _ in gate {}
                }
            }
            for await _ in entered {}
            let account = Account()
            let queued = Task { try await account.deposit(identifier) }
            #expect(await awaitCounts(.current, identifier, running: 1, queued: 1))
            open.finish()
            try await holder.value
            try await queued.value
            #expect(await account.deposits == 1)
        }
    }

    @Test func aWaiterInsideALaunchedOperationDoesNotHoldTheClock() async throws {
        // `delay`'s async operation carries a work token; waiting for a slot parks it, or the
        // advance that frees the slot would wait for the waiter.
        try await onManualClock { clock, registry in
            let log = Log<String>()
            let a = limitedCall(
                "a", limit: 1, seconds: 2, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            delay(.seconds(1), by: .taskContext) {
                try await concurrencyLimit(1, identifier: "api") {
                    log.mark("start b", registry)
                    try await clock.sleep(for: .seconds(1))
                    log.mark("end b", registry)
                }
            }
            await clock.advance(by: .seconds(1))  // b's delay fires; b waits for a's slot
            #expect(limitCounts(registry, "api")! == (1, 1))
            await clock.advance(by: .seconds(2))
            try await a.value
            #expect(log.all == ["start a@0", "end a@2000", "start b@2000", "end b@3000"])
            #expect(registry.liveKeyCount == 0)
        }
    }
}
