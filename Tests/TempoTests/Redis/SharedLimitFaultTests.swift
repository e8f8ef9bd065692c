// Redis failing mid-run under a shared limit: paused, killed, restarted, its script cache
// flushed, while 16 tasks of two instances keep calling. Every call must settle within the
// limiter's time limit as its policy says (a typed error, or the fallback's decision), the
// observer must see each failure and each recovery, and the shared limit must decide again
// once Redis is back. Real clock.

import Foundation
import Testing

@testable import Tempo
@testable import TempoRedis

@Suite(.enabled(if: RedisServer.isEnabled, RedisServer.notFoundComment), .serialized)
struct SharedLimitFaultTests {
    /// What the calls of a run did.
    struct Outcomes: CustomStringConvertible {
        var admitted = 0
        var storeErrors = 0
        var other: [String] = []
        var longest = Duration.zero
        var description: String {
            "\(admitted) admitted, \(storeErrors) store errors, longest call "
                + "\(longest.formatted(.units(allowed: [.milliseconds])))"
                + (other.isEmpty ? "" : ", other: \(other.prefix(3))")
        }
    }

    static let timeLimit = Duration.milliseconds(200)

    /// A run's outcomes so far, and whether its tasks go on calling.
    final class RunState: Sendable {
        let outcomes = Lock(Outcomes())
        let running = Lock(true)
    }

    /// Runs 16 tasks (8 on each of two instances) calling through a window limit far above
    /// their rate (so nothing waits for a permit) while `faults` happen, one after another.
    static func run(
        _ server: RedisServer, policy: StoreFailurePolicy, registry: TempoRegistry,
        faults: @escaping @Sendable () async throws -> Void
    ) async throws -> Outcomes {
        let limit = RateLimit.window(100_000, per: .seconds(1))
        let limiters = (0..<2).map { _ in
            SharedRateLimiter(
                store: server.client(ioTimeout: .seconds(2)), timeLimit: timeLimit,
                retryStoreAfter: .milliseconds(100), whenStoreFails: policy, registry: registry)
        }
        let state = RunState()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                let shared = limiters[task % 2]
                group.addTask {
                    while state.running.withLock({ $0 }) {
                        let start = ContinuousClock.now
                        var result: Result<Void, any Error>
                        do {
                            try await shared.takePermit(limit, identifier: "faults")
                            result = .success(())
                        } catch {
                            result = .failure(error)
                        }
                        let took = ContinuousClock.now - start
                        state.outcomes.withLock { outcomes in
                            outcomes.longest = max(outcomes.longest, took)
                            switch result {
                            case .success: outcomes.admitted += 1
                            case .failure(let error as SharedLimitStoreError):
                                _ = error
                                outcomes.storeErrors += 1
                            case .failure(let error): outcomes.other.append("\(error)")
                            }
                        }
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
            }
            try await faults()
            state.running.withLock { $0 = false }
            try await group.waitForAll()
        }
        return state.outcomes.withLock { $0 }
    }

    /// Pause, kill, restart and flush, with calls in between; then calls on a healthy store.
    static func faults(_ server: RedisServer) -> @Sendable () async throws -> Void {
        {
            try await Task.sleep(for: .milliseconds(300))
            try await server.pause(for: .milliseconds(700))
            try await Task.sleep(for: .milliseconds(1_200))
            await server.kill()
            try await Task.sleep(for: .milliseconds(500))
            try await server.restart()
            try await Task.sleep(for: .milliseconds(500))
            try await server.flushScripts()
            try await Task.sleep(for: .milliseconds(800))
        }
    }

    @Test func realClockFailingClosedEveryCallSettlesWithinTheTimeLimit() async throws {
        try await measuredAlone {
            let server = try RedisServer()
            try await server.start()
            let registry = TempoRegistry(clock: ContinuousClock())
            let log = EventLog(registry)
            let outcomes = try await Self.run(
                server, policy: .failClosed, registry: registry, faults: Self.faults(server))
            print("[SharedLimitFaults] failing closed: \(outcomes)")
            #expect(outcomes.other.isEmpty, "\(outcomes)")
            #expect(outcomes.storeErrors > 0)
            #expect(outcomes.admitted > 0)
            // The time limit, and room for a loaded machine to schedule the caller.
            #expect(outcomes.longest < Self.timeLimit + .milliseconds(400), "\(outcomes)")
            // Back to normal: the shared limit decides again.
            let shared = SharedRateLimiter(
                store: server.client(), timeLimit: .seconds(30), whenStoreFails: .failClosed,
                registry: registry)
            try await shared.takePermit(.window(10, per: .seconds(1)), identifier: "after")
            let names = await log.all().map { $0.decision.name }
            let failed = names.count { $0 == "storeFailed" }
            let recovered = names.count { $0 == "storeRecovered" }
            print("[SharedLimitFaults] events: \(failed) storeFailed, \(recovered) storeRecovered")
            // The pause and the kill at least (each instance reports its own store's).
            #expect(failed >= 2)
            #expect(recovered >= 2)
            await server.stop()
        }
    }

    @Test func realClockFallingBackNoCallFailsAndEveryCallSettles() async throws {
        try await measuredAlone {
            let server = try RedisServer()
            try await server.start()
            let registry = TempoRegistry(clock: ContinuousClock())
            let outcomes = try await Self.run(
                server, policy: .fallBack(dividingBy: 2), registry: registry,
                faults: Self.faults(server))
            print("[SharedLimitFaults] falling back: \(outcomes)")
            #expect(outcomes.other.isEmpty, "\(outcomes)")
            #expect(outcomes.storeErrors == 0)
            #expect(outcomes.longest < Self.timeLimit + .milliseconds(400), "\(outcomes)")
            await server.stop()
        }
    }
}
