// A redis-server of a test's own on a free loopback port, without persistence, in a temporary
// directory: started for one test and stopped when it ends, restarted, killed or paused by the
// fault tests.

import Foundation
import Tempo
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

final class RedisServer: Sendable {
    /// Whether the Redis suites must run even without `redis-server`, and so fail: `.ci/run`
    /// sets `TEMPO_REQUIRE_REDIS_TEST=1`, so CI can never pass with them skipped.
    static var isRequired: Bool {
        ProcessInfo.processInfo.environment["TEMPO_REQUIRE_REDIS_TEST"] == "1"
    }

    /// Whether `redis-server` is on the `PATH`; without it, and unless required, a suite is
    /// skipped, visibly, so `swift test` still works with only the Swift toolchain.
    static var isAvailable: Bool { executable != nil }

    /// Whether a Redis suite runs: required, or able to.
    static var isEnabled: Bool { isRequired || isAvailable }

    /// Why a Redis suite is skipped, as the test run prints it.
    static let notFoundComment: Comment = """
        redis-server not found: install it (Debian/Ubuntu: sudo apt-get install redis-server; \
        macOS: brew install redis) to run the Redis tests
        """

    /// The `redis-server` on the `PATH`.
    static let executable: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").map { "\($0)/redis-server" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }()

    /// The server's working directory (`--dir`) and its log, removed when the server is
    /// released.
    let directory: URL

    private let state: Lock<State>

    private struct State {
        var port: Int
        /// Whether a server has answered on `port`: a restart stays on it.
        var portKept = false
        /// The server's process, until it is reaped.
        var process: pid_t?
        /// The watchdog's process, until it is reaped.
        var watchdog: pid_t?
    }

