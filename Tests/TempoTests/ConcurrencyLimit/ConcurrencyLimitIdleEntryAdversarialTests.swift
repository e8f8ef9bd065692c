import Synchronization
import TempoTesting
import Testing

@_spi(Benchmarks) @testable import Tempo

// Attacks on the shard's kept idle concurrency-limit entry: many keys in one shard, queue timers
// that fire as their key goes idle, resets of the kept key and of a live key that holds the
// name, a key whose kept entry gets calls of different limits, and cancellations racing releases.
// After each step the tables keep their rule (`limitTablesCheck`), `liveKeyCount` counts exactly
// the keys with calls running or waiting, and `snapshot()` lists exactly them.

@Suite struct ConcurrencyLimitIdleEntryAdversarialTests {
    /// The tables' rule holds and exactly `live` keys show, in the count and the snapshot.
    private func expectLive(
        _ registry: TempoRegistry, _ live: Set<String>, kept: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let check = registry.limitTablesCheck
        #expect(check.broken == nil, sourceLocation: sourceLocation)
        #expect(check.kept == kept, sourceLocation: sourceLocation)
        #expect(check.stored == live.count + kept, sourceLocation: sourceLocation)
        #expect(registry.liveKeyCount == live.count, sourceLocation: sourceLocation)
        #expect(Set(registry.snapshot().entries.map(\.key)) == live, sourceLocation: sourceLocation)
    }

