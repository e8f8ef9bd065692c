import TempoTesting
import Testing

@testable import Tempo

/// A breaker that leaves the registry may stay in its shard's table as the shard's one kept
/// idle breaker, made new in place, so a healthy breaker used one call at a time does not make
/// and remove its entry on every call. The kept entry is not counted or listed, and a call that
/// finds it finds a new breaker: no success, no callback, no call of before.
@Suite struct CircuitBreakerIdleEntryTests {
    @Test func aHealthyBreakerIsKeptButNotCountedOrListed() async {
        await onManualClock { _, registry in
            for _ in 0..<3 { await breakerCall(CircuitBreakerPolicy(), key: "a", .succeed) }
            #expect(registry.liveKeyCount == 0)
            #expect(registry.snapshot().isEmpty)
            let check = registry.breakerTablesCheck
            #expect(check.broken == nil)
            #expect(check.stored == 1)
            #expect(check.kept == 1)
        }
    }

    /// 1,000 identifiers: a shard keeps one breaker at most.
    @Test func aShardKeepsOneBreakerAtMost() async {
        await onManualClock { _, registry in
            for i in 0..<1_000 {
                await breakerCall(CircuitBreakerPolicy(), key: "host-\(i)", .succeed)
                let check = registry.breakerTablesCheck
                if let broken = check.broken {
                    Issue.record("after host-\(i): \(broken)")
                    return
                }
            }
            let check = registry.breakerTablesCheck
            #expect(check.stored == check.kept)
            #expect(check.stored <= registry.shards.count)
            #expect(registry.liveKeyCount == 0)
        }
    }

    /// The kept breaker is a new one: its successes are gone (ten failures are needed), it
    /// knows no callback (opened by hand, nobody is told), and a call it admitted before it
    /// was kept counts for nothing.
    @Test func theKeptBreakerIsANewOne() async {
        await onManualClock { _, registry in
            let log = Log<String>()
            var policy = CircuitBreakerPolicy()
            policy.onStateChange = breakerChangeLog(log)
            let held = await gatedBreakerCall(policy, key: "a", registry: registry)
            for _ in 0..<9 { await breakerCall(policy, key: "a", .succeed) }
            held.gate.open(.succeed)
            #expect(await held.task.value == "ok")
            #expect(registry.liveKeyCount == 0)
            openCircuitBreaker(identifier: "a")
            #expect(breakerState(registry, "a") == .open)
            #expect(log.all.isEmpty)
            closeCircuitBreaker(identifier: "a")
            #expect(registry.liveKeyCount == 0)
            let late = await gatedBreakerCall(policy, key: "a", registry: registry)
            for _ in 0..<9 { await breakerCall(policy, key: "a", .fail) }
            #expect(breakerRow(registry, "a")?.calls == 9)
            #expect(breakerState(registry, "a") == .closed)
            // A stale outcome: admitted by this breaker while it is live, it counts.
            late.gate.open(.fail)
            #expect(await late.task.value == "boom")
            #expect(breakerState(registry, "a") == .open)
            #expect(log.all == ["closed>open"])
            #expect(registry.breakerTablesCheck.broken == nil)
        }
    }

    /// The kept breaker of a shard that another breaker of the shard replaces, while live
    /// again, stays live (it is not removed with a call running) and leaves on its own later.
    @Test func aKeptBreakerLiveAgainIsNotRemovedByAnother() async {
        await onManualClock { _, registry in
            // Two keys of one shard.
            func shard(_ key: String) -> Int {
                GroupKey.name(key).shardIndex(mask: registry.shardMask)
            }
            let first = "k-0"
            let second = (1..<10_000).lazy.map { "k-\($0)" }.first { shard($0) == shard(first) }!
            let policy = CircuitBreakerPolicy()
            await breakerCall(policy, key: first, .succeed)
            let running = await gatedBreakerCall(policy, key: first, registry: registry)
            await breakerCall(policy, key: second, .succeed)
            #expect(registry.liveKeyCount == 1)
            #expect(breakerRow(registry, first)?.state == .closed)
            running.gate.open(.fail)
            #expect(await running.task.value == "boom")
            #expect(breakerRow(registry, first)?.failures == 1)
            #expect(registry.breakerTablesCheck.broken == nil)
        }
    }
}
