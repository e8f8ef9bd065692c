// POSIX socket calls on 127.0.0.1 for the Redis tests: a free port for a server to bind, and a
// connected TCP socket with a connect timeout and send/receive timeouts.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

enum LoopbackSocket {
    /// The address 127.0.0.1:`port`.
    static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        #if canImport(Darwin)
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        return address
    }

    /// A new TCP socket, closed on `exec` so that no child process (a `redis-server` the tests
    /// start) inherits it.
    static func makeSocket() throws(SocketError) -> Int32 {
        #if canImport(Darwin)
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
            if descriptor >= 0 {
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
                var one: Int32 = 1
                _ = setsockopt(
                    descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one,
                    socklen_t(MemoryLayout<Int32>.size))
            }
        #else
            let descriptor = socket(
                AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw SocketError("socket", errno: errno) }
        return descriptor
    }

    /// A loopback port that was free a moment ago, below the ports the system hands out to
    /// connecting sockets (32768 and up on Linux, 49152 and up on macOS), so that no client's
    /// own end of a connection takes it between this check and the server's bind. Another
    /// process may still take it before the caller binds it; the caller retries then.
    static func freePort() throws(SocketError) -> Int {
        var last = SocketError("no free port in 20000..<32768")
        for _ in 0..<64 {
            let candidate = Int.random(in: 20_000..<32_768)
            do throws(SocketError) {
                return try bound(port: candidate)
            } catch {
                last = error
            }
        }
        throw last
    }

    /// Binds a socket to 127.0.0.1:`port` (0: one the system picks), closes it, and returns the
    /// port it was bound to.
    private static func bound(port: Int) throws(SocketError) -> Int {
        let descriptor = try makeSocket()
        defer { _ = close(descriptor) }
        var address = address(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw SocketError("bind 127.0.0.1:\(port)", errno: errno) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getsockname(descriptor, $0, &length)
            }
        }
        guard named == 0 else { throw SocketError("getsockname", errno: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A socket connected to 127.0.0.1:`port` within `timeout`, in blocking mode, with
    /// `ioTimeout` as its send and receive timeouts and Nagle's delay off.
    static func connect(port: Int, timeout: Duration, ioTimeout: Duration) throws(SocketError)
        -> Int32
    {
        let descriptor = try makeSocket()
        do throws(SocketError) {
            try connect(descriptor, port: port, timeout: timeout)
            try setTimeout(descriptor, SO_RCVTIMEO, ioTimeout)
            try setTimeout(descriptor, SO_SNDTIMEO, ioTimeout)
            var one: Int32 = 1
            _ = setsockopt(
                descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one,
                socklen_t(MemoryLayout<Int32>.size))
            return descriptor
        } catch {
            _ = close(descriptor)
            throw error
        }
    }

    /// Connects without blocking, waits for the socket to become writable within `timeout`,
    /// then reads the outcome (`SO_ERROR`) and puts the socket back in blocking mode.
    private static func connect(_ descriptor: Int32, port: Int, timeout: Duration)
        throws(SocketError)
    {
        let flags = fcntl(descriptor, F_GETFL, 0)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw SocketError("fcntl", errno: errno)
        }
        var address = address(port: port)
        let started = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if started != 0 {
            guard errno == EINPROGRESS else { throw SocketError("connect", errno: errno) }
            let deadline = ContinuousClock.now + timeout
            guard try waitUntilReady(descriptor, for: Int16(POLLOUT), until: deadline) else {
                throw SocketError("connect timed out after \(timeout)")
            }
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else {
                throw SocketError("getsockopt", errno: errno)
            }
            guard failure == 0 else { throw SocketError("connect", errno: failure) }
        }
        guard fcntl(descriptor, F_SETFL, flags) == 0 else {
            throw SocketError("fcntl", errno: errno)
        }
    }

    /// Waits with `poll` until `descriptor` is ready for `events` (true) or `deadline` passes
    /// (false). An interrupted wait goes on.
    static func waitUntilReady(
        _ descriptor: Int32, for events: Int16, until deadline: ContinuousClock.Instant
    ) throws(SocketError) -> Bool {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            let (seconds, attoseconds) = left.components
            let rounded = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            let milliseconds = min(seconds * 1_000 + rounded, 1 << 30)
            var request = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&request, 1, Int32(milliseconds))
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { throw SocketError("poll", errno: errno) }
        }
    }

    private static func setTimeout(_ descriptor: Int32, _ option: Int32, _ timeout: Duration)
        throws(SocketError)
    {
        let (seconds, attoseconds) = max(timeout, .milliseconds(1)).components
        var value = timeval()
        value.tv_sec = .init(seconds)
        value.tv_usec = .init(attoseconds / 1_000_000_000_000)
        let size = socklen_t(MemoryLayout<timeval>.size)
        guard setsockopt(descriptor, SOL_SOCKET, option, &value, size) == 0 else {
            throw SocketError("setsockopt", errno: errno)
        }
    }
}

/// `connect(2)`, under a name the static `connect` above does not hide.
private func systemConnect(
    _ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t
) -> Int32 {
    connect(descriptor, address, length)
}

/// A socket call that failed: the call and the system's reason.
struct SocketError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }

    init(_ call: String, errno code: Int32) {
        description = "\(call): \(String(cString: strerror(code))) (errno \(code))"
    }
}