    /// Queue timeouts that end at the instant their key's last running call ends, on several
    /// keys of one shard: whichever comes first, every key ends idle and only the last is kept.
    @Test func queueTimersFiringAsTheirKeysGoIdle() async throws {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock, shardCount: 1)
        let log = Log<String>()
        var tasks: [Task<Void, any Error>] = []
        let keys = (0..<6).map { "key \($0)" }
        for key in keys {
            tasks.append(
                registry.withCurrent {
                    limitedCall(
                        "h \(key)", key: key, limit: 1, clock: clock, registry: registry, log: log)
                })
            #expect(await awaitCounts(registry, key, running: 1, queued: 0))
            tasks.append(
                registry.withCurrent {
                    limitedCall(
                        "w \(key)", key: key, limit: 1, queueTimeout: .seconds(1), clock: clock,
                        registry: registry, log: log)
                })
            #expect(await awaitCounts(registry, key, running: 1, queued: 1))
        }
        expectLive(registry, Set(keys), kept: 0)
        await clock.advance(by: .seconds(1))
        await clock.advance(by: .seconds(1))
        for task in tasks {
            let error = await thrown(task)
            #expect(
                error == nil || (error as? ConcurrencyLimitError) == .queueTimedOut(.seconds(1)))
        }
        expectLive(registry, [], kept: 1)
        let timers = registry.timersArmed
        await clock.advance(by: .seconds(5))
        #expect(registry.timersArmed == timers)
        expectLive(registry, [], kept: 1)
    }

    @Test func resetsOfTheKeptKeyAndOfALiveKeyThatHoldsTheName() async throws {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock, shardCount: 1)
        let log = Log<String>()
        try await registry.withCurrent {
            try await concurrencyLimit(1, identifier: "a") {}
            expectLive(registry, [], kept: 1)
            // "a" is live again while it holds the name, with a waiter behind its call.
            let holder = limitedCall(
                "a1", key: "a", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "a", running: 1, queued: 0))
            let waiter = limitedCall(
                "a2", key: "a", limit: 1, queueTimeout: .seconds(9), clock: clock,
                registry: registry, log: log)
            #expect(await awaitCounts(registry, "a", running: 1, queued: 1))
            expectLive(registry, ["a"], kept: 0)
            // Reset empties the queue and takes its timer; the live entry stays, named kept.
            resetConcurrencyLimit(identifier: "a")
            #expect((await thrown(waiter) as? ConcurrencyLimitError) == .reset)
            expectLive(registry, ["a"], kept: 0)
            // "b" goes idle: it takes the name from the live "a".
            try await concurrencyLimit(1, identifier: "b") {}
            expectLive(registry, ["a"], kept: 1)
            // Reset of the kept "b" removes it; "a" is untouched.
            resetConcurrencyLimit(identifier: "b")
            expectLive(registry, ["a"], kept: 0)
            // "a" ends and is kept; nothing else is in the table.
            await clock.advance(by: .seconds(1))
            try await holder.value
            expectLive(registry, [], kept: 1)
            // A reset of "a" while kept, then "a" live and idle again: kept once more.
            resetConcurrencyLimit(identifier: "a")
            expectLive(registry, [], kept: 0)
            try await concurrencyLimit(1, queue: 0, identifier: "a") {}
            expectLive(registry, [], kept: 1)
            // Past the old queue deadline: no timer fires into anything.
            let timers = registry.timersArmed
            await clock.advance(by: .seconds(20))
            #expect(registry.timersArmed == timers)
            expectLive(registry, [], kept: 1)
        }
        #expect(log.all == ["start a1@0", "end a1@1000"])
    }

    /// A kept entry reused by calls of different limits, with a call queued on it.
    @Test func aKeptEntryTakesCallsOfDifferentLimitsAndAQueue() async throws {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock, shardCount: 1)
        let log = Log<String>()
        try await registry.withCurrent {
            try await concurrencyLimit(3, identifier: "a") {}
            expectLive(registry, [], kept: 1)
            let one = limitedCall(
                "one", key: "a", limit: 1, seconds: 2, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "a", running: 1, queued: 0))
            // A limit of 3 runs beside it; a limit of 1 waits.
            let three = limitedCall(
                "three", key: "a", limit: 3, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "a", running: 2, queued: 0))
            let queued = limitedCall(
                "queued", key: "a", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "a", running: 2, queued: 1))
            expectLive(registry, ["a"], kept: 0)
            await clock.advance(by: .seconds(1))
            try await three.value
            #expect(await awaitCounts(registry, "a", running: 1, queued: 1))
            await clock.advance(by: .seconds(1))
            try await one.value
            #expect(await awaitCounts(registry, "a", running: 1, queued: 0))
            await clock.advance(by: .seconds(1))
            try await queued.value
            expectLive(registry, [], kept: 1)
        }
        #expect(
            log.all == [
                "start one@0", "start three@0", "end three@1000", "end one@2000",
                "start queued@2000", "end queued@3000",
            ])
    }

    /// Rounds of waiters cancelled while their keys' running calls end, on many keys of one
    /// shard: whatever order the two come in, the tables keep their rule.
    @Test func cancellationsRacingReleasesOnKeysSharingAShard() async throws {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock, shardCount: 1)
        let log = Log<String>()
        for round in 0..<8 {
            var holders: [Task<Void, any Error>] = []
            var waiters: [Task<Void, any Error>] = []
            let keys = (0..<4).map { "r\(round) k\($0)" }
            for key in keys {
                holders.append(
                    registry.withCurrent {
                        limitedCall(
                            "h", key: key, limit: 1, clock: clock, registry: registry, log: log)
                    })
                #expect(await awaitCounts(registry, key, running: 1, queued: 0))
                for _ in 0..<3 {
                    waiters.append(
                        registry.withCurrent {
                            limitedCall(
                                "w", key: key, limit: 1,
                                queueTimeout: round.isMultiple(of: 2) ? .seconds(1) : nil,
                                clock: clock, registry: registry, log: log)
                        })
                }
                #expect(await awaitCounts(registry, key, running: 1, queued: 3))
            }
            // Cancel on another thread while the advance ends the holders.
            let cancelling = Task.detached { [waiters] in for waiter in waiters { waiter.cancel() }
            }
            await clock.advance(by: .seconds(1))
            await cancelling.value
            for task in holders { _ = await thrown(task) }
            for task in waiters {
                let error = await thrown(task)
                #expect(
                    error == nil || error is CancellationError
                        || error as? ConcurrencyLimitError == .queueTimedOut(.seconds(1)))
            }
            for _ in 0..<5 where registry.liveKeyCount > 0 { await clock.advance(by: .seconds(1)) }
            expectLive(registry, [], kept: 1)
        }
    }

    /// Real threads (1,000 calls each, well under a second): calls on many keys of one shard while
    /// another thread reads `liveKeyCount` and `snapshot()`. The count never goes negative or
    /// above the five keys, every listed key has a call running or waiting, and at the end
    /// only the kept entry is left.
    @Test func realClockManyKeysOfOneShardWhileTheCountIsRead() async throws {
        let registry = TempoRegistry(clock: ContinuousClock(), shardCount: 1)
        let stop = Atomic<Bool>(false)
        let badReads = Atomic<Int>(0)
        let reader = Task.detached {
            while !stop.load(ordering: .relaxed) {
                let count = registry.liveKeyCount
                if count < 0 || count > 5 { badReads.add(1, ordering: .relaxed) }
                for entry in registry.snapshot().entries {
                    if case .concurrencyLimit(let running, let queued) = entry.state,
                        running + queued == 0
                    {
                        badReads.add(1, ordering: .relaxed)
                    }
                }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    try await registry.withCurrent {
                        for round in 1...1_000 {
                            let key = "k\((worker + round) % 5)"
                            let yields = round.isMultiple(of: 3)
                            try await concurrencyLimit(worker % 2 + 1, identifier: key) {
                                if yields { await Task.yield() }
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        stop.store(true, ordering: .relaxed)
        await reader.value
        #expect(badReads.load(ordering: .relaxed) == 0)
        expectLive(registry, [], kept: 1)
    }
}
