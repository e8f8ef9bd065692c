import TempoTesting
import Testing

@testable import Tempo

// What each limit lets through in one rolling window, the figure its doc comment states: a
// token bucket of `permits` N and burst B up to N + B - 1 in any [t, t + interval), a window
// limit never more than N in any [t, t + interval + margin).

@Suite struct RateLimitRollingWindowTests {
    /// Calls as fast as `limit` admits them, a millisecond apart, for `span`; returns the most
    /// admitted in any `[t, t + window)`.
    static func mostInAnyWindow(
        _ limit: RateLimit, window: Duration, for span: Duration = .seconds(4)
    ) async -> Int {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        var admitted: [Duration] = []
        await registry.withCurrent {
            while registry.now < span {
                while (try? takeRatePermit(limit, identifier: "k")) != nil {
                    admitted.append(registry.now)
                }
                await clock.advance(by: .milliseconds(1))
            }
        }
        var most = 0
        for (index, start) in admitted.enumerated() {
            most = max(most, admitted[index...].prefix { $0 - start < window }.count)
        }
        return most
    }

    @Test(arguments: [1, 2, 5, 10])
    func aTokenBucketLetsPermitsPlusBurstMinusOneThroughInARollingInterval(burst: Int) async {
        let limit = RateLimit(10, per: .seconds(1), burst: burst)
        #expect(await Self.mostInAnyWindow(limit, window: .seconds(1)) == 10 + burst - 1)
    }

    @Test func aWindowLimitNeverLetsMoreThanItsPermitsThroughInAWindow() async {
        let limit = RateLimit.window(10, per: .seconds(1))
        #expect(await Self.mostInAnyWindow(limit, window: .milliseconds(1_050)) == 10)
        // With its margin, 10 pass in the first 1.05 s and 10 more at 1.05 s: 20 in 1.051 s.
        #expect(await Self.mostInAnyWindow(limit, window: .milliseconds(1_051)) == 20)
    }
}
