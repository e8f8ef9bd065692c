// A window's waiter that wakes late, as a task on a loaded machine does: past half its margin it
// does not start at its old reserved instant; it asks Redis again. Real redis-server, real clock:
// the late wake-up is put in (the waiter's first sleep lasts longer than asked), and the starts
// are read back from Redis, where they are exact.

import Synchronization
import Testing

@testable import Tempo
@testable import TempoRedis

@Suite(.enabled(if: RedisServer.isEnabled, RedisServer.notFoundComment), .serialized)
struct SharedLimitLateWakeTests {
    /// A sleep that lasts `extra` longer than asked the first time it is called.
    static func oversleepingOnce(by extra: Duration) -> @Sendable (Duration) async throws -> Void
    {
        let first = Mutex(true)
        return { wait in
            let late = first.withLock { isFirst in
                defer { isFirst = false }
                return isFirst
            }
            try await Task.sleep(for: late ? wait + extra : wait)
        }
    }

    /// The starts recorded in Redis for `identifier`'s window, in microseconds, oldest first.
    static func starts(_ client: RESPClient, _ identifier: String) async throws -> [Int64] {
        let reply = try await client.command(
            "ZRANGE", "{tempo:\(identifier)}:w", "0", "-1", "WITHSCORES")
        guard case .array(let items?) = reply else { return [] }
        return stride(from: 1, to: items.count, by: 2).compactMap { index in
            if case .bulk(let score?) = items[index] { Int64(score) } else { nil }
        }
    }

    /// A window of 1 per 300 ms with a margin of 400 ms: starts 700 ms apart, and a waiter may
    /// wake up to 200 ms late.
    static let limit = RateLimit.window(1, per: .milliseconds(300), margin: .milliseconds(400))

    @Test func aWaiterWokenPastHalfItsMarginAsksAgainAndStartsAtItsNewReservation()
        async throws
    {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            let shared = SharedRateLimiterTests.limiter(client)
            var late = shared
            // 300 ms late: past half the margin (200 ms), within the whole margin.
            late.sleep = Self.oversleepingOnce(by: .milliseconds(300))
            try await shared.takePermit(Self.limit, identifier: "late")
            let sentBefore = client.commandsSent
            try await late.takePermit(Self.limit, identifier: "late")
            // Reserved 700 ms after the first, woken 300 ms past that: it asked again.
            #expect(client.commandsSent - sentBefore == 2)
            // The first call's start has left the window by then; the late call's first start
            // stays counted, and its new start is a whole span after it: the service never sees
            // the late request closer than the window to the next call's.
            let starts = try await Self.starts(client, "late")
            #expect(starts.count == 2, "starts \(starts)")
            if starts.count == 2 { #expect(starts[1] - starts[0] >= 700_000, "starts \(starts)") }
            await server.stop()
        }
    }

    @Test func aWaiterWokenWithinHalfItsMarginStartsWithoutAskingAgain() async throws {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            var late = SharedRateLimiterTests.limiter(client)
            // 100 ms late: within the 200 ms its margin allows.
            late.sleep = Self.oversleepingOnce(by: .milliseconds(100))
            try await late.takePermit(Self.limit, identifier: "punctual")
            let sentBefore = client.commandsSent
            let took = try await elapsed {
                try await late.takePermit(Self.limit, identifier: "punctual")
            }
            #expect(client.commandsSent - sentBefore == 1)
            #expect(took >= .milliseconds(750), "started after \(took)")
            #expect(try await Self.starts(client, "punctual").count == 2)
            await server.stop()
        }
    }

    @Test func askingAgainKeepsToTheLongestWaitCountedFromTheFirstAsk() async throws {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            var late = SharedRateLimiterTests.limiter(client)
            late.sleep = Self.oversleepingOnce(by: .milliseconds(600))
            try await late.takePermit(Self.limit, identifier: "budget")
            // Its first start was 700 ms away, within the second it may wait; woken 1.3 s after
            // it asked, it has no wait left, and its new start is not free at once.
            await #expect(throws: RateLimitError.self) {
                try await late.takePermit(
                    Self.limit, whenLimited: .wait(atMost: .seconds(1)), identifier: "budget")
            }
            await server.stop()
        }
    }

    @Test func aBucketOrAWindowWithoutAMarginStartsHoweverLateItWakes() async throws {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            let limits = [
                RateLimit.window(1, per: .milliseconds(300), margin: .zero),
                RateLimit(1, per: .milliseconds(300), burst: 1),
            ]
            for (index, limit) in limits.enumerated() {
                var late = SharedRateLimiterTests.limiter(client)
                late.sleep = Self.oversleepingOnce(by: .milliseconds(600))
                try await late.takePermit(limit, identifier: "any\(index)")
                let sentBefore = client.commandsSent
                try await late.takePermit(limit, identifier: "any\(index)")
                #expect(client.commandsSent - sentBefore == 1, "\(limit)")
            }
            await server.stop()
        }
    }
}
