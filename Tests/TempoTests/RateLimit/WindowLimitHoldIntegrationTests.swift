// Real-clock, real-network test of a limiter that listens: a server
// (Tests/Fixtures/slowdown_server.py) that goes into a 2 s "slow down" period, answering 429
// with Retry-After, and clients through a window limit with and without the hold.

import Foundation
import Tempo
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A 429's Retry-After, as the clients' operation throws it.
private struct TooManyRequests: Error, RetryAfterProviding {
    var retryAfter: Duration?
}

@Suite(.enabled(if: LoopbackServer.isEnabled("slowdown_server.py")), .serialized)
struct WindowLimitHoldIntegrationTests {
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }()

    /// 8 tasks send 30 requests in all through `limit` (10 in any second); the 5th request
    /// starts the server's 2 s slow-down. Returns the requests that arrived during it.
    private static func requestsDuringTheSlowDown(_ limit: RateLimit) async throws -> Int {
        let server = try await LoopbackServer.start("slowdown_server.py")
        defer { server.stop() }
        let key = UUID().uuidString
        let url = server.url("/limited?key=\(key)&after=5&period=2")
        let registry = TempoRegistry(clock: ContinuousClock())
        let sent = Counter()
        try await registry.withCurrent {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask(priority: .high) {
                        while sent.next() < 30 {
                            _ = try? await rateLimit(limit, identifier: "hold-\(key)") {
                                let (_, response) = try await session.data(from: url)
                                let http = response as? HTTPURLResponse
                                guard http?.statusCode == 429 else { return }
                                let seconds = http?.value(forHTTPHeaderField: "Retry-After")
                                    .flatMap(Double.init)
                                throw TooManyRequests(retryAfter: seconds.map { .seconds($0) })
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let (data, _) = try await session.data(from: server.url("/stats?key=\(key)"))
        let fields = String(decoding: data, as: UTF8.self).split(separator: " ")
        return Int(fields.last ?? "") ?? -1
    }

    /// With the hold, the requests during the slow-down are the one that started it and those
    /// of the first burst already under way when its answer came (at most the 6th to the
    /// 10th); without it, those and the next window's 10 as well.
    @Test func realClockAHeldKeySendsAlmostNothingDuringTheServersSlowDown() async throws {
        try await measuredAlone {
            let limit = RateLimit.window(10, per: .seconds(1))
            let held = try await Self.requestsDuringTheSlowDown(limit.holdingOnRetryAfter())
            let deaf = try await Self.requestsDuringTheSlowDown(limit)
            print(
                "[WindowLimitHold] during the 2 s slow-down: \(held) with the hold, \(deaf) without"
            )
            #expect(held >= 1)
            #expect(held <= 6)
            #expect(deaf >= held + 8)
        }
    }
}

/// Hands out request numbers to the clients.
private final class Counter: Sendable {
    private let value = Lock(0)
    func next() -> Int {
        value.withLock { count in
            defer { count += 1 }
            return count
        }
    }
}
