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

    @Test func untypedErrorsStillPassThrough() async {
        let registry = TempoRegistry(clock: ManualClock())
        await #expect(throws: Boom(attempt: 3)) {
            try await registry.withCurrent { () async throws in throw Boom(attempt: 3) }
        }
    }
}
