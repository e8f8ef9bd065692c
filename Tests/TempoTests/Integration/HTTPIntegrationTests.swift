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

/// Runs blocking `body` on a new thread and returns its result, holding no thread of the task
/// pool meanwhile.
private func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// The local fixture server, started for one test and stopped when it ends.
private struct LocalServer {
    let process: Process
    let input: Pipe
    let port: Int

    /// Whether the suite must run even without `python3`, and so fail: `.ci/run` sets
    /// `TEMPO_REQUIRE_HTTP_TEST=1`, so CI can never pass with this suite skipped.
    static var isRequired: Bool {
        ProcessInfo.processInfo.environment["TEMPO_REQUIRE_HTTP_TEST"] == "1"
    }

    /// Whether `python3` is on the `PATH` (CI has it); without it, and unless required, the
    /// suite is skipped, visibly, so `swift test` still works with only the Swift toolchain.
    static var isAvailable: Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let python = path.split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/python3")
        }
        return python && FileManager.default.isExecutableFile(atPath: "/usr/bin/env")
            && FileManager.default.fileExists(atPath: script.path)
    }

    static var script: URL {
        URL(fileURLWithPath: #filePath)  // Tests/TempoTests/Integration/this file
            .deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Fixtures/http_server.py")
    }

    /// Starts the server and reads the port from its first line of output. The blocking reads
    /// run on a thread of their own, not on the task pool: Python can take seconds to start on
    /// a loaded machine, and a pool thread held that long stalls every other test's timers.
    static func start() async throws -> LocalServer {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", script.path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let reader = output.fileHandleForReading
        let text = await offThePool {
            // A plain read(2), retried when interrupted: `availableData` stops the process on
            // an interrupted system call (seen on a loaded machine), and `read(upToCount:)`
            // waits for the whole count.
            let descriptor = reader.fileDescriptor
            var line = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 256)
            while !line.contains(UInt8(ascii: "\n")) {
                let count = buffer.withUnsafeMutableBytes {
                    read(descriptor, $0.baseAddress, $0.count)
                }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                line.append(contentsOf: buffer[0..<count])
            }
            return String(decoding: line, as: UTF8.self)
        }
        guard text.hasPrefix("PORT "),
            let port = Int(text.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            process.terminate()
            throw ServerError(output: text)
        }
        return LocalServer(process: process, input: input, port: port)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Stops the server; the wait for it to exit happens on a thread of its own.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
        let process = process
        Thread.detachNewThread { process.waitUntilExit() }
    }

    struct ServerError: Error { let output: String }
}

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

    func count(_ server: LocalServer, key: String) async throws -> Int {
        Int(try await get(server.url("/count?key=\(key)"))) ?? -1
    }
}

@Suite(.enabled(if: LocalServer.isAvailable || LocalServer.isRequired), .serialized)
struct HTTPIntegrationTests {
    private let client = Client()

    @Test func realClockRetryHonoursRetryAfterUntilTheServerAnswers() async throws {
        let server = try await LocalServer.start()
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
        let server = try await LocalServer.start()
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
        let server = try await LocalServer.start()
        defer { server.stop() }
        let key = UUID().uuidString
        let clock = ContinuousClock()
        let start = clock.now
        await #expect(throws: TimeoutError.timedOut(.milliseconds(300))) {
            try await timeout(.milliseconds(300)) {
                try await client.get(server.url("/slow?key=\(key)&delay=60"))
            }
        }
        let elapsed = start.duration(to: clock.now)
        #expect(elapsed >= .milliseconds(300))
        #expect(elapsed < .seconds(30))  // the request was cancelled, not waited out
        #expect(try await client.count(server, key: key) == 1)
    }

    @Test func realClockRetryAroundTimeoutRetriesTimeoutsOnly() async throws {
        let server = try await LocalServer.start()
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
