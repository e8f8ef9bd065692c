// A window's call that is ready to start late, as a task on a loaded machine is: past half its
// margin it does not start; it asks Redis again, three asks at most. Real redis-server, real
// clock: the lateness is put in (a sleep that lasts longer than asked, a reply that reaches the
// caller late, a busy main actor), and the starts are read back from Redis, where they are
// exact.

import Foundation
import Testing

@testable import Tempo
@testable import TempoRedis

@Suite(.enabled(if: RedisServer.isEnabled, RedisServer.notFoundComment), .serialized)
struct SharedLimitLateWakeTests {
    /// True the first time it is asked, false after.
    final class FirstTime: Sendable {
        private let isFirst = Lock(true)

        func take() -> Bool {
            isFirst.withLock { isFirst in
                defer { isFirst = false }
                return isFirst
            }
        }
    }

    /// A sleep that lasts `extra` longer than asked the first time it is called.
    static func oversleepingOnce(by extra: Duration) -> @Sendable (Duration) async throws -> Void {
        let first = FirstTime()
        return { wait in try await Task.sleep(for: first.take() ? wait + extra : wait) }
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

    /// A store that records the scripts run through it, by name.
    final class Recording: RedisScripting {
        let base: any RedisScripting
        let names = Lock<[String]>([])

        init(_ base: any RedisScripting) { self.base = base }

        func evaluate(_ script: RedisScript, keys: [String], arguments: [String]) async throws
            -> [Int64]
        {
            names.withLock { $0.append(script.name) }
            return try await base.evaluate(script, keys: keys, arguments: arguments)
        }

        /// Admissions asked (either kind of limit).
        var asks: Int { names.withLock { $0.filter { $0.hasSuffix("-admit") }.count } }
        /// Scripts run to give a start back.
        var givesBack: Int { names.withLock { $0.filter { $0.hasSuffix("-cancel") }.count } }
    }

    /// A limiter on `store` that fails closed, with time to spare for a loaded machine.
    static func limiter(_ store: any RedisScripting, registry: TempoRegistry = .shared)
        -> SharedRateLimiter
    {
        SharedRateLimiter(
            store: store, timeLimit: .seconds(30), whenStoreFails: .failClosed, registry: registry)
    }

    /// The Redis server's clock, in microseconds.
    static func serverMicroseconds(_ client: RESPClient) async throws -> Int64 {
        guard case .array(let parts?) = try await client.command("TIME"), parts.count == 2,
            case .bulk(let seconds?) = parts[0], case .bulk(let micros?) = parts[1],
            let s = Int64(seconds), let m = Int64(micros)
        else { return 0 }
        return s * 1_000_000 + m
    }

    /// A window of 1 per 300 ms with a margin of 400 ms: starts 700 ms apart, and a waiter may
    /// wake up to 200 ms late.
    static let limit = RateLimit.window(1, per: .milliseconds(300), margin: .milliseconds(400))

    @Test func aWaiterWokenPastHalfItsMarginGivesItsStartBackAndAsksAgain() async throws {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            let registry = TempoRegistry(clock: ContinuousClock())
            let log = EventLog(registry)
            let store = Recording(client)
            var late = Self.limiter(store, registry: registry)
            let first = try await Self.serverMicroseconds(client)
            try await late.takePermit(Self.limit, identifier: "late")
            // 300 ms late: past half the margin (200 ms), within the whole margin.
            late.sleep = Self.oversleepingOnce(by: .milliseconds(300))
            try await late.takePermit(Self.limit, identifier: "late")
            // Reserved 700 ms after the first, woken 300 ms past that: nobody had reserved after
            // it, so it gave its start back and asked again, and the window had room at once.
            #expect(store.asks == 3)
            #expect(store.givesBack == 1)
            // Queued for its first ask, admitted once, having waited from its first ask.
            let decisions = await log.all().map(\.decision)
            #expect(decisions.map(\.name) == ["rateLimitQueued", "rateLimitAdmitted"])
            if case .rateLimitAdmitted(let waited) = decisions.last {
                #expect(waited >= .milliseconds(950), "waited \(waited)")
            }
            // One start: the late call's, at the instant it asked again, a whole span after the
            // first call's or more (whose start has left the window). Its first start is gone.
            let starts = try await Self.starts(client, "late")
            #expect(starts.count == 1, "starts \(starts)")
            if let start = starts.first { #expect(start - first >= 950_000, "started \(start)") }
            await server.stop()
        }
    }

    @Test func aLateWaiterWithCallsReservedAfterItLeavesItsStartCountedAndWaitsAgain()
        async throws
    {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            let registry = TempoRegistry(clock: ContinuousClock())
            let log = EventLog(registry)
            let store = Recording(client)
            var late = Self.limiter(store, registry: registry)
            let punctual = Self.limiter(client)
            try await late.takePermit(Self.limit, identifier: "kept")
            late.sleep = Self.oversleepingOnce(by: .milliseconds(300))
            let b = Task { try await late.takePermit(Self.limit, identifier: "kept") }
            // C reserves after B (at 1.4 s), so B's start (0.7 s) cannot be given back.
            try await Task.sleep(for: .milliseconds(150))
            let c = Task { try await punctual.takePermit(Self.limit, identifier: "kept") }
            try await b.value
            try await c.value
            // B asked, could not give its start back, and asked again: its new start is a span
            // after C's, at 2.1 s.
            #expect(store.asks == 3)
            #expect(store.givesBack == 1)
            let starts = try await Self.starts(client, "kept")
            #expect(starts.count == 3, "starts \(starts)")
            if starts.count == 3 {
                #expect(starts[1] - starts[0] == 700_000, "starts \(starts)")
                #expect(starts[2] - starts[1] == 700_000, "starts \(starts)")
            }
            let decisions = await log.all().map(\.decision)
            #expect(
                decisions.map(\.name) == [
                    "rateLimitQueued", "rateLimitQueued", "rateLimitAdmitted",
                ])
            if case .rateLimitAdmitted(let waited) = decisions.last {
                #expect(waited >= .milliseconds(1_900), "waited \(waited)")
            }
            await server.stop()
        }
    }

    /// A store whose first reply reaches the caller `delay` late, as a reply does when the
    /// caller's threads are busy as it lands.
    final class LateFirstReply: RedisScripting {
        let client: RESPClient
        let delay: Duration
        let first = FirstTime()

        init(client: RESPClient, delay: Duration) {
            self.client = client
            self.delay = delay
        }

        func evaluate(_ script: RedisScript, keys: [String], arguments: [String]) async throws
            -> [Int64]
        {
            let reply = try await client.evaluate(script, keys: keys, arguments: arguments)
            if first.take() { try await Task.sleep(for: delay) }
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
            let store = Recording(LateFirstReply(client: client, delay: .milliseconds(300)))
            let shared = Self.limiter(store)
            // Admitted at once, but ready to start 300 ms after it asked: it gives its start
            // back and asks again, and starts at the instant of its second ask.
            let asked = try await Self.serverMicroseconds(client)
            try await shared.takePermit(Self.limit, identifier: "reply")
            #expect(store.asks == 2)
            #expect(store.givesBack == 1)
            let starts = try await Self.starts(client, "reply")
            #expect(starts.count == 1, "starts \(starts)")
            if let start = starts.first { #expect(start - asked >= 280_000, "started \(start)") }
            await server.stop()
        }
    }

    @Test func aCallerWhoseActorIsBusyAtItsReservedStartAsksAgain() async throws {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            let store = Recording(client)
            let shared = Self.limiter(store)
            try await shared.takePermit(Self.limit, identifier: "main")
            // The second call's start is reserved 700 ms after the first; the main actor, where
            // it waits, is busy from about 400 ms to 1,000 ms, so it is ready 300 ms late.
            let busy = Task.detached {
                try await Task.sleep(for: .milliseconds(400))
                await MainActor.run { Thread.sleep(forTimeInterval: 0.6) }
            }
            // Called from the main actor, as a view model calls it.
            try await Task { @MainActor in
                try await shared.takePermit(Self.limit, identifier: "main")
            }.value
            // The first call's ask, then the second's two, with its start given back between.
            #expect(store.asks == 3)
            #expect(store.givesBack == 1)
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
            let store = Recording(client)
            var late = Self.limiter(store)
            late.sleep = { try await Task.sleep(for: $0 + .milliseconds(5)) }
            // Half a microsecond allowed: every reply and every wake-up is later than that.
            let limit = RateLimit.window(1, per: .milliseconds(100), margin: .microseconds(1))
            let call = Task { try await late.takePermit(limit, identifier: "always") }
            let deadline = ContinuousClock.now + .seconds(10)
            while store.asks < 3, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(500))
            #expect(store.asks == 3)
            #expect(store.givesBack == 2)
            call.cancel()
            // Started after its third ask (it does not ask for ever): not cancelled.
            try await call.value
            await server.stop()
        }
    }

    /// Waits `delay` whether or not the task is cancelled, as a busy thread or actor does.
    static func busy(for delay: Duration) async {
        let end = ContinuousClock.now + delay
        while ContinuousClock.now < end { await Task.yield() }
    }

    @Test func aCallCancelledWhileLateGivesItsStartBackAndDoesNotAskAgain() async throws {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            let store = Recording(client)
            var late = Self.limiter(store)
            try await late.takePermit(Self.limit, identifier: "cancelled")
            // Its sleep ends on time, then its task is held 400 ms, and cancelled meanwhile.
            late.sleep = {
                try await Task.sleep(for: $0)
                await Self.busy(for: .milliseconds(400))
            }
            let call = Task { try await late.takePermit(Self.limit, identifier: "cancelled") }
            try await Task.sleep(for: .milliseconds(850))
            call.cancel()
            await #expect(throws: CancellationError.self) { try await call.value }
            // Its ask and the script that gave its start back (nobody had reserved after it):
            // no second ask, and only the first call's start is left.
            #expect(store.asks == 2)
            #expect(store.givesBack == 1)
            #expect(try await Self.starts(client, "cancelled").count == 1)
            await server.stop()
        }
    }

    @Test func aLateRejectingCallGetsItsOwnStartBackAndIsAdmitted() async throws {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            try await SharedRateLimiterTests.limiter(client).takePermit(
                RateLimit.window(1, per: .seconds(1)), identifier: "warm")
            let shared = SharedRateLimiter(
                store: LateFirstReply(client: client, delay: .milliseconds(300)),
                timeLimit: .seconds(30), whenStoreFails: .failClosed)
            // Admitted at once but late: its start is given back (nobody reserved after it), so
            // its second ask finds the window free, instead of refused by its own first start.
            try await shared.takePermit(Self.limit, whenLimited: .reject, identifier: "own")
            #expect(try await Self.starts(client, "own").count == 1)
            await server.stop()
        }
    }

    /// A store whose first admission answers `delay` late and whose later calls fail, each
    /// after `failingAfter`.
    final class LateThenFailing: RedisScripting {
        let client: RESPClient
        let delay: Duration
        let failingAfter: Duration
        let calls = Lock(0)

        init(client: RESPClient, delay: Duration, failingAfter: Duration) {
            self.client = client
            self.delay = delay
            self.failingAfter = failingAfter
        }

        func evaluate(_ script: RedisScript, keys: [String], arguments: [String]) async throws
            -> [Int64]
        {
            let call = calls.withLock { count in
                count += 1
                return count
            }
            guard call == 1 else {
                try await Task.sleep(for: failingAfter)
                throw RESPClientError.closed
            }
            let reply = try await client.evaluate(script, keys: keys, arguments: arguments)
            try await Task.sleep(for: delay)
            return reply
        }
    }

    @Test func aLateCallThatFallsBackKeepsToWhatIsLeftOfItsLongestWait() async throws {
        try await measuredAlone {
            let server = try await SharedRateLimiterTests.started()
            let client = server.client()
            try await SharedRateLimiterTests.limiter(client).takePermit(
                RateLimit.window(1, per: .seconds(1)), identifier: "warm")
            let registry = TempoRegistry(clock: ContinuousClock())
            let shared = SharedRateLimiter(
                store: LateThenFailing(
                    client: client, delay: .milliseconds(500), failingAfter: .milliseconds(600)),
                timeLimit: .seconds(30), retryStoreAfter: .zero,
                whenStoreFails: .fallBack(dividingBy: 1), registry: registry)
            let limit = RateLimit.window(1, per: .seconds(2), margin: .milliseconds(400))
            // The fallback's in-process window is full for 2.4 s from now.
            let local = limit.dividedAmong(1)
            try await registry.withCurrent {
                try await rateLimit(local, identifier: shared.fallbackIdentifier("fb")) {}
            }
            // Late by 500 ms on its first ask; giving its start back fails after 600 ms, and so
            // does its second ask: at 1.7 s it falls back with 0.5 s left of its 2.2 s, and the
            // fallback's window has room only at 2.4 s. (With its whole wait, or without the
            // failed ask's time taken off, the fallback would admit it.)
            await #expect(throws: RateLimitError.self) {
                try await shared.takePermit(
                    limit, whenLimited: .wait(atMost: .milliseconds(2_200)), identifier: "fb")
            }
            await server.stop()
        }
    }

    @Test func aGiveBackNeverRemovesAnotherCallsStartOfTheSameName() async throws {
        let server = try await SharedRateLimiterTests.started()
        let client = server.client()
        let keys = ["{tempo:same}:w", "{tempo:same}:h"]
        func admit(at instant: Int64) async throws -> [Int64] {
            try await client.evaluate(
                .windowAdmit, keys: keys, arguments: [String(instant), "1000000", "5", "1", ""])
        }
        let first = try await admit(at: 10_000_000)
        // The key empties (here by a reset; an expiry does the same), and its totals count from
        // zero again: the next call bears the first one's name, at another instant.
        _ = try await client.command("DEL", keys[0])
        let second = try await admit(at: 20_000_000)
        #expect(first[3] == second[3])
        let undo = ["", String(first[3]), "1", String(first[2] + first[1])]
        let reply = try await client.evaluate(.windowCancel, keys: keys, arguments: undo)
        #expect(reply == [0])
        #expect(try await Self.starts(client, "same") == [20_000_000])
        await server.stop()
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
            let punctual = SharedRateLimiterTests.limiter(client)
            late.sleep = Self.oversleepingOnce(by: .milliseconds(600))
            try await late.takePermit(Self.limit, identifier: "budget")
            // Its first start was 700 ms away, within the second it may wait. Another call
            // reserves after it, so its start stays counted; woken 1.3 s after it asked, it has
            // no wait left, and its new start (2.1 s) is not free at once.
            let b = Task {
                try await late.takePermit(
                    Self.limit, whenLimited: .wait(atMost: .seconds(1)), identifier: "budget")
            }
            try await Task.sleep(for: .milliseconds(150))
            try await punctual.takePermit(Self.limit, identifier: "budget")
            await #expect(throws: RateLimitError.self) { try await b.value }
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
