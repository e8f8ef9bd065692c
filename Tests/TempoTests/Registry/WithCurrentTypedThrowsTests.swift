import Tempo
import TempoTesting
import Testing

/// `withCurrent` keeps the type of what its body throws. (Before, it rethrew, and a body that
/// threw only `RateLimitError` came back as `any Error`.)
@Suite struct WithCurrentTypedThrowsTests {
    /// Compiles only if the error's static type is `RateLimitError`.
    static func retryAfter(_ error: RateLimitError) -> Duration {
        switch error {
        case .limited(let retryAfter): retryAfter
        case .cannotAdmit: .zero
        }
    }

    @Test func theSynchronousFormThrowsTheBodysErrorType() {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let limit = RateLimit(1, per: .seconds(1))
        do {
            try registry.withCurrent { () throws(RateLimitError) in
                try takeRatePermit(limit, identifier: "api")
                try takeRatePermit(limit, identifier: "api")
            }
            Issue.record("the second permit should have been refused")
        } catch {
            #expect(Self.retryAfter(error) == .seconds(1))
        }
    }

    @Test func theAsynchronousFormThrowsTheBodysErrorType() async {
        let registry = TempoRegistry(clock: ManualClock())
        let limit = RateLimit(1, per: .seconds(1))
        do {
            try await registry.withCurrent { () async throws(RateLimitError) in
                await Task.yield()
                try takeRatePermit(limit, identifier: "api")
                try takeRatePermit(limit, identifier: "api")
            }
            Issue.record("the second permit should have been refused")
        } catch {
            #expect(Self.retryAfter(error) == .seconds(1))
        }
    }

    @Test func aBodyThatThrowsNothingNeedsNoTry() async {
        let registry = TempoRegistry(clock: ManualClock())
        let value = registry.withCurrent { 41 + 1 }
        let asyncValue = await registry.withCurrent { () async in 7 }
        #expect(value == 42)
        #expect(asyncValue == 7)
    }

    /// The scope runs `body` on the caller's actor without giving the actor's turn away: a
    /// main-actor task enqueued before the call runs after the body, not before it. (A first
    /// version of the typed form wrapped `body` in a closure isolated to no actor, which hopped
    /// off the main actor and back, and let the other task in first.)
    @MainActor @Test func theBodyKeepsTheCallersActorWithoutAHop() async throws {
        let registry = TempoRegistry(clock: ManualClock())
        var order: [String] = []
        let other = Task { @MainActor in order.append("other task") }
        await registry.withCurrent { () async in order.append("body") }
        order.append("after the scope")
        await other.value
        #expect(order == ["body", "after the scope", "other task"])

        order = []
        let another = Task { @MainActor in order.append("other task") }
        try await registry.withCurrent { () async throws(RateLimitError) in
            order.append("throwing body")
        }
        order.append("after the scope")
        await another.value
        #expect(order == ["throwing body", "after the scope", "other task"])
    }

    @Test func untypedErrorsStillPassThrough() async {
        let registry = TempoRegistry(clock: ManualClock())
        await #expect(throws: Boom(attempt: 3)) {
            try await registry.withCurrent { () async throws in throw Boom(attempt: 3) }
        }
    }
}
