// SharedRateLimiter against a real redis-server: admissions, waits, refusals, cancellation,
// holds, expiry, one command per admission, and what a call does when the store fails. Real
// clock: durations are short, and every bound has a margin for a loaded machine.

import Foundation
import Testing

@testable import Tempo
@testable import TempoRedis

/// A retry-after the operation throws, as a 429 would.
struct SlowDownReply: Error, RetryAfterProviding {
    var retryAfter: Duration?
}

/// How long `body` took, on the continuous clock.
func elapsed(_ body: () async throws -> Void) async rethrows -> Duration {
    let start = ContinuousClock.now
    try await body()
    return ContinuousClock.now - start
}

@Suite(.enabled(if: RedisServer.isEnabled, RedisServer.notFoundComment), .serialized)
struct SharedRateLimiterTests {
    /// A limiter failing closed, with a time limit that a loaded machine's first call (the
    /// script loaded, the connection opened) stays well within.
    static func limiter(_ client: RESPClient) -> SharedRateLimiter {
        SharedRateLimiter(store: client, timeLimit: .seconds(30), whenStoreFails: .failClosed)
    }

    static func started() async throws -> RedisServer {
        let server = try RedisServer()
        try await server.start()
        return server
    }

    @Test func aWindowAdmitsItsPermitsAtOnceThenReservesTheNextStart() async throws {
        try await measuredAlone {
            let server = try await Self.started()
            let client = server.client()
            let shared = Self.limiter(client)
            let limit = RateLimit.window(3, per: .milliseconds(400), margin: .zero)
            let first = try await elapsed {
                for _ in 0..<3 { try await shared.takePermit(limit, identifier: "w") }
            }
            // The first call loaded the script (EVALSHA, NOSCRIPT, EVAL); the others ran it by
            // its SHA1.
            #expect(client.commandsSent == 4)
            print("[SharedRateLimiter] three free permits took \(first)")
            let fourth = try await elapsed { try await shared.takePermit(limit, identifier: "w") }
            #expect(fourth >= .milliseconds(250), "the fourth start came after \(fourth)")
            // One command for each admission, the waiter's too: no polling.
            #expect(client.commandsSent == 5)
            await server.stop()
        }
    }

