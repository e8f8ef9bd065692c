import TempoTesting
import Testing

@_spi(Benchmarks) @testable import Tempo

// The shards are plain pointers into storage the registry frees in its deinit. Whatever can still
// reach a shard (a pending timer, a waiting or running call, a debouncer, a cancellation handler,
// a task that outlived its scope) must keep the registry alive, and the registry must be freed
// once nothing does. Each test checks the registry is freed in the end, so that under
// AddressSanitizer (`swift test --sanitize=address`) any late access to a shard is a reported
// use after free.

/// A weak reference to a registry, readable from any task.
private final class Watched: @unchecked Sendable {
    private let lock = Lock<Void>(())
    private weak var registry: TempoRegistry?
    init(_ registry: TempoRegistry) { self.registry = registry }
    var isFreed: Bool { lock.withLock { _ in registry == nil } }
}

@Suite struct ShardLifetimeTests {
    /// Registries made and dropped in a loop with timers of every kind pending on a clock that
    /// outlives them: the timers keep them alive until they fire; then they are freed.
    @Test func registriesDroppedWithPendingTimersLiveUntilTheTimersFire() async throws {
        let clock = ManualClock()
        var made: [Watched] = []
        let ran = Log<Int>()
        for index in 0..<60 {
            let registry = TempoRegistry(clock: clock, shardCount: index % 3 == 0 ? 1 : 8)
            try await registry.withCurrent {
                debounce(.seconds(1), identifier: "d", by: .taskContext) { ran.append(index) }
                throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {}
                throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {}
                delay(.seconds(2), by: .taskContext) { ran.append(-index - 1) }
                try await concurrencyLimit(1, identifier: "kept") {}
            }
            made.append(Watched(registry))
        }
        let watched = made
        #expect(watched.allSatisfy { !$0.isFreed })
        await clock.advance(by: .seconds(3))
        #expect(await eventually { watched.allSatisfy(\.isFreed) })
        #expect(ran.all.count == 120)
    }

    /// The same on the real clock, with the timer runner's task firing the timers.
    @Test func realClockRegistriesDroppedWithPendingTimersAreFreedAfterThem() async throws {
        var made: [Watched] = []
        let ran = Log<Int>()
        for index in 0..<40 {
            let registry = TempoRegistry(clock: ContinuousClock(), shardCount: 2)
            try await registry.withCurrent {
                debounce(.milliseconds(2), identifier: "d", by: .taskContext) { ran.append(index) }
                delay(.milliseconds(1), by: .taskContext) {}
                try await concurrencyLimit(1, identifier: "kept") {}
            }
            made.append(Watched(registry))
        }
        let watched = made
        #expect(await eventually { watched.allSatisfy(\.isFreed) })
        #expect(Set(ran.all).count == 40)
    }

    /// A debouncer and a throttler own their registry: one dropped while its call is pending
    /// cancels its group (and the group's timer) in a registry that is still alive, which is
    /// then freed; advancing the clock afterwards fires nothing into it.
    @Test func aDebouncerDroppedLastCancelsInALiveRegistry() async {
        let clock = ManualClock()
        var debouncer: Debouncer? = Debouncer(
            .seconds(1), by: .taskContext, registry: TempoRegistry(clock: clock))
        var throttler: Throttler? = Throttler(
            .seconds(1), by: .taskContext, option: .ensureLast,
            registry: TempoRegistry(clock: clock, shardCount: 1))
        let watched = [Watched(debouncer!.registry), Watched(throttler!.registry)]
        let ran = Log<String>()
        debouncer? { ran.append("debounced") }
        throttler? { ran.append("leading") }
        throttler? { ran.append("trailing") }
        #expect(!watched[0].isFreed && !watched[1].isFreed)
        debouncer = nil
        throttler = nil
        #expect(await eventually { watched.allSatisfy(\.isFreed) })
        await clock.advance(by: .seconds(2))
        #expect(ran.all == ["leading"])
    }

    /// Calls that outlive the scope that made their registry current, and every reference the
    /// test held: a running call (admitted at once, which keeps only its key) releases its slot
    /// into the registry its task's binding keeps alive; a waiting call withdrawn by a
    /// cancellation handler on another task reaches it through the call.
    @Test func callsThatOutliveTheirScopeKeepTheRegistryAlive() async throws {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let (running, waiting, watched) = {
            let registry = TempoRegistry(clock: ContinuousClock(), shardCount: 1)
            return registry.withCurrent {
                let running = Task {
                    try await concurrencyLimit(1, identifier: "k") { for await _ in gate {} }
                }
                let waiting = Task {
                    try await Task.sleep(for: .milliseconds(20))
                    return try await concurrencyLimit(1, identifier: "k") { "ran" }
                }
                return (running, waiting, Watched(registry))
            }
        }()
        try await Task.sleep(for: .milliseconds(60))
        #expect(!watched.isFreed)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        open.finish()
        try await running.value
        #expect(await eventually { watched.isFreed })
    }

    /// Waiting calls with queue timeouts on a manual clock, their registry dropped: the queue
    /// timer, the timed-out waiters and the kept entry all go with it.
    @Test func waitersTimingOutInADroppedRegistry() async {
        let clock = ManualClock()
        var tasks: [Task<Void, any Error>] = []
        var made: [Watched] = []
        for round in 0..<10 {
            let registry = TempoRegistry(clock: clock, shardCount: 1)
            let log = Log<String>()
            tasks.append(
                registry.withCurrent {
                    limitedCall(
                        "h\(round)", key: "k", limit: 1, seconds: 2, clock: clock,
                        registry: registry, log: log)
                })
            #expect(await awaitCounts(registry, "k", running: 1, queued: 0))
            tasks.append(
                registry.withCurrent {
                    limitedCall(
                        "w\(round)", key: "k", limit: 1, queueTimeout: .seconds(1), clock: clock,
                        registry: registry, log: log)
                })
            #expect(await awaitCounts(registry, "k", running: 1, queued: 1))
            made.append(Watched(registry))
        }
        let watched = made
        await clock.advance(by: .seconds(1))
        await clock.advance(by: .seconds(1))
        var timedOut = 0
        for task in tasks {
            if case .queueTimedOut? = await thrown(task) as? ConcurrencyLimitError {
                timedOut += 1
            }
        }
        #expect(timedOut == 10)
        #expect(await eventually { watched.allSatisfy(\.isFreed) })
    }
}
