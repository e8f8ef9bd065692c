// The test-side Redis infrastructure against a real redis-server: the RESP client's replies,
// its script fallback and its counters, and the server's faults (restart, pause, kill).

import Foundation
import Testing

@testable import TempoRedis

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite(.enabled(if: RedisServer.isEnabled, RedisServer.notFoundComment))
struct RedisInfrastructureTests {
    @Test func pingAnswersPong() async throws {
        try await withRedisServer { server async throws in
            let client = server.client()
            #expect(try await client.command("PING") == .simple("PONG"))
            #expect(client.commandsSent == 1)
            #expect(client.connections == 1)
        }
    }

    @Test func setThenGetReturnsTheValue() async throws {
        try await withRedisServer { server async throws in
            let client = server.client()
            // A value with CRLF inside and multibyte characters: a bulk string's length is in
            // bytes, and its content is not split at lines.
            let value = "a\r\nb \u{e9}\u{4e2d} $3 *1"
            #expect(try await client.command("SET", "greeting", value) == .simple("OK"))
            #expect(try await client.command("GET", "greeting") == .bulk(value))
            #expect(try await client.command("GET", "missing") == .bulk(nil))
            #expect(try await client.command("INCRBY", "counter", "41") == .integer(41))
            #expect(try await client.command("LRANGE", "missing", "0", "-1") == .array([]))
            #expect(try await client.command("BLPOP", "missing", "0.01") == .array(nil))
        }
    }

    @Test func aReplyLongerThanOneReadArrivesWhole() async throws {
        try await withRedisServer { server async throws in
            let client = server.client()
            let value = String(repeating: "abcdefghijklmnopqrstuvwxyz", count: 12_000)
            #expect(try await client.command("SET", "long", value) == .simple("OK"))
            #expect(try await client.command("GET", "long") == .bulk(value))
            #expect(try await client.command("PING") == .simple("PONG"))
            #expect(client.connections == 1)
        }
    }

