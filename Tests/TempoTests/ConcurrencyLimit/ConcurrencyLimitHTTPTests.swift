// Real-network integration test of `concurrencyLimit`: URLSession requests against a local
// server (Tests/Fixtures/concurrency_server.py, Python standard library) on 127.0.0.1 that
// answers 429 to a request made while `limit` others are in flight, started by
// `LoopbackServer`.

import Foundation
import Tempo
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the server counted for one key.
private struct ServerStats {
    var served: Int
    var rejected: Int
    var peak: Int
    var span: Double
}

private let session: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 30
    configuration.httpMaximumConnectionsPerHost = 64
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    return URLSession(configuration: configuration)
}()

/// GET: the status and the body.
private func get(_ url: URL) async throws -> (Int, String) {
    let (data, response) = try await session.data(from: url)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
}

private func stats(_ server: LoopbackServer, key: String) async throws -> ServerStats {
    let fields = try await get(server.url("/stats?key=\(key)")).1.split(separator: " ")
    return ServerStats(
        served: Int(fields[0])!, rejected: Int(fields[1])!, peak: Int(fields[2])!,
        span: Double(fields[3])!)
}

@Suite(.enabled(if: LoopbackServer.isEnabled("concurrency_server.py")), .serialized)
struct ConcurrencyLimitHTTPTests {
    /// Allowed in flight at once, the server's time per request, and how many requests.
    let limit = 10
    let seconds = 1.0
    let requests = 40

    @Test func realClockManyRequestsThroughTheLimitNeverTripTheServerAndKeepItsRate() async throws {
        try await measuredAlone {
            let server = try await LoopbackServer.start("concurrency_server.py")
            defer { server.stop() }
            let key = UUID().uuidString
            let url = server.url("/work?key=\(key)&limit=\(limit)&sleep=\(seconds)")
            let executor = ThreadExecutor()
            defer { executor.stop() }
            let (statuses, lateness) = try await withLatenessProbe {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<requests {
                        group.addTask(executorPreference: executor) {
                            try await concurrencyLimit(limit, identifier: "concurrency-server") {
                                try await get(url).0
                            }
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
            }
            let counted = try await stats(server, key: key)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(counted.served == requests)
            #expect(counted.rejected == 0)
            #expect(counted.peak == limit)
            // The allowed rate is `limit / seconds` requests a second; through the limit the
            // server sees at least 90% of it.
            let allowed = Double(limit) / seconds
            let measured = Double(counted.served) / counted.span
            print("[ConcurrencyLimitHTTP] \(measured) requests/s at the server, allowed \(allowed)")
            // The rate needs clients scheduled on time: checked when a probe beside them woke
            // at most 50 ms late (a machine loaded from outside the test process can delay them
            // by more; see `withLatenessProbe`). The bound above it always holds.
            if lateness <= .milliseconds(50) {
                #expect(measured >= 0.9 * allowed, "\(measured) requests/s, allowed \(allowed)")
            } else {
                print("[ConcurrencyLimitHTTP] clients up to \(lateness) late: rate not checked")
            }
            #expect(measured <= allowed * 1.01)
            #expect(TempoRegistry.shared.snapshot().entries(.concurrencyLimit).isEmpty)
        }
    }

    @Test func realClockTheSameBurstWithoutTheLimitTripsTheServer() async throws {
        // The control: the server does answer 429 above its limit.
        let server = try await LoopbackServer.start("concurrency_server.py")
        defer { server.stop() }
        let key = UUID().uuidString
        let url = server.url("/work?key=\(key)&limit=\(limit)&sleep=\(seconds)")
        _ = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<(limit * 4) { group.addTask { try await get(url).0 } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(try await stats(server, key: key).rejected > 0)
    }
}