    @Test func aRejectingCallIsRefusedWithTheWaitTheStoreWorkedOut() async throws {
        let server = try await Self.started()
        let shared = Self.limiter(server.client())
        let limit = RateLimit.window(2, per: .seconds(10), margin: .zero)
        let start = ContinuousClock.now
        try await shared.takePermit(limit, identifier: "r")
        try await shared.takePermit(limit, identifier: "r")
        let refusal = await #expect(throws: RateLimitError.self) {
            try await shared.takePermit(limit, whenLimited: .reject, identifier: "r")
        }
        let after = try #require(refusal?.retryAfter)
        // The first start leaves the window 10 s after it: that long from the first call,
        // less what the calls took since.
        let took = ContinuousClock.now - start
        #expect(after <= .seconds(10) && after >= .seconds(10) - took, "retry after \(after)")
        await server.stop()
    }

    @Test func aCallWhoseStartWouldComeAfterItsMaximumWaitIsRefusedAtOnce() async throws {
        try await measuredAlone {
            let server = try await Self.started()
            let shared = Self.limiter(server.client())
            let limit = RateLimit.window(1, per: .seconds(3), margin: .zero)
            try await shared.takePermit(limit, identifier: "m")
            let took = await elapsed {
                await #expect(throws: RateLimitError.self) {
                    try await shared.takePermit(
                        limit, whenLimited: .wait(atMost: .seconds(1)), identifier: "m")
                }
            }
            #expect(took < .milliseconds(2_000), "refused after \(took), not at once")
            await server.stop()
        }
    }

    @Test func weightsAboveTheLimitAndOfZeroNeverAskTheStore() async throws {
        let server = try await Self.started()
        let client = server.client()
        let shared = Self.limiter(client)
        await #expect(throws: RateLimitError.cannotAdmit(weight: 4, burst: 3)) {
            try await shared.takePermit(.window(3, per: .seconds(1)), weight: 4, identifier: "c")
        }
        await #expect(throws: RateLimitError.cannotAdmit(weight: 6, burst: 5)) {
            try await shared.takePermit(RateLimit(5, per: .seconds(1)), weight: 6, identifier: "c")
        }
        var ran = 0
        try await shared.rateLimit(.window(3, per: .seconds(1)), weight: 0, identifier: "c") {
            ran += 1
        }
        try await shared.rateLimit(RateLimit(3, per: .zero), identifier: "c") { ran += 1 }
        #expect(ran == 2)
        #expect(client.commandsSent == 0)
        await server.stop()
    }

    @Test func aTokenBucketSpacesCallsByItsRefillAcrossInstances() async throws {
        let server = try await Self.started()
        let one = Self.limiter(server.client())
        let two = Self.limiter(server.client())
        let limit = RateLimit(5, per: .seconds(1), burst: 1)  // one every 200 ms
        let took = try await elapsed {
            for index in 0..<4 {
                try await (index.isMultiple(of: 2) ? one : two).takePermit(limit, identifier: "b")
            }
        }
        #expect(took >= .milliseconds(580), "four calls 200 ms apart took \(took)")
        await server.stop()
    }

    @Test func aCancelledWaiterGivesItsStartBack() async throws {
        let server = try await Self.started()
        let client = server.client()
        let shared = Self.limiter(client)
        let limit = RateLimit.window(1, per: .seconds(1), margin: .zero)
        try await shared.takePermit(limit, identifier: "x")
        let waiter = Task { try await shared.takePermit(limit, identifier: "x") }
        try await Task.sleep(for: .milliseconds(200))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        // Its start (1 s after the first) was given back: one start is left in the window.
        let held = try await client.command("ZCARD", "{tempo:x}:w")
        #expect(held == .integer(1))
        await server.stop()
    }

    @Test func aRetryAfterHoldsTheKeyForEveryInstance() async throws {
        let server = try await Self.started()
        let one = Self.limiter(server.client())
        let two = Self.limiter(server.client())
        let limit = RateLimit.window(10, per: .seconds(1)).holdingOnRetryAfter()
        await #expect(throws: SlowDownReply.self) {
            try await one.rateLimit(limit, identifier: "h") {
                throw SlowDownReply(retryAfter: .milliseconds(600))
            }
        }
        let took = try await elapsed { try await two.takePermit(limit, identifier: "h") }
        #expect(took >= .milliseconds(450), "the other instance waited \(took)")
        await server.stop()
    }

    @Test func idleKeysExpire() async throws {
        let server = try await Self.started()
        let client = server.client()
        let shared = Self.limiter(client)
        try await shared.takePermit(
            .window(5, per: .milliseconds(200), margin: .zero), identifier: "e")
        try await shared.takePermit(RateLimit(5, per: .milliseconds(200)), identifier: "e")
        // A window's calls and a bucket: the window's hash exists only for a hold.
        #expect(try await client.command("DBSIZE") == .integer(2))
        try await Task.sleep(for: .milliseconds(600))
        #expect(try await client.command("DBSIZE") == .integer(0))
        await server.stop()
    }

    @Test func aPausedStoreFailsClosedWithinTheTimeLimitAndRecovers() async throws {
        try await measuredAlone {
            let server = try await Self.started()
            let registry = TempoRegistry(clock: ContinuousClock())
            let log = EventLog(registry)
            let client = server.client(ioTimeout: .seconds(3))
            let shared = SharedRateLimiter(
                store: client, timeLimit: .milliseconds(150),
                retryStoreAfter: .milliseconds(100), whenStoreFails: .failClosed, registry: registry
            )
            let limit = RateLimit.window(100, per: .seconds(1))
            // The script loaded and the connection opened, by a limiter with time to spare.
            try await Self.limiter(client).takePermit(limit, identifier: "p")
            try await server.pause(for: .milliseconds(1_200))
            var failure: SharedLimitStoreError?
            let took = await elapsed {
                do { try await shared.takePermit(limit, identifier: "p") } catch {
                    failure = error as? SharedLimitStoreError
                }
            }
            #expect(failure?.reason == .timedOut(after: .milliseconds(150)))
            #expect(took < .milliseconds(1_500), "settled after \(took)")
            try await Task.sleep(for: .milliseconds(4_000))
            // Back: a call is admitted (a loaded machine may miss 150 ms a few times).
            var admitted = false
            for _ in 0..<20 where !admitted {
                admitted = (try? await shared.takePermit(limit, identifier: "p")) != nil
                if !admitted { try await Task.sleep(for: .milliseconds(150)) }
            }
            #expect(admitted)
            let names = await log.all().map { $0.decision.name }
            #expect(names.contains("storeFailed"))
            #expect(names.contains("storeRecovered"))
            await server.stop()
        }
    }

    @Test func aDeadStoreFallsBackToTheShareOfOneInstance() async throws {
        let server = try await Self.started()
        let registry = TempoRegistry(clock: ContinuousClock())
        let log = EventLog(registry)
        let shared = SharedRateLimiter(
            store: server.client(ioTimeout: .milliseconds(500)), timeLimit: .milliseconds(300),
            whenStoreFails: .fallBack(dividingBy: 2), registry: registry)
        await server.kill()
        let limit = RateLimit.window(4, per: .seconds(5))
        // The share of one of two instances: 2 in the window, in the limiter's registry.
        try await shared.takePermit(limit, whenLimited: .reject, identifier: "f")
        try await shared.takePermit(limit, whenLimited: .reject, identifier: "f")
        await #expect(throws: RateLimitError.self) {
            try await shared.takePermit(limit, whenLimited: .reject, identifier: "f")
        }
        #expect(registry.snapshot().entries.count == 1)
        let events = await log.all()
        let failed = events.filter { $0.decision.name == "storeFailed" }
        #expect(failed.count == 1, "\(events)")
        if case .storeFailed(_, let fellBack) = failed.first?.decision { #expect(fellBack) }
    }

    @Test func aFlushedScriptCacheIsReloadedWithoutTheCallerNoticing() async throws {
        let server = try await Self.started()
        let client = server.client()
        let shared = Self.limiter(client)
        let limit = RateLimit.window(10, per: .seconds(1))
        try await shared.takePermit(limit, identifier: "s")
        try await server.flushScripts()
        try await shared.takePermit(limit, identifier: "s")
        #expect(client.evalCount == 2)
        await server.stop()
    }

    @Test func everyScriptIsNamedByTheSHA1OfItsSource() async throws {
        let server = try await Self.started()
        let client = server.client()
        for script in RedisScript.all {
            #expect(
                try await client.command("SCRIPT", "LOAD", script.source) == .bulk(script.sha1),
                "\(script.name)")
        }
        #expect(SHA1.hex(of: Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(SHA1.hex(of: []) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        await server.stop()
    }

    @Test func aBucketReservationComesBackOnlyWhenNobodyReservedAfterIt() async throws {
        let server = try await Self.started()
        let client = server.client()
        let keys = ["{tempo:g}:b"]
        func admit() async throws -> [Int64] {
            try await client.evaluate(
                .bucketAdmit, keys: keys, arguments: ["", "1000000", "1", "1", ""])
        }
        _ = try await admit()
        let second = try await admit()
        let third = try await admit()
        func undo(_ reply: [Int64]) async throws -> [Int64] {
            try await client.evaluate(
                .bucketCancel, keys: keys,
                arguments: ["", String(reply[3]), String(reply[4]), String(reply[5])])
        }
        // The second has the third behind it: its permit stays taken.
        #expect(try await undo(second) == [0])
        // The third is the latest: its permit comes back, and the next call takes its start.
        #expect(try await undo(third) == [1])
        let next = try await admit()
        #expect(next[1] == third[1] || abs(next[1] - third[1]) < 100_000)
        await server.stop()
    }

    @Test func durationsBecomeWholeMicrosecondsNeverShorterForALimit() {
        #expect(SharedRateLimiter.microseconds(.nanoseconds(1_500)) == 2)
        #expect(SharedRateLimiter.microseconds(.nanoseconds(1_500), roundingUp: false) == 1)
        #expect(SharedRateLimiter.microseconds(.seconds(1)) == 1_000_000)
        #expect(SharedRateLimiter.microseconds(.seconds(-1)) == 0)
        #expect(SharedRateLimiter.microseconds(.seconds(Int64.max)) == 1 << 52)
    }

    @Test func aCallOfTheWholeWindowIsAdmitted() async throws {
        let server = try await Self.started()
        let shared = Self.limiter(server.client())
        try await shared.takePermit(.window(3, per: .seconds(1)), weight: 3, identifier: "all")
        try await shared.takePermit(RateLimit(4, per: .seconds(1)), weight: 4, identifier: "all")
        await server.stop()
    }

    @Test func afterAFailureCallsSkipTheStoreForAWhile() async throws {
        try await measuredAlone {
            let server = try await Self.started()
            let client = server.client(ioTimeout: .seconds(5))
            let shared = SharedRateLimiter(
                store: client, timeLimit: .seconds(1), retryStoreAfter: .seconds(10),
                whenStoreFails: .failClosed)
            let limit = RateLimit.window(100, per: .seconds(1))
            try await server.pause(for: .milliseconds(4_000))
            await #expect(throws: SharedLimitStoreError.self) {
                try await shared.takePermit(limit, identifier: "k")
            }
            // Within `retryStoreAfter` the call fails at once: asking the paused store would take
            // the whole time limit, a second.
            let took = await elapsed {
                await #expect(throws: SharedLimitStoreError.self) {
                    try await shared.takePermit(limit, identifier: "k")
                }
            }
            #expect(took < .milliseconds(500), "the second call asked the store: \(took)")
            await server.stop()
        }
    }

    @Test func aShorterHoldDoesNotEndALongerOne() async throws {
        let server = try await Self.started()
        let client = server.client()
        let now = 1_000_000_000_000_000
        for after in [2_000_000, 500_000] {
            _ = try await client.evaluate(
                .hold, keys: ["{tempo:s}:h"], arguments: [String(now), String(after), "", ""])
        }
        let reply = try await client.evaluate(
            .windowAdmit, keys: ["{tempo:s}:w", "{tempo:s}:h"],
            arguments: [String(now + 600_000), "1000000", "5", "1", ""])
        #expect(reply[0] == 1)
        #expect(reply[1] == 1_400_000, "admitted \(reply[1]) µs after, in a hold of 2 s")
        await server.stop()
    }

    @Test func theLimitersOwnRefusalHoldsNothing() async throws {
        try await measuredAlone {
            let server = try await Self.started()
            let shared = Self.limiter(server.client())
            let limit = RateLimit.window(10, per: .seconds(1)).holdingOnRetryAfter()
            await #expect(throws: RateLimitError.self) {
                try await shared.rateLimit(limit, identifier: "n") {
                    throw RateLimitError.limited(retryAfter: .seconds(2))
                }
            }
            let took = try await elapsed { try await shared.takePermit(limit, identifier: "n") }
            #expect(took < .milliseconds(1_500), "held by the limiter's own refusal: \(took)")
            await server.stop()
        }
    }

    @Test func aBreakerAroundASharedLimitIgnoresTheStoresFailures() async throws {
        let server = try await Self.started()
        let shared = SharedRateLimiter(
            store: server.client(ioTimeout: .milliseconds(500)), timeLimit: .milliseconds(300),
            whenStoreFails: .failClosed)
        await server.kill()
        let registry = TempoRegistry(clock: ContinuousClock())
        let policy = CircuitBreakerPolicy(window: .lastCalls(2), minimumCalls: 2)
        try await registry.withCurrent {
            for _ in 0..<4 {
                await #expect(throws: SharedLimitStoreError.self) {
                    try await circuitBreaker(policy, identifier: "store") {
                        try await shared.takePermit(.window(5, per: .seconds(1)), identifier: "q")
                    }
                }
            }
            // Still closed: the store's failures said nothing about the service.
            let answer = try await circuitBreaker(policy, identifier: "store") { 1 }
            #expect(answer == 1)
        }
    }

    @Test func aHeavyCallCostsRedisWhatALightOneDoes() async throws {
        let server = try await Self.started()
        let client = server.client()
        let shared = Self.limiter(client)
        let limit = RateLimit.window(1_000_000_000, per: .seconds(1))
        try await shared.takePermit(limit, weight: 1_000_000_000, identifier: "heavy")
        try await shared.takePermit(
            RateLimit.window(.max, per: .seconds(1)), weight: .max, identifier: "max")
        #expect(try await client.command("ZCARD", "{tempo:heavy}:w") == .integer(1))
        #expect(try await client.command("ZCARD", "{tempo:max}:w") == .integer(1))
        await server.stop()
    }

    /// Calls of 2^40 each, every one reserved a window after the one before: the running
    /// totals pass 2^50 at the 1,025th and are counted again from the oldest call, and the
    /// reservations go on one window apart.
    @Test func aBusyWindowsTotalsAreCountedAgainBeforeTheyLoseExactness() async throws {
        // A window of 10 s, so that the key's expiry (the newest start's window, on the real
        // clock) outlasts the test.
        let server = try await Self.started()
        let client = server.client()
        let keys = ["{tempo:totals}:w", "{tempo:totals}:h"]
        let weight = String(1 << 40)
        var last: Int64 = -1
        for call in 0..<1_100 {
            let reply = try await client.evaluate(
                .windowAdmit, keys: keys,
                arguments: ["1000000000000000", "10000000", weight, weight, ""])
            #expect(reply[0] == 1)
            #expect(reply[1] == Int64(call) * 10_000_000, "call \(call) waits \(reply[1])")
            #expect(reply[3] <= 1 << 51)
            last = reply[1]
        }
        #expect(last == 10_990_000_000)
        await server.stop()
    }

    /// A full window of four calls of 2^38 each, one more every quarter window: the running
    /// totals pass 2^50 at the 4,097th call and are counted again from the oldest call held.
    /// Right after each call, one more at the same instant is refused with a quarter window to
    /// wait: the calls held, renamed, still add up.
    @Test func aFullWindowStaysFullWhenItsTotalsAreCountedAgain() async throws {
        let server = try await Self.started()
        let client = server.client()
        let keys = ["{tempo:full}:w", "{tempo:full}:h"]
        let base: Int64 = 1_000_000_000_000_000
        let span: Int64 = 4_000_000
        let weight = String(1 << 38)
        for call in 0..<4_200 {
            let now = String(base + Int64(call) * span / 4)
            let admitted = try await client.evaluate(
                .windowAdmit, keys: keys,
                arguments: [now, String(span), String(1 << 40), weight, ""])
            guard admitted[0] == 1, admitted[1] == 0 else {
                Issue.record("call \(call): \(admitted)")
                break
            }
            // Full from the fourth call on: one more is refused.
            guard call >= 3 else { continue }
            let extra = try await client.evaluate(
                .windowAdmit, keys: keys,
                arguments: [now, String(span), String(1 << 40), weight, "0"])
            guard extra[0] == 0, extra[1] == span / 4 else {
                Issue.record("call \(call): one more was \(extra)")
                break
            }
            #expect(admitted[3] <= 1 << 51)
        }
        await server.stop()
    }
}
