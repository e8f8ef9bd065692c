import TempoTesting
import Testing

@testable import Tempo

/// A fake service that counts its requests and fails those `fails` says, by request number
/// (1-based).
private final class FakeService: Sendable {
    private let requests = Lock(0)
    private let fails: @Sendable (Int) -> Bool

    init(fails: @escaping @Sendable (Int) -> Bool) { self.fails = fails }

    var count: Int { requests.withLock { $0 } }

    func call() throws -> String {
        let number = requests.withLock { count in
            count += 1
            return count
        }
        if fails(number) { throw ServiceDown() }
        return "ok \(number)"
    }
}

private struct ServiceDown: Error {}

/// The orders of the "Calling another service" article, on the manual clock: each claim of the
/// article about why one order works and the other does not.
@Suite struct CallingAnotherServiceTests {
    /// A breaker that opens at half failures of its last four calls and stays open for a minute.
    private let policy = CircuitBreakerPolicy(
        failureRatio: 0.5, window: .lastCalls(4), minimumCalls: 4, breakDuration: .seconds(60))

    @Test func aBreakerInsideRetryStopsTheRequestsOfAnOutage() async throws {
        await onManualClock { _, registry in
            let service = FakeService { _ in true }
            var errors: [any Error] = []
            for _ in 0..<4 {
                do {
                    // The waits between attempts pass at once; the breaker's clock stays put,
                    // so once open it stays open.
                    _ = try await retry(3, every: .seconds(1), clock: ImmediateClock()) {
                        try await circuitBreaker(policy, identifier: "svc") { try service.call() }
                    }
                } catch {
                    errors.append(error)
                }
            }
            // Call 1: three requests fail; call 2: its first request is the fourth failure and
            // opens the breaker; every attempt after that is rejected without a request.
            #expect(service.count == 4)
            #expect(errors.count == 4)
            #expect(errors.first is ServiceDown)
            #expect(errors.dropFirst().allSatisfy { $0 is CircuitBreakerError })
            #expect(breakerRow(registry, "svc")?.state == .open)
        }
    }

    @Test func aBreakerOutsideRetryNeverSeesTheFailuresRetryHides() async throws {
        try await onManualClock { _, registry in
            // Two requests in three fail: every call succeeds on its third attempt.
            let service = FakeService { $0 % 3 != 0 }
            for _ in 0..<10 {
                let value = try await circuitBreaker(policy, identifier: "outside") {
                    try await retry(3, every: .seconds(1), clock: ImmediateClock()) {
                        try service.call()
                    }
                }
                #expect(value.hasPrefix("ok"))
            }
            #expect(service.count == 30)
            // It saw no failure: a healthy breaker leaves the registry after each call.
            #expect(breakerRow(registry, "outside") == nil)

            // The same service with the breaker inside: it opens on the second call.
            let inside = FakeService { $0 % 3 != 0 }
            for _ in 0..<2 {
                _ = try? await retry(3, every: .seconds(1), clock: ImmediateClock()) {
                    try await circuitBreaker(policy, identifier: "inside") { try inside.call() }
                }
            }
            #expect(breakerRow(registry, "inside")?.state == .open)
            #expect(inside.count == 4)
        }
    }

    @Test func anAttemptTimeoutOutsideTheBreakerIsNeverCounted() async throws {
        let once = CircuitBreakerPolicy(minimumCalls: 1, breakDuration: .seconds(60))
        await onManualClock { clock, registry in
            // The timeout outside: the hung request is cancelled, and a cancellation never
            // counts.
            let outside = Task {
                try await timeout(.seconds(1)) {
                    try await circuitBreaker(once, identifier: "outside") {
                        try await clock.sleep(for: .seconds(10))
                    }
                }
            }
            await clock.waitForSleepers(2)
            await clock.advance(by: .seconds(1))
            await #expect(throws: TimeoutError.timedOut(.seconds(1))) { try await outside.value }
            // Nothing counted: the breaker is a fresh one, and has left the registry.
            #expect(breakerRow(registry, "outside") == nil)

            // The timeout inside: the breaker sees a TimeoutError, a failure, and opens.
            let inside = Task {
                try await circuitBreaker(once, identifier: "inside") {
                    try await timeout(.seconds(1)) { try await clock.sleep(for: .seconds(10)) }
                }
            }
            await clock.waitForSleepers(2)
            await clock.advance(by: .seconds(1))
            await #expect(throws: TimeoutError.timedOut(.seconds(1))) { try await inside.value }
            #expect(breakerRow(registry, "inside")?.state == .open)
        }
    }

    @Test func theArticlesStackAnswersWithAHedgeWhenTheFirstRequestFails() async throws {
        try await onManualClock { _, registry in
            let service = FakeService { $0 == 1 }
            let limit = RateLimit(20, per: .seconds(1))
            let budget = RetryBudget(identifier: "users", ratio: 0.1)
            let value = try await timeout(.seconds(10)) {
                try await retry(
                    3, backoff: .exponential(initial: .milliseconds(200)),
                    budget: budget, timeBudget: .seconds(8)
                ) {
                    try await circuitBreaker(policy, identifier: "users") {
                        try await hedge(after: .milliseconds(150), identifier: "users") { _ in
                            try await rateLimit(limit, identifier: "users") {
                                try await timeout(.seconds(2)) { try service.call() }
                            }
                        }
                    }
                }
            }
            // The first request failed; the hedge sent the second at once, and it answered.
            // One call to the breaker, one success (so the breaker, healthy, has left the
            // registry); two permits taken.
            #expect(value == "ok 2")
            #expect(service.count == 2)
            #expect(breakerRow(registry, "users") == nil)
            let permits = registry.snapshot().entries(.rateLimit).first?.state
            guard case .rateLimit(let tokens, _, _) = permits else {
                Issue.record("no rate-limit row: \(String(describing: permits))")
                return
            }
            #expect(tokens == 18)
        }
    }
}
