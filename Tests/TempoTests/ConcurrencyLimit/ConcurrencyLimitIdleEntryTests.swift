import TempoTesting
import Testing

@_spi(Benchmarks) @testable import Tempo

// A shard keeps the entry of the concurrency-limit key that went idle last in it, so that a key
// used one call at a time does not make and remove its entry on every call. The kept entry is
// out of sight (`liveKeyCount`, `snapshot()`), a shard keeps one at most, and it behaves as a
// key that was never used.

@Suite struct ConcurrencyLimitIdleEntryTests {
    /// A registry with one shard on `clock`, current while `body` runs.
    private func onOneShard(
        _ clock: some Clock<Duration> = ContinuousClock(),
        _ body: (TempoRegistry) async throws -> Void
    ) async rethrows {
        let registry = TempoRegistry(clock: clock, shardCount: 1)
        try await registry.withCurrent { try await body(registry) }
    }

    @Test func aKeyUsedOneCallAtATimeKeepsItsEntryOutOfSight() async throws {
        try await onOneShard { registry in
            for call in 1...3 {
                let value = try await concurrencyLimit(2, identifier: "a") { call * 10 }
                #expect(value == call * 10)
                #expect(registry.liveKeyCount == 0)
                #expect(registry.snapshot().isEmpty)
                let check = registry.limitTablesCheck
                #expect(check.stored == 1 && check.kept == 1 && check.broken == nil)
            }
        }
    }

    @Test func aShardKeepsOneIdleEntryAtMost() async throws {
        try await onOneShard { registry in
            for index in 0..<50 {
                try await concurrencyLimit(1, identifier: "key \(index)") {}
                let check = registry.limitTablesCheck
                #expect(check.stored == 1 && check.kept == 1 && check.broken == nil)
            }
        }
        let registry = TempoRegistry(clock: ContinuousClock(), shardCount: 4)
        try await registry.withCurrent {
            for index in 0..<200 { try await concurrencyLimit(1, identifier: "key \(index)") {} }
        }
        let check = registry.limitTablesCheck
        #expect(check.stored == check.kept && check.kept <= 4 && check.kept >= 1)
        #expect(check.broken == nil)
        #expect(registry.liveKeyCount == 0)
    }

    @Test func theKeptEntryComesBackLiveAndGivesWayToTheNextIdleKey() async throws {
        let clock = ManualClock()
        try await onOneShard(clock) { registry in
            let log = Log<String>()
            try await concurrencyLimit(1, identifier: "a") {}
            #expect(registry.limitTablesCheck == (1, 1, nil))
            // "a" is live again: the kept entry runs its call at once, as a new key would.
            let holder = limitedCall(
                "a1", key: "a", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "a", running: 1, queued: 0))
            #expect(registry.limitTablesCheck == (1, 0, nil))
            #expect(registry.liveKeyCount == 1)
            // "b" goes idle while "a" runs: "b" is kept.
            try await concurrencyLimit(1, identifier: "b") {}
            #expect(registry.limitTablesCheck == (2, 1, nil))
            #expect(registry.liveKeyCount == 1)
            // "a" ends: it is kept and "b" leaves the table.
            await clock.advance(by: .seconds(1))
            try await holder.value
            #expect(registry.limitTablesCheck == (1, 1, nil))
            #expect(registry.liveKeyCount == 0)
            #expect(log.all == ["start a1@0", "end a1@1000"])
            // "b", gone, runs as a new key; a limit of one on "a" admits at once.
            try await concurrencyLimit(1, queue: 0, identifier: "a") {}
            try await concurrencyLimit(1, queue: 0, identifier: "b") {}
            #expect(registry.limitTablesCheck == (1, 1, nil))
        }
    }

    @Test func resetForgetsTheKeptEntry() async throws {
        try await onOneShard { registry in
            try await concurrencyLimit(1, identifier: "a") {}
            registry.resetConcurrencyLimit(identifier: "b")
            #expect(registry.limitTablesCheck == (1, 1, nil))
            registry.resetConcurrencyLimit(identifier: "a")
            #expect(registry.limitTablesCheck == (0, 0, nil))
            try await concurrencyLimit(1, identifier: "a") {}
            #expect(registry.limitTablesCheck == (1, 1, nil))
        }
    }

    @Test func aStaleKeptNameNeverRemovesTheEntryBeingKept() async throws {
        try await onOneShard { registry in
            // No path leaves the shard naming a key whose entry is gone; were there one, the
            // key's next idle entry must still be kept, not removed as "the previous one".
            registry.shards[0].tables.withLock { $0.keptIdleLimit = .name("a") }
            try await concurrencyLimit(1, identifier: "a") {}
            #expect(registry.limitTablesCheck == (1, 1, nil))
            try await concurrencyLimit(1, identifier: "b") {}
            #expect(registry.limitTablesCheck == (1, 1, nil))
        }
    }

    @Test func aKeptEntryLosesItsQueueTimer() async throws {
        let clock = ManualClock()
        try await onOneShard(clock) { registry in
            let log = Log<String>()
            let holder = limitedCall(
                "h", key: "a", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "a", running: 1, queued: 0))
            let waiter = limitedCall(
                "w", key: "a", limit: 1, queueTimeout: .seconds(5), clock: clock,
                registry: registry, log: log)
            #expect(await awaitCounts(registry, "a", running: 1, queued: 1))
            await clock.advance(by: .seconds(1))
            try await holder.value
            await clock.advance(by: .seconds(1))
            try await waiter.value
            #expect(registry.limitTablesCheck == (1, 1, nil))
            // Past the waiter's old queue deadline: nothing fires into the kept entry.
            let timersBefore = registry.timersArmed
            await clock.advance(by: .seconds(10))
            #expect(registry.limitTablesCheck == (1, 1, nil))
            #expect(registry.liveKeyCount == 0)
            #expect(registry.timersArmed == timersBefore)
            #expect(log.all == ["start h@0", "end h@1000", "start w@1000", "end w@2000"])
            try await concurrencyLimit(1, queue: 0, identifier: "a") {}
        }
    }
}
