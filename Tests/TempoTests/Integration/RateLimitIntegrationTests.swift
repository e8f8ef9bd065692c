// Real-clock, real-network test of the rate limiter: a URLSession client that goes through
// `rateLimit` against a local server (Tests/Fixtures/rate_limit_server.py, Python standard
// library) that answers 429 above a request rate. The server is started as in
// HTTPIntegrationTests.swift: its port is read with read(2) on a thread of its own, so no
// thread of the task pool is blocked.

import Foundation
import Tempo
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The rate-enforcing fixture server, started for one test and stopped when it ends.
private struct RateLimitedServer {
    let process: Process
    let port: Int

    static var script: URL {
        URL(fileURLWithPath: #filePath)  // Tests/TempoTests/Integration/this file
            .deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Fixtures/rate_limit_server.py")
    }

    /// As for HTTPIntegrationTests: CI sets `TEMPO_REQUIRE_HTTP_TEST=1` and must run it.
    static var isEnabled: Bool {
        if ProcessInfo.processInfo.environment["TEMPO_REQUIRE_HTTP_TEST"] == "1" { return true }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let python = path.split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/python3")
        }
        return python && FileManager.default.isExecutableFile(atPath: "/usr/bin/env")
            && FileManager.default.fileExists(atPath: script.path)
    }

    static func start() async throws -> RateLimitedServer {
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", script.path]
        process.standardInput = Pipe()
        process.standardOutput = output
        try process.run()
        let descriptor = output.fileHandleForReading.fileDescriptor
        let text = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
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
                continuation.resume(returning: String(decoding: line, as: UTF8.self))
            }
        }
        guard text.hasPrefix("PORT "),
            let port = Int(text.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            process.terminate()
            throw ServerError(output: text)
        }
        return RateLimitedServer(process: process, port: port)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    func stop() {
        process.terminate()
        let process = process
        Thread.detachNewThread { process.waitUntilExit() }
    }

    struct ServerError: Error { let output: String }
}

/// What the server counted for a key.
private struct ServerStats {
    var accepted: Int
    var rejected: Int
    /// When each accepted request arrived, in seconds.
    var arrivals: [Double]

    init(_ text: String) {
        let fields = text.split(separator: " ").map { Double($0) ?? 0 }
        accepted = Int(fields.first ?? 0)
        rejected = Int(fields.count > 1 ? fields[1] : 0)
        arrivals = Array(fields.dropFirst(2))
    }

    /// Accepted requests a second from the `skip`-th arrival to the last: skipping the first
    /// few leaves out the burst and the first connection's setup, which a loaded machine can
    /// stretch by a large part of the run.
    func rate(skipping skip: Int) -> Double {
        guard arrivals.count > skip + 1, let last = arrivals.last else { return 0 }
        let span = last - arrivals[skip]
        return span > 0 ? Double(arrivals.count - 1 - skip) / span : 0
    }
}

@Suite(.enabled(if: RateLimitedServer.isEnabled), .serialized)
struct RateLimitIntegrationTests {
    private let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }()

    private func status(_ url: URL) async throws -> Int {
        let (_, response) = try await session.data(from: url)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    private func stats(_ server: RateLimitedServer, key: String) async throws -> ServerStats {
        let (data, _) = try await session.data(from: server.url("/stats?key=\(key)"))
        return ServerStats(String(decoding: data, as: UTF8.self))
    }

    /// The server allows 20 requests a second with a burst of 10: requests admitted by the
    /// client 50 ms apart may reach it bunched up when a loaded machine stalls the client for
    /// up to 400 ms. The client asks for the same rate with a burst of 2, and sends 50 requests
    /// at once, each from its own task through the rate limiter: none is refused, and the rate
    /// the server counts, from the 5th arrival to the 50th, is within 10% of 20 a second
    /// (about 2.5 s of real time).
    @Test func realClockClientThroughRateLimitNeverTripsTheServerAndKeepsItsRate() async throws {
        let server = try await RateLimitedServer.start()
        defer { server.stop() }
        let key = UUID().uuidString
        let url = server.url("/limited?key=\(key)&rate=20&burst=10")
        let limit = RateLimit(20, per: .seconds(1), burst: 2)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await rateLimit(limit, identifier: "integration-\(key)") {
                        try await status(url)
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let counted = try await stats(server, key: key)
        #expect(statuses.filter { $0 != 200 }.isEmpty)
        #expect(counted.accepted == 50)
        #expect(counted.rejected == 0)
        let rate = counted.rate(skipping: 4)
        #expect(abs(rate - 20) <= 2, "server counted \(rate) a second")
        // The key leaves the registry once its bucket is full again (within 100 ms).
        let gone = await eventually(within: .seconds(5)) {
            !TempoRegistry.shared.snapshot().entries.contains { $0.key == "integration-\(key)" }
        }
        #expect(gone)
    }

    /// The control: the same 50 requests without the rate limiter trip the server.
    @Test func realClockTheSameRequestsWithoutTheRateLimitAreRefused() async throws {
        let server = try await RateLimitedServer.start()
        defer { server.stop() }
        let key = UUID().uuidString
        let url = server.url("/limited?key=\(key)&rate=20&burst=10")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 { group.addTask { try await status(url) } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        // Even if the 50 requests took a whole second to send, 30 would be refused.
        #expect(statuses.filter { $0 == 429 }.count >= 10)
        #expect(try await stats(server, key: key).rejected == statuses.filter { $0 == 429 }.count)
    }
}
