// Real-network integration test of `concurrencyLimit`: URLSession requests against a local
// server (Tests/Fixtures/concurrency_server.py, Python standard library) on 127.0.0.1 that
// answers 429 to a request made while `limit` others are in flight. The server is launched as
// HTTPIntegrationTests.swift launches its own: blocking work off the task pool, the port read
// with read(2).

import Foundation
import Tempo
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The local concurrency server, started for one test and stopped when it ends.
private struct ConcurrencyServer {
    let process: Process
    let port: Int

    static var isRequired: Bool {
        ProcessInfo.processInfo.environment["TEMPO_REQUIRE_HTTP_TEST"] == "1"
    }

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
            .appendingPathComponent("Fixtures/concurrency_server.py")
    }

    static func start() async throws -> ConcurrencyServer {
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", script.path]
        process.standardInput = Pipe()
        process.standardOutput = output
        try process.run()
        let descriptor = output.fileHandleForReading.fileDescriptor
        // Python can take seconds to start on a loaded machine: read on a thread of its own.
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
            throw StartError(output: text)
        }
        return ConcurrencyServer(process: process, port: port)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    func stop() {
        process.terminate()
        let process = process
        Thread.detachNewThread { process.waitUntilExit() }
    }

    struct StartError: Error { let output: String }
}

/// Runs its jobs on a thread of its own. The client's tasks prefer it, so that the throughput
/// the server counts is the limit's and not that of a task pool shared with the rest of a
/// parallel test run (on two cores, other suites' work can hold every pool thread for a while,
/// and each slot handed on would wait for one).
private final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    init() {
        Thread.detachNewThread { [self] in run() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs enqueued so far have run.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

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

private func stats(_ server: ConcurrencyServer, key: String) async throws -> ServerStats {
    let fields = try await get(server.url("/stats?key=\(key)")).1.split(separator: " ")
    return ServerStats(
        served: Int(fields[0])!, rejected: Int(fields[1])!, peak: Int(fields[2])!,
        span: Double(fields[3])!)
}

@Suite(.enabled(if: ConcurrencyServer.isAvailable || ConcurrencyServer.isRequired), .serialized)
struct ConcurrencyLimitHTTPTests {
    /// Allowed in flight at once, the server's time per request, and how many requests.
    let limit = 10
    let seconds = 1.0
    let requests = 40

    @Test func realClockManyRequestsThroughTheLimitNeverTripTheServerAndKeepItsRate() async throws {
        let server = try await ConcurrencyServer.start()
        defer { server.stop() }
        let key = UUID().uuidString
        let url = server.url("/work?key=\(key)&limit=\(limit)&sleep=\(seconds)")
        let executor = ThreadExecutor()
        defer { executor.stop() }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<requests {
                group.addTask(executorPreference: executor) {
                    try await concurrencyLimit(limit, identifier: "concurrency-server") {
                        try await get(url).0
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
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
        #expect(measured >= 0.9 * allowed, "\(measured) requests/s, allowed \(allowed)")
        #expect(measured <= allowed * 1.01)
        #expect(TempoRegistry.shared.snapshot().entries(.concurrencyLimit).isEmpty)
    }

    @Test func realClockTheSameBurstWithoutTheLimitTripsTheServer() async throws {
        // The control: the server does answer 429 above its limit.
        let server = try await ConcurrencyServer.start()
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
