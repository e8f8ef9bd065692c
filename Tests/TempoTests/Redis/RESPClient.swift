// A small RESP2 client for the Redis tests: one TCP connection to a redis-server on 127.0.0.1,
// its blocking socket calls on a thread of its own, one command at a time.

import Dispatch
import Foundation
import Tempo
import TempoRedis

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A RESP2 reply.
enum RESPValue: Sendable, Hashable, CustomStringConvertible {
    /// `+OK`.
    case simple(String)
    /// `-ERR …`: as a value only inside an array; at the top, ``RESPClient/command(_:)`` throws
    /// ``RESPClientError/errorReply(_:)``.
    case error(String)
    /// `:42`.
    case integer(Int64)
    /// `$3 foo`; `nil` for `$-1`.
    case bulk(String?)
    /// `*2 …`; `nil` for `*-1`.
    case array([RESPValue]?)

    var description: String {
        switch self {
        case .simple(let text): "+\(text)"
        case .error(let text): "-\(text)"
        case .integer(let value): ":\(value)"
        case .bulk(let text?): "\"\(text)\""
        case .bulk(nil): "(nil bulk)"
        case .array(let items?): "[\(items.map(\.description).joined(separator: ", "))]"
        case .array(nil): "(nil array)"
        }
    }
}

enum RESPClientError: Error, Equatable, CustomStringConvertible {
    /// No connection could be made (refused, timed out).
    case connectFailed(String)
    /// The connection broke during a command (closed by the server, reset); it is closed, and
    /// the next command connects again.
    case connectionLost(String)
    /// No full reply within the client's `ioTimeout`; the connection is closed (a late reply
    /// would answer the next command), and the next command connects again.
    case timedOut(String)
    /// The server answered with an error: its message, such as `NOSCRIPT No matching script`.
    case errorReply(String)
    /// A reply of a shape the caller did not expect.
    case unexpectedReply(String)
    /// Bytes that are not RESP2; the connection is closed.
    case protocolViolation(String)
    /// The client was closed.
    case closed

    /// Whether the connection failed (refused, broken, timed out), rather than the server
    /// answering.
    var isConnectionFailure: Bool {
        switch self {
        case .connectFailed, .connectionLost, .timedOut: true
        default: false
        }
    }

    var description: String {
        switch self {
        case .connectFailed(let reason): "connect failed: \(reason)"
        case .connectionLost(let reason): "connection lost: \(reason)"
        case .timedOut(let reason): "timed out: \(reason)"
        case .errorReply(let message): "error reply: \(message)"
        case .unexpectedReply(let reply): "unexpected reply: \(reply)"
        case .protocolViolation(let reason): "protocol violation: \(reason)"
        case .closed: "client closed"
        }
    }
}

/// One connection to a redis-server on 127.0.0.1: commands go out one at a time, in the order
/// they are called, from a thread of the client's own (blocking socket calls never hold a thread
/// of the task pool). A broken or timed-out connection fails its command, and the next command
/// connects again; nothing is retried.
final class RESPClient: Sendable {
    let port: Int
    /// How long a command may take to be sent and answered, and the socket's send and receive
    /// timeouts.
    let ioTimeout: Duration
    let connectTimeout: Duration

    private let worker: Worker
    private let counters = Lock(Counters())

    private struct Counters {
        var commandsSent = 0
        var evalCount = 0
        var evalshaCount = 0
        var connections = 0
    }

    init(port: Int, ioTimeout: Duration = .seconds(30), connectTimeout: Duration? = nil) {
        self.port = port
        self.ioTimeout = ioTimeout
        self.connectTimeout = connectTimeout ?? ioTimeout
        worker = Worker(name: "RESPClient 127.0.0.1:\(port)")
    }

    deinit { worker.stop() }

    /// Commands written to a connection (each sent command, answered or not).
    var commandsSent: Int { counters.withLock { $0.commandsSent } }
    /// `EVAL` commands among them.
    var evalCount: Int { counters.withLock { $0.evalCount } }
    /// `EVALSHA` commands among them.
    var evalshaCount: Int { counters.withLock { $0.evalshaCount } }
    /// Connections made.
    var connections: Int { counters.withLock { $0.connections } }