    /// A server not yet started, on a port free now (``start()`` picks another if it is taken
    /// by then).
    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tempo-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        state = Lock(State(port: try LoopbackSocket.freePort()))
    }

    deinit {
        // The end path of a test stops the server; this is for one that did not get there.
        let (process, watchdog) = state.withLock { ($0.process, $0.watchdog) }
        for child in [process, watchdog].compactMap(\.self) {
            sendSignal(SIGKILL, to: child)
            _ = waitpid(child, nil, 0)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server's port on 127.0.0.1.
    var port: Int { state.withLock { $0.port } }

    /// The running server's process id.
    var processID: pid_t? { state.withLock { $0.process } }

    /// What the server wrote to its log (warnings and errors).
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    private var logFile: URL { directory.appendingPathComponent("redis.log") }

    /// Starts the server and waits until it answers `PING`. On a first start, a port taken
    /// meanwhile by another process, or a server that does not answer on it within 10 s, makes
    /// it try a new one (five tries in all); a restart keeps its port.
    func start() async throws(RedisServerError) {
        guard let executable = Self.executable else { throw .notInstalled }
        var failure = RedisServerError.notStarted
        for _ in 0..<5 {
            let (port, kept) = state.withLock { ($0.port, $0.portKept) }
            do throws(RedisServerError) {
                try await launch(executable, port: port)
                state.withLock { $0.portKept = true }
                return
            } catch {
                failure = error
                switch error {
                case .exited: break
                // A server that never listened on a port it was given: on a first start,
                // another port; a restart must keep its port, so that is final.
                case .notReady where !kept: break
                default: throw error
                }
                if kept {
                    // The old server's socket may not be released yet.
                    try? await Task.sleep(for: .milliseconds(200))
                } else {
                    do throws(SocketError) {
                        let next = try LoopbackSocket.freePort()
                        state.withLock { $0.port = next }
                    } catch {
                        throw .launchFailed("no free port: \(error)")
                    }
                }
            }
        }
        throw failure
    }

    /// Stops the server: `SIGTERM`, then `SIGKILL` if it is still running after 3 s; returns
    /// once it has exited. Stopping a server that is not running does nothing.
    func stop() async {
        let (process, watchdog) = state.withLock { state in
            defer {
                state.process = nil
                state.watchdog = nil
            }
            return (state.process, state.watchdog)
        }
        if let process {
            sendSignal(SIGTERM, to: process)
            if await Self.exitStatus(of: process, within: .seconds(3)) == nil {
                sendSignal(SIGKILL, to: process)
                _ = await Self.exitStatus(of: process, within: .seconds(10))
            }
        }
        if let watchdog {
            sendSignal(SIGKILL, to: watchdog)
            _ = await Self.exitStatus(of: watchdog, within: .seconds(10))
        }
    }

    /// Stops the server and starts an empty one on the same port, as after a crash: keys and
    /// cached scripts are gone, and every client's connection is broken.
    func restart() async throws(RedisServerError) {
        await stop()
        try await start()
    }

    /// Kills the server (`SIGKILL`), as if it died mid-run, and returns once it has exited.
    /// ``restart()`` brings it back; ``stop()`` is still due.
    func kill() async {
        guard let process = state.withLock({ $0.process }) else { return }
        sendSignal(SIGKILL, to: process)
        if await Self.exitStatus(of: process, within: .seconds(10)) != nil {
            state.withLock { $0.process = nil }
        }
    }

    /// Makes the server hold every client's commands for `duration` (`CLIENT PAUSE … ALL`):
    /// connections are accepted, and no command is answered until the pause ends.
    func pause(for duration: Duration) async throws(RESPClientError) {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        _ = try await command(["CLIENT", "PAUSE", "\(milliseconds)", "ALL"])
    }

    /// Empties the server's script cache (`SCRIPT FLUSH`): the next `EVALSHA` of any script
    /// answers `NOSCRIPT`.
    func flushScripts() async throws(RESPClientError) {
        _ = try await command(["SCRIPT", "FLUSH"])
    }

    /// A new client of this server.
    func client(ioTimeout: Duration = .seconds(30)) -> RESPClient {
        RESPClient(port: port, ioTimeout: ioTimeout)
    }

    /// Sends one command on a connection of its own, closed after.
    func command(_ arguments: [String]) async throws(RESPClientError) -> RESPValue {
        let client = client()
        let result = await client.result(of: arguments)
        await client.close()
        return try result.get()
    }

    /// Runs `redis-server` on `port` and waits until it answers `PING` (10 s at most).
    private func launch(_ executable: String, port: Int) async throws(RedisServerError) {
        let arguments = [
            "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning",
            "--dir", directory.path,
        ]
        let process = try Self.spawn(executable, arguments, output: logFile.path)
        let watchdog = try? Self.spawn(
            "/bin/sh", Self.watchdogArguments(server: process, parent: getpid()))
        state.withLock {
            $0.process = process
            $0.watchdog = watchdog
        }
        let probe = RESPClient(port: port, ioTimeout: .seconds(1))
        let failure = await firstPong(from: probe, process: process, port: port)
        await probe.close()
        if let failure {
            await stop()
            throw failure
        }
    }

    /// Sends `PING` until the server answers `PONG` (nil), exits, or 10 s pass.
    private func firstPong(from probe: RESPClient, process: pid_t, port: Int) async
        -> RedisServerError?
    {
        let deadline = ContinuousClock.now + .seconds(10)
        var answer = "no reply yet"
        while true {
            let reply = await probe.result(of: ["PING"])
            // A server that could not start (its port taken) is reaped here.
            if let status = Self.exitStatus(of: process) {
                state.withLock { $0.process = nil }
                return .exited(port: port, status: status, log: log)
            }
            switch reply {
            case .success(.simple("PONG")): return nil
            case .success(let other): answer = other.description
            case .failure(let error): answer = error.description
            }
            if ContinuousClock.now >= deadline {
                return .notReady(port: port, lastAnswer: answer, log: log)
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The arguments of a shell that kills `server` if `parent` (this test process) dies first
    /// (a crash, a `SIGKILL`), so that no server outlives its test run; it looks once a second,
    /// and ends by itself when the server does.
    static func watchdogArguments(server: pid_t, parent: pid_t) -> [String] {
        [
            "-c",
            """
            while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done
            kill -0 "$1" 2>/dev/null || kill -KILL "$2" 2>/dev/null
            """,
            "tempo-redis-watchdog", "\(parent)", "\(server)",
        ]
    }

    /// Starts `executable` with `arguments`, its input from `/dev/null` and its output (and
    /// errors) appended to `output`. Not `Process`: a child started from a thread of the task
    /// pool inherits its blocked signals, `SIGTERM` among them; here the child starts with
    /// none blocked and the usual handlers, and inherits no other descriptor (another test's
    /// pipe held open by a server would keep that test's child waiting for its end).
    static func spawn(_ executable: String, _ arguments: [String], output: String? = nil)
        throws(RedisServerError) -> pid_t
    {
        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t?
            var attributes: posix_spawnattr_t?
        #else
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(
            &actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Darwin)
            flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #else
            // glibc 2.34 and later; Swift's Glibc module does not declare it.
            typealias Actions = UnsafeMutablePointer<posix_spawn_file_actions_t>
            typealias CloseFrom = @convention(c) (Actions, Int32) -> Int32
            if let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
                _ = unsafeBitCast(closeFrom, to: CloseFrom.self)(&actions, 3)
            }
        #endif
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD] {
            sigaddset(&defaults, number)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var process = pid_t()
        let status = posix_spawn(&process, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw .launchFailed("\(executable): \(String(cString: strerror(status)))")
        }
        return process
    }

    /// `process`'s wait status if it has exited (it is reaped then), or nil.
    static func exitStatus(of process: pid_t) -> Int32? {
        var status: Int32 = 0
        while true {
            let result = waitpid(process, &status, WNOHANG)
            if result == process { return status }
            if result == -1, errno == EINTR { continue }
            // ECHILD: not a child of ours any more (reaped already).
            return result == -1 ? -1 : nil
        }
    }

    /// `process`'s wait status once it exits within `timeout`, or nil: looks every 10 ms,
    /// asleep between looks.
    static func exitStatus(of process: pid_t, within timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = exitStatus(of: process) { return status }
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// Starts a server, runs `body` with it, and stops it whether `body` returns or throws.
///
/// A closure whose only `try`s are inside `#expect` must say `async throws in`: its effects are
/// inferred before the macros expand.
func withRedisServer<Value>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (RedisServer) async throws -> Value
) async throws -> Value {
    let server = try RedisServer()
    do {
        try await server.start()
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

enum RedisServerError: Error, CustomStringConvertible {
    case notInstalled
    case notStarted
    case launchFailed(String)
    case exited(port: Int, status: Int32, log: String)
    case notReady(port: Int, lastAnswer: String, log: String)

    var description: String {
        switch self {
        case .notInstalled:
            "redis-server is not on the PATH (TEMPO_REQUIRE_REDIS_TEST=1 requires it): install it"
                + " (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis)"
        case .notStarted:
            "redis-server was not started"
        case .launchFailed(let reason):
            "redis-server could not be launched: \(reason)"
        case .exited(let port, let status, let log):
            "redis-server on 127.0.0.1:\(port) exited (wait status \(status)); its log:\n\(log)"
        case .notReady(let port, let answer, let log):
            "redis-server on 127.0.0.1:\(port) did not answer PING within 10 s (last: \(answer));"
                + " its log:\n\(log)"
        }
    }
}

/// `kill(2)`, under a name that ``RedisServer/kill()`` does not hide.
private func sendSignal(_ number: Int32, to process: Int32) {
    _ = kill(process, number)
}