    @Test func anErrorReplyThrowsAndKeepsTheConnection() async throws {
        try await withRedisServer { server in
            let client = server.client()
            _ = try await client.command("SET", "text", "not a number")
            let error = await #expect(throws: RESPClientError.self) {
                try await client.command("INCR", "text")
            }
            guard case .errorReply(let message)? = error else {
                Issue.record("expected an error reply, got \(String(describing: error))")
                return
            }
            #expect(message.hasPrefix("ERR value is not an integer"))
            let unknown = await #expect(throws: RESPClientError.self) {
                try await client.command("NOSUCHCOMMAND")
            }
            #expect(unknown?.description.hasPrefix("error reply: ERR unknown command") == true)
            #expect(try await client.command("PING") == .simple("PONG"))
            #expect(client.connections == 1)
        }
    }

    @Test func nestedArraysParse() async throws {
        try await withRedisServer { server in
            let client = server.client()
            let reply = try await client.command("EVAL", "return {1, {2, 3, {}}, 'x', false}", "0")
            #expect(
                reply
                    == .array([
                        .integer(1), .array([.integer(2), .integer(3), .array([])]), .bulk("x"),
                        .bulk(nil),
                    ]))
            let withError = try await client.command(
                "EVAL", "return {1, redis.error_reply('TEMPO inner')}", "0")
            #expect(withError == .array([.integer(1), .error("TEMPO inner")]))
        }
    }

    @Test func evaluateFallsBackToEvalOnceThenUsesEvalsha() async throws {
        try await withRedisServer { server in
            let client = server.client()
            let script = try await Self.script(
                "return {tonumber(ARGV[1]) + 1, #KEYS, #ARGV}", on: server)
            // The server has never run it (SCRIPT LOAD, which told its SHA1, is undone).
            try await server.flushScripts()

            let first = try await client.evaluate(script, keys: ["a", "b"], arguments: ["41"])
            #expect(first == [42, 2, 1])
            #expect(client.evalshaCount == 1)
            #expect(client.evalCount == 1)
            #expect(client.commandsSent == 2)

            let second = try await client.evaluate(script, keys: ["a"], arguments: ["1", "x"])
            #expect(second == [2, 1, 2])
            #expect(try await client.evaluate(script, keys: [], arguments: ["-5"]) == [-4, 0, 1])
            #expect(client.evalshaCount == 3)
            #expect(client.evalCount == 1)
            #expect(client.commandsSent == 4)

            try await server.flushScripts()
            #expect(try await client.evaluate(script, keys: ["a"], arguments: ["0"]) == [1, 1, 1])
            #expect(client.evalshaCount == 4)
            #expect(client.evalCount == 2)
            #expect(try await client.evaluate(script, keys: ["a"], arguments: ["0"]) == [1, 1, 1])
            #expect(client.evalshaCount == 5)
            #expect(client.evalCount == 2)
            #expect(client.commandsSent == 7)
        }
    }

    @Test func evaluateRejectsAnyReplyButAnArrayOfIntegers() async throws {
        try await withRedisServer { server in
            let client = server.client()
            let text = try await Self.script("return 'x'", on: server)
            await #expect(throws: RESPClientError.unexpectedReply("\"x\"")) {
                try await client.evaluate(text, keys: [], arguments: [])
            }
            let mixed = try await Self.script("return {1, 'two'}", on: server)
            await #expect(throws: RESPClientError.unexpectedReply("[:1, \"two\"]")) {
                try await client.evaluate(mixed, keys: [], arguments: [])
            }
            let failing = try await Self.script(
                "return redis.error_reply('TEMPO boom')", on: server)
            await #expect(throws: RESPClientError.errorReply("TEMPO boom")) {
                try await client.evaluate(failing, keys: [], arguments: [])
            }
            #expect(client.evalCount == 0)
            #expect(client.evalshaCount == 3)
        }
    }

    @Test func afterARestartTheFirstCommandFailsAndTheNextReconnects() async throws {
        try await withRedisServer { server in
            let client = server.client()
            _ = try await client.command("SET", "kept", "no")
            let port = server.port
            try await server.restart()
            #expect(server.port == port)

            let error = await #expect(throws: RESPClientError.self) {
                try await client.command("PING")
            }
            #expect(error?.isConnectionFailure == true, "\(String(describing: error))")
            #expect(try await client.command("PING") == .simple("PONG"))
            // The restarted server is empty.
            #expect(try await client.command("GET", "kept") == .bulk(nil))
            #expect(client.connections == 2)
        }
    }

    @Test func aPausedServerTimesOutWithinTheIOTimeout() async throws {
        try await measuredAlone {
            try await withRedisServer { server in
                let client = server.client(ioTimeout: .milliseconds(500))
                #expect(try await client.command("PING") == .simple("PONG"))
                try await server.pause(for: .seconds(3))
                let paused = ContinuousClock.now

                // A timeout, not a reply: the pause outlasts the 0.5 s the client waits.
                let started = ContinuousClock.now
                let timedOut = await #expect(throws: RESPClientError.self) {
                    try await client.command("PING")
                }
                let elapsed = started.duration(to: .now)
                guard case .timedOut? = timedOut else {
                    Issue.record("expected a timeout, got \(String(describing: timedOut))")
                    return
                }
                #expect(elapsed >= .milliseconds(450), "\(elapsed)")
                #expect(elapsed < .milliseconds(2_500), "\(elapsed)")

                // A new connection is accepted, and its command times out too.
                let fresh = server.client(ioTimeout: .milliseconds(500))
                let error = await #expect(throws: RESPClientError.self) {
                    try await fresh.command("PING")
                }
                guard case .timedOut? = error else {
                    Issue.record("expected a timeout, got \(String(describing: error))")
                    return
                }

                // Once the pause is over, the next command reconnects: the timed-out connection,
                // whose late reply would answer the wrong command, was closed.
                try await Task.sleep(until: paused + .milliseconds(3_100))
                #expect(try await client.command("PING") == .simple("PONG"))
                #expect(client.connections == 2)
            }
        }
    }

    @Test func aKilledServerFailsCommandsWithoutHanging() async throws {
        try await withRedisServer { server in
            // A time limit far past the bound below: a CI run in parallel with the whole suite
            // once took 6.8 s for both failures, past a 5 s limit and a 4 s bound. They must
            // come from the closed connection and the refused one, never from the limit.
            let client = server.client(ioTimeout: .seconds(60))
            #expect(try await client.command("PING") == .simple("PONG"))
            await server.kill()

            // Both failures come long before the 60 s time limit.

            let started = ContinuousClock.now
            let lost = await #expect(throws: RESPClientError.self) {
                try await client.command("PING")
            }
            #expect(lost?.isConnectionFailure == true, "\(String(describing: lost))")
            let refused = await #expect(throws: RESPClientError.self) {
                try await client.command("PING")
            }
            guard case .connectFailed? = refused else {
                Issue.record("expected a refused connection, got \(String(describing: refused))")
                return
            }
            #expect(started.duration(to: .now) < .seconds(30))

            try await server.restart()
            #expect(try await client.command("PING") == .simple("PONG"))
        }
    }

    @Test func aFleetOfClientsSharesOneServer() async throws {
        try await withRedisServer { server in
            let clients = (0..<8).map { _ in server.client() }
            try await withThrowingTaskGroup { group in
                for client in clients {
                    group.addTask {
                        for _ in 0..<25 { _ = try await client.command("INCR", "fleet") }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await server.command(["GET", "fleet"]) == .bulk("200"))
            for client in clients {
                #expect(client.commandsSent == 25)
                #expect(client.connections == 1)
            }
        }
    }

    @Test func aClosedClientRefusesCommands() async throws {
        try await withRedisServer { server async throws in
            let client = server.client()
            #expect(try await client.command("PING") == .simple("PONG"))
            await client.close()
            await #expect(throws: RESPClientError.closed) { try await client.command("PING") }
        }
    }

    @Test func noServerOutlivesItsTest() async throws {
        var ended: [(pid: Int32, port: Int)] = []
        try await withRedisServer { server in
            ended.append((try #require(server.processID), server.port))
        }
        // A killed server, then stopped.
        try await withRedisServer { server in
            ended.append((try #require(server.processID), server.port))
            await server.kill()
        }
        // A server whose test threw.
        await #expect(throws: CancellationError.self) {
            try await withRedisServer { server in
                ended.append((try #require(server.processID), server.port))
                throw CancellationError()
            }
        }
        #expect(ended.count == 3)
        for (pid, port) in ended {
            #expect(kill(pid, 0) == -1 && errno == ESRCH, "redis-server \(pid) is still running")
            #expect(Self.processes(matching: "redis-server 127.0.0.1:\(port)") == [])
            #expect(Self.processes(matching: "tempo-redis-watchdog \(getpid()) \(pid)") == [])
        }
    }

    @Test func theWatchdogKillsTheServerWhenTheTestProcessDies() async throws {
        // Stand-ins: a process playing the test process, one playing the server.
        let parent = try RedisServer.spawn("/bin/sh", ["-c", "exec sleep 30"])
        let server = try RedisServer.spawn("/bin/sh", ["-c", "exec sleep 30"])
        let watchdog = try RedisServer.spawn(
            "/bin/sh", RedisServer.watchdogArguments(server: server, parent: parent))
        try await Task.sleep(for: .milliseconds(300))
        #expect(RedisServer.exitStatus(of: server) == nil)

        kill(parent, SIGKILL)
        #expect(await RedisServer.exitStatus(of: parent, within: .seconds(5)) != nil)
        let status = await RedisServer.exitStatus(of: server, within: .seconds(5))
        #expect(
            status.map { $0 & 0x7f } == SIGKILL,
            "the server's wait status: \(String(describing: status))")
        #expect(await RedisServer.exitStatus(of: watchdog, within: .seconds(5)) == 0)
        // Whatever failed above, nothing is left running.
        for process in [parent, server, watchdog] where RedisServer.exitStatus(of: process) == nil {
            kill(process, SIGKILL)
            _ = await RedisServer.exitStatus(of: process, within: .seconds(5))
        }
    }

    /// A script with its SHA1, which the server tells (`SCRIPT LOAD`).
    static func script(_ source: String, on server: RedisServer) async throws -> RedisScript {
        guard case .bulk(let sha1?) = try await server.command(["SCRIPT", "LOAD", source]) else {
            throw RESPClientError.unexpectedReply("SCRIPT LOAD")
        }
        return RedisScript(name: "test", source: source, sha1: sha1)
    }

    /// The ids of the processes whose command line contains `pattern` (`pgrep -f`).
    static func processes(matching pattern: String) -> [String] {
        let pgrep = Process()
        let output = Pipe()
        pgrep.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        pgrep.arguments = ["pgrep", "-f", pattern]
        pgrep.standardOutput = output
        do { try pgrep.run() } catch { return ["pgrep failed: \(error)"] }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        pgrep.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