    /// Sends `arguments` as one command and returns the reply. Throws
    /// ``RESPClientError/errorReply(_:)`` for an error reply, and a connection failure when the
    /// connection could not be made or broke.
    func command(_ arguments: [String]) async throws(RESPClientError) -> RESPValue {
        precondition(!arguments.isEmpty, "a command needs a name")
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<RESPValue, RESPClientError>, Never>) in
            let accepted = worker.enqueue { [self] connection in
                continuation.resume(returning: perform(arguments, on: &connection))
            }
            if !accepted { continuation.resume(returning: .failure(.closed)) }
        }
        let reply = try result.get()
        if case .error(let message) = reply { throw .errorReply(message) }
        return reply
    }

    /// `command(_:)`'s reply or error.
    func result(of arguments: [String]) async -> Result<RESPValue, RESPClientError> {
        do throws(RESPClientError) {
            return .success(try await command(arguments))
        } catch {
            return .failure(error)
        }
    }

    /// `command(_:)` with the arguments written out.
    func command(_ arguments: String...) async throws(RESPClientError) -> RESPValue {
        try await command(arguments)
    }

    /// Closes the connection and ends the client's thread; later commands throw
    /// ``RESPClientError/closed``.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = worker.enqueue { connection in
                connection?.close()
                connection = nil
                continuation.resume()
            }
            worker.stop()
            if !accepted { continuation.resume() }
        }
    }

    /// On the client's thread: connects if needed, sends, reads the reply. Any failure closes
    /// the connection.
    private func perform(_ arguments: [String], on connection: inout Connection?)
        -> Result<RESPValue, RESPClientError>
    {
        if connection == nil {
            do throws(SocketError) {
                connection = Connection(
                    descriptor: try LoopbackSocket.connect(
                        port: port, timeout: connectTimeout, ioTimeout: ioTimeout),
                    ioTimeout: ioTimeout)
                counters.withLock { $0.connections += 1 }
            } catch {
                return .failure(.connectFailed("127.0.0.1:\(port): \(error)"))
            }
        }
        let name = arguments[0].uppercased()
        counters.withLock {
            $0.commandsSent += 1
            if name == "EVAL" { $0.evalCount += 1 }
            if name == "EVALSHA" { $0.evalshaCount += 1 }
        }
        let deadline = ContinuousClock.now + ioTimeout
        do throws(RESPClientError) {
            try connection!.send(Self.encode(arguments), until: deadline)
            return .success(try connection!.readValue(until: deadline))
        } catch {
            connection?.close()
            connection = nil
            return .failure(error)
        }
    }

    /// A command as RESP: an array of bulk strings.
    static func encode(_ arguments: [String]) -> [UInt8] {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            let utf8 = Array(argument.utf8)
            bytes += Array("$\(utf8.count)\r\n".utf8)
            bytes += utf8
            bytes += [13, 10]
        }
        return bytes
    }
}

extension RESPClient: RedisScripting {
    /// `EVALSHA`, then `EVAL` when the server does not have the script (`NOSCRIPT`). The reply
    /// must be an array of integers.
    func evaluate(_ script: RedisScript, keys: [String], arguments: [String]) async throws
        -> [Int64]
    {
        let rest = [String(keys.count)] + keys + arguments
        // A `catch … where` here crashes the 6.3 compiler (MandatoryAllocBoxToStack).
        var result = await result(of: ["EVALSHA", script.sha1] + rest)
        if case .failure(.errorReply(let message)) = result, message.hasPrefix("NOSCRIPT") {
            result = await self.result(of: ["EVAL", script.source] + rest)
        }
        let reply = try result.get()
        guard case .array(let items?) = reply else {
            throw RESPClientError.unexpectedReply(reply.description)
        }
        var values: [Int64] = []
        for item in items {
            guard case .integer(let value) = item else {
                throw RESPClientError.unexpectedReply(reply.description)
            }
            values.append(value)
        }
        return values
    }
}

/// An open socket and the bytes read from it that no reply has used yet. Used only on the
/// client's thread.
private struct Connection {
    let descriptor: Int32
    let ioTimeout: Duration
    private var buffer: [UInt8] = []
    private var start = 0

    init(descriptor: Int32, ioTimeout: Duration) {
        self.descriptor = descriptor
        self.ioTimeout = ioTimeout
    }

    func close() { _ = closeDescriptor(descriptor) }

    func send(_ bytes: [UInt8], until deadline: ContinuousClock.Instant) throws(RESPClientError) {
        var sent = 0
        while sent < bytes.count {
            try wait(for: Int16(POLLOUT), until: deadline)
            let count = bytes.withUnsafeBytes {
                sendBytes(descriptor, $0.baseAddress! + sent, $0.count - sent)
            }
            if count >= 0 {
                sent += count
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                throw .timedOut("the send timeout (\(ioTimeout)) passed")
            } else {
                throw .connectionLost(SocketError("send", errno: errno).description)
            }
        }
    }

