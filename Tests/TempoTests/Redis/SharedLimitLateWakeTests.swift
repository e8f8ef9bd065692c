// A window's call that is ready to start late, as a task on a loaded machine is: past half its
// margin it does not start; it asks Redis again, three asks at most. Real redis-server, real
// clock: the lateness is put in (a sleep that lasts longer than asked, a reply that reaches the
// caller late, a busy main actor), and the starts are read back from Redis, where they are
// exact.

import Foundation
import Synchronization
import Testing

@testable import Tempo
@testable import TempoRedis

@Suite(.enabled(if: RedisServer.isEnabled, RedisServer.notFoundComment), .serialized)
struct SharedLimitLateWakeTests {
    /// A sleep that lasts `extra` longer than asked the first time it is called.
    static func oversleepingOnce(by extra: Duration) -> @Sendable (Duration) async throws -> Void {
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
            let registry = TempoRegistry(clock: ContinuousClock())
            let log = EventLog(registry)
            var late = SharedRateLimiter(
                store: client, timeLimit: .seconds(30), whenStoreFails: .failClosed,
                registry: registry)
            try await late.takePermit(Self.limit, identifier: "late")
            // 300 ms late: past half the margin (200 ms), within the whole margin.
            late.sleep = Self.oversleepingOnce(by: .milliseconds(300))
            let sentBefore = client.commandsSent
            try await late.takePermit(Self.limit, identifier: "late")
            // Reserved 700 ms after the first, woken 300 ms past that: it asked again.
            #expect(client.commandsSent - sentBefore == 2)
            // Queued once for each ask, admitted once, having waited from its first ask (about
            // 1 s to the late wake-up, then 400 ms to its new start).
            let decisions = await log.all().map(\.decision)
            #expect(
                decisions.map(\.name) == [
                    "rateLimitQueued", "rateLimitQueued", "rateLimitAdmitted",
                ])
            if case .rateLimitAdmitted(let waited) = decisions.last {
                #expect(waited >= .milliseconds(1_300), "waited \(waited)")
            }
            // The first call's start has left the window by then; the late call's first start
            // stays counted, and its new start is a whole span after it: the service never sees
            // the late request closer than the window to the next call's.
            let starts = try await Self.starts(client, "late")
            #expect(starts.count == 2, "starts \(starts)")
            if starts.count == 2 { #expect(starts[1] - starts[0] >= 700_000, "starts \(starts)") }
            await server.stop()
        }
    }

    /// A store whose first reply reaches the caller `delay` late, as a reply does when the
    /// caller's threads are busy as it lands.
    final class LateFirstReply: RedisScripting {
        let client: RESPClient
        let delay: Duration
        let first = Mutex(true)

        init(client: RESPClient, delay: Duration) {
            self.client = client
            self.delay = delay
        }

        func evaluate(_ script: RedisScript, keys: [String], arguments: [String]) async throws
            -> [Int64]
        {
            let reply = try await client.evaluate(script, keys: keys, arguments: arguments)
            let late = first.withLock { isFirst in
                defer { isFirst = false }
                return isFirst
            }
            if late { try await Task.sleep(for: delay) }
            return reply
        }
    }

    @Test func aCallWhoseReplyReachesItPastHalfItsMarginAsksAgain() async throws {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            // The script loaded first, so that the late reply is an admission's.
            try await SharedRateLimiterTests.limiter(client).takePermit(
                RateLimit.window(1, per: .seconds(1)), identifier: "warm")
            let shared = SharedRateLimiter(
                store: LateFirstReply(client: client, delay: .milliseconds(300)),
                timeLimit: .seconds(30), whenStoreFails: .failClosed)
            let sentBefore = client.commandsSent
            // Admitted at once, but ready to start 300 ms after it asked: it asks again, and
            // starts a whole span after the start its first ask recorded.
            try await shared.takePermit(Self.limit, identifier: "reply")
            #expect(client.commandsSent - sentBefore == 2)
            let starts = try await Self.starts(client, "reply")
            #expect(starts.count == 2, "starts \(starts)")
            if starts.count == 2 { #expect(starts[1] - starts[0] >= 700_000, "starts \(starts)") }
            await server.stop()
        }
    }

    @Test func aCallerWhoseActorIsBusyAtItsReservedStartAsksAgain() async throws {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            let shared = SharedRateLimiterTests.limiter(client)
            try await shared.takePermit(Self.limit, identifier: "main")
            // The second call's start is reserved 700 ms after the first; the main actor, where
            // it waits, is busy from about 400 ms to 1,000 ms, so it is ready 300 ms late.
            let busy = Task.detached {
                try await Task.sleep(for: .milliseconds(400))
                await MainActor.run { Thread.sleep(forTimeInterval: 0.6) }
            }
            let sentBefore = client.commandsSent
            // Called from the main actor, as a view model calls it.
            try await Task { @MainActor in
                try await shared.takePermit(Self.limit, identifier: "main")
            }.value
            #expect(client.commandsSent - sentBefore == 2)
            try await busy.value
            await server.stop()
        }
    }

    @Test func aCallLateAtEveryAskStartsAfterItsThirdAsk() async throws {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            try await SharedRateLimiterTests.limiter(client).takePermit(
                RateLimit.window(1, per: .seconds(1)), identifier: "warm")
            var late = SharedRateLimiterTests.limiter(client)
            late.sleep = { try await Task.sleep(for: $0 + .milliseconds(5)) }
            // Half a microsecond allowed: every reply and every wake-up is later than that.
            let limit = RateLimit.window(1, per: .milliseconds(100), margin: .microseconds(1))
            let sentBefore = client.commandsSent
            let call = Task { try await late.takePermit(limit, identifier: "always") }
            let deadline = ContinuousClock.now + .seconds(10)
            while client.commandsSent - sentBefore < 3, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(500))
            #expect(client.commandsSent - sentBefore == 3)
            call.cancel()
            // Started after its third ask (it does not ask for ever): not cancelled.
            try await call.value
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
