// A Python fixture server from Tests/Fixtures (standard library only) on 127.0.0.1, for the
// real-network tests: started for one test and stopped when it ends. It prints `PORT <n>` as
// its first line, then serves until it is terminated.

import Foundation

struct LoopbackServer {
    let process: Process
    let input: Pipe
    let port: Int

    /// Whether the network suites must run even without `python3`, and so fail: `.ci/run` sets
    /// `TEMPO_REQUIRE_HTTP_TEST=1`, so CI can never pass with them skipped.
    static var isRequired: Bool {
        ProcessInfo.processInfo.environment["TEMPO_REQUIRE_HTTP_TEST"] == "1"
    }

    /// Whether `python3` is on the `PATH` (CI has it) and `script` exists; without them, and
    /// unless required, a suite is skipped, visibly, so `swift test` still works with only the
    /// Swift toolchain.
    static func isAvailable(_ script: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let python = path.split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/python3")
        }
        return python && FileManager.default.isExecutableFile(atPath: "/usr/bin/env")
            && FileManager.default.fileExists(atPath: url(of: script).path)
    }

    /// Whether a suite of `script` runs: required, or able to.
    static func isEnabled(_ script: String) -> Bool { isRequired || isAvailable(script) }

    static func url(of script: String) -> URL {
        URL(fileURLWithPath: #filePath)  // Tests/TempoTests/Support/this file
            .deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Fixtures/\(script)")
    }

    /// Starts `script` and reads the port from its first line of output. The blocking reads
    /// run on a thread of their own, not on the task pool: Python can take seconds to start on
    /// a loaded machine, and a pool thread held that long stalls every other test's timers.
    static func start(_ script: String) async throws -> LoopbackServer {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-B", "-u", url(of: script).path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let descriptor = output.fileHandleForReading.fileDescriptor
        let text = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                // A plain read(2), retried when interrupted: `availableData` stops the process
                // on an interrupted system call (seen on a loaded machine), and
                // `read(upToCount:)` waits for the whole count.
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
            throw StartError(script: script, output: text)
        }
        return LoopbackServer(process: process, input: input, port: port)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Stops the server: closes its input and terminates it (either ends it). The wait for it
    /// to exit happens on a thread of its own, asleep between looks: `waitUntilExit` spins a
    /// core on Linux while it waits, and a run of the suite stops a dozen servers.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
        let process = process
        Thread.detachNewThread {
            for _ in 0..<3_000 where process.isRunning { usleep(10_000) }
        }
    }

    /// The server did not print its port: what it printed instead.
    struct StartError: Error {
        let script: String
        let output: String
    }
}