    /// Reads one whole reply.
    mutating func readValue(until deadline: ContinuousClock.Instant) throws(RESPClientError)
        -> RESPValue
    {
        let line = try readLine(until: deadline)
        guard let kind = line.first else { throw .protocolViolation("an empty line") }
        let text = String(decoding: line.dropFirst(), as: UTF8.self)
        switch kind {
        case UInt8(ascii: "+"):
            return .simple(text)
        case UInt8(ascii: "-"):
            return .error(text)
        case UInt8(ascii: ":"):
            guard let value = Int64(text) else { throw .protocolViolation("integer \(text)") }
            return .integer(value)
        case UInt8(ascii: "$"):
            guard let length = Int(text), length >= -1 else {
                throw .protocolViolation("bulk length \(text)")
            }
            if length == -1 { return .bulk(nil) }
            let bytes = try read(length + 2, until: deadline)
            guard bytes.suffix(2).elementsEqual([13, 10]) else {
                throw .protocolViolation("a bulk string not ended by CRLF")
            }
            return .bulk(String(decoding: bytes.dropLast(2), as: UTF8.self))
        case UInt8(ascii: "*"):
            guard let count = Int(text), count >= -1 else {
                throw .protocolViolation("array length \(text)")
            }
            if count == -1 { return .array(nil) }
            var items: [RESPValue] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(try readValue(until: deadline)) }
            return .array(items)
        default:
            throw .protocolViolation("type byte \(kind)")
        }
    }

    /// The next line, without its CRLF.
    private mutating func readLine(until deadline: ContinuousClock.Instant)
        throws(RESPClientError) -> ArraySlice<UInt8>
    {
        // How many bytes after `start` have no LF (`fill` moves `start`).
        var scanned = 0
        while true {
            if let end = buffer[(start + scanned)...].firstIndex(of: 10) {
                guard end > start, buffer[end - 1] == 13 else {
                    throw .protocolViolation("a line not ended by CRLF")
                }
                let line = buffer[start..<(end - 1)]
                start = end + 1
                return line
            }
            scanned = buffer.count - start
            try fill(until: deadline)
        }
    }

    private mutating func read(_ count: Int, until deadline: ContinuousClock.Instant)
        throws(RESPClientError) -> ArraySlice<UInt8>
    {
        while buffer.count - start < count { try fill(until: deadline) }
        defer { start += count }
        return buffer[start..<(start + count)]
    }

    /// Appends what the socket has (at least one byte), first dropping the bytes already used.
    private mutating func fill(until deadline: ContinuousClock.Instant) throws(RESPClientError) {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        while true {
            try wait(for: Int16(POLLIN), until: deadline)
            var chunk = [UInt8](repeating: 0, count: 16_384)
            let count = chunk.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, 0)
            }
            if count > 0 {
                buffer += chunk[0..<count]
                return
            }
            if count == 0 { throw .connectionLost("the server closed the connection") }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK {
                throw .timedOut("no reply within the receive timeout (\(ioTimeout))")
            }
            throw .connectionLost(SocketError("recv", errno: errno).description)
        }
    }

    private func wait(for events: Int16, until deadline: ContinuousClock.Instant)
        throws(RESPClientError)
    {
        let ready: Bool
        do throws(SocketError) {
            ready = try LoopbackSocket.waitUntilReady(descriptor, for: events, until: deadline)
        } catch {
            throw .connectionLost(error.description)
        }
        guard ready else {
            throw .timedOut("the command was not sent and answered within \(ioTimeout)")
        }
    }
}

/// `close(2)` and `send(2)` (without `SIGPIPE` where the flag exists), under names that
/// `Connection`'s own `close` and `send` do not hide.
private func closeDescriptor(_ descriptor: Int32) -> Int32 { close(descriptor) }

private func sendBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Darwin)
        send(descriptor, bytes, count, 0)
    #else
        send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
    #endif
}

/// A thread that runs jobs one at a time, in the order they come, each with the connection it
/// keeps (the connection lives only on this thread). The thread holds the worker, not the
/// client: a client no longer used is released, and its `deinit` stops the thread.
private final class Worker: Sendable {
    typealias Job = @Sendable (inout Connection?) -> Void

    private let queue = Lock(Queue())
    /// Signalled once for each job queued, and once for the stop.
    private let signal = DispatchSemaphore(value: 0)

    private struct Queue {
        var jobs: [Job] = []
        var stopped = false
    }

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Queues `job`, or returns false when the worker was stopped (the job will not run).
    func enqueue(_ job: @escaping Job) -> Bool {
        let accepted = queue.withLock { queue in
            guard !queue.stopped else { return false }
            queue.jobs.append(job)
            return true
        }
        if accepted { signal.signal() }
        return accepted
    }

    /// Ends the thread once the jobs queued so far have run.
    func stop() {
        let first = queue.withLock { queue in
            defer { queue.stopped = true }
            return !queue.stopped
        }
        if first { signal.signal() }
    }

    private func run() {
        var connection: Connection?
        while true {
            signal.wait()
            // Taken out of the queue, so that the job (and the client it holds) is released
            // here, outside the lock: a client's `deinit` takes the lock to stop the worker.
            let job: Job? = queue.withLock { queue in
                queue.jobs.isEmpty ? nil : queue.jobs.removeFirst()
            }
            // No job for a signal: it was the stop's, and every job queued has run.
            guard let job else { break }
            job(&connection)
        }
        connection?.close()
    }
}
