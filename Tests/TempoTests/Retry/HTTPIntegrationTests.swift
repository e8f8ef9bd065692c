// Real-clock integration tests: `retry` and `timeout` around real HTTP requests made with
// URLSession against a small local server (Tests/Fixtures/http_server.py, Python standard
// library) on 127.0.0.1. Only this test target imports Foundation; the Tempo module does not.

import Foundation
import Synchronization
import Tempo
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A non-2xx answer; a 503's `Retry-After` becomes the wait `retry` honours.
private struct HTTPStatusError: RetryAfterProviding, Equatable {
    let status: Int
    let retryAfter: Duration?
}

/// A small client: GET, throwing ``HTTPStatusError`` for anything but 200.
private struct Client {
    let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }()

    func get(_ url: URL) async throws -> String {
        let (data, response) = try await session.data(from: url)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            let header = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After")
            throw HTTPStatusError(status: status, retryAfter: header.flatMap(Self.retryAfter))
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// `Retry-After` as delta-seconds. A fraction is accepted so the tests can ask for 300 ms.
    static func retryAfter(_ value: String) -> Duration? {
        guard let seconds = Double(value.trimmingCharacters(in: .whitespaces)), seconds >= 0
        else { return nil }
        return .milliseconds(Int64((seconds * 1_000).rounded()))
    }

    func count(_ server: LoopbackServer, key: String) async throws -> Int {
        Int(try await get(server.url("/count?key=\(key)"))) ?? -1
    }
}

@Suite(.enabled(if: LoopbackServer.isEnabled("http_server.py")), .serialized)
struct HTTPIntegrationTests {
    private let client = Client()

    @Test func realClockRetryHonoursRetryAfterUntilTheServerAnswers() async throws {
        let server = try await LoopbackServer.start("http_server.py")
        defer { server.stop() }
        let key = UUID().uuidString
        let waits = Lock<[Duration]>([])
        let clock = ContinuousClock()
        let start = clock.now
        // The backoff alone would wait 60 s; the server's Retry-After of 300 ms wins.
        let body = try await retry(
            4, backoff: .constant(.seconds(60)),
            onRetry: { _, error, delay in
                #expect(
                    error as? HTTPStatusError
                        == HTTPStatusError(
                            status: 503, retryAfter: .milliseconds(300)))
                waits.withLock { $0.append(delay) }
            },
            operation: { try await client.get(server.url("/flaky?key=\(key)&fail=2&after=0.3")) })
        let elapsed = start.duration(to: clock.now)
        #expect(body == "ok 3")
        #expect(try await client.count(server, key: key) == 3)
        #expect(waits.withLock { $0 } == [.milliseconds(300), .milliseconds(300)])
        #expect(elapsed >= .milliseconds(600))
        // Generous (ThreadSanitizer runs on a loaded machine are slow), and still below the
        // one 60 s backoff wait that the server's Retry-After must have replaced.
        #expect(elapsed < .seconds(59))
    }

    @Test func realClockRetryGivesUpWithTheLastErrorAfterMaxAttempts() async throws {
        let server = try await LoopbackServer.start("http_server.py")
        defer { server.stop() }
        let key = UUID().uuidString
        await #expect(throws: HTTPStatusError(status: 503, retryAfter: .milliseconds(100))) {
            try await retry(3, every: .seconds(5)) {
                try await client.get(server.url("/flaky?key=\(key)&fail=10&after=0.1"))
            }
        }
        #expect(try await client.count(server, key: key) == 3)
    }

    @Test func realClockTimeoutThrowsTimedOutForAnEndpointThatNeverAnswersInTime() async throws {
        let server = try await LoopbackServer.start("http_server.py")
        defer { server.stop() }
        let key = UUID().uuidString
        let clock = ContinuousClock()
        let start = clock.now
        // A second, so that the request reaches the server before its timeout even on a loaded
        // machine: with 300 ms, a load average near 7 (a mutation run beside the suite) once
        // kept it away, and the server counted none.
        await #expect(throws: TimeoutError.timedOut(.seconds(1))) {
            try await timeout(.seconds(1)) {
                try await client.get(server.url("/slow?key=\(key)&delay=60"))
            }
        }
        let elapsed = start.duration(to: clock.now)
        #expect(elapsed >= .seconds(1))
        #expect(elapsed < .seconds(30))  // the request was cancelled, not waited out
        #expect(try await client.count(server, key: key) == 1)
    }

    @Test func realClockRetryAroundTimeoutRetriesTimeoutsOnly() async throws {
        let server = try await LoopbackServer.start("http_server.py")
        defer { server.stop() }
        let key = UUID().uuidString
        let attempts = Lock(0)
        // A second per attempt, so that each request reaches the server before its timeout
        // even on a loaded machine (with 200 ms, a load average near 40 once kept one away).
        await #expect(throws: TimeoutError.timedOut(.seconds(1))) {
            try await retry(
                2, backoff: .constant(.milliseconds(100)),
                shouldRetry: { $0 is TimeoutError },
                operation: {
                    attempts.withLock { $0 += 1 }
                    return try await timeout(.seconds(1)) {
                        try await client.get(server.url("/slow?key=\(key)&delay=5"))
                    }
                })
        }
        #expect(attempts.withLock { $0 } == 2)
        #expect(try await client.count(server, key: key) == 2)
        let live = TempoRegistry.shared.snapshot().entries.filter {
            $0.key.hasPrefix("TempoTests/HTTPIntegrationTests.swift:")
        }
        #expect(live.isEmpty)
    }
}
