// Real-clock, real-network test of the window limit: clients that go through
// `RateLimit.window` against a local server (Tests/Fixtures/window_server.py, Python standard
// library) that counts a rolling window and answers 429 above it, started by `LoopbackServer`.

import Foundation
import Tempo
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A value shared between the clients, under a lock.
private final class Shared<Value: Sendable>: Sendable {
    private let value: Lock<Value>
    init(_ value: Value) { self.value = Lock(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
}

@Suite(.enabled(if: LoopbackServer.isEnabled("window_server.py")), .serialized)
struct WindowLimitIntegrationTests {
    /// The service's published limit: 8 requests in any second (the window limit's default
    /// margin: 50 ms). As many as the clients: each window's requests start as soon as the
    /// window allows, whatever the trips of the window before took (in a parallel run of the
    /// whole suite they spread over up to 143 ms; with more requests a window than clients,
    /// the last of each window would wait for a client, and the rate would measure the trips).
    static let permits = 8
    static let window = Duration.seconds(1)
    /// Requests sent in each run: 3 windows' worth, about 2.1 s at the limit.
    static let requests = 24

    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 8
        return URLSession(configuration: configuration)
    }()

    private static func status(_ url: URL) async throws -> Int {
        let (_, response) = try await session.data(from: url)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// What the server counted for `key`: accepted, refused, and each acceptance's arrival.
    private static func stats(_ server: LoopbackServer, key: String) async throws -> (
        accepted: Int, rejected: Int, arrivals: [Double]
    ) {
        let (data, _) = try await session.data(from: server.url("/stats?key=\(key)"))
        let fields = String(decoding: data, as: UTF8.self).split(separator: " ").map {
            Double($0) ?? 0
        }
        return (Int(fields[0]), Int(fields[1]), Array(fields.dropFirst(2)))
    }

    /// `url` with the client's monotonic time, taken as its permit is, for the server's trip
    /// record.
    private static func stamped(_ url: URL) -> URL {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        let seconds = Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        return URL(string: url.absoluteString + "&sent=\(seconds)")!
    }

    /// The spread of the trips the server recorded (the longest less the shortest), in ms.
    private static func tripSpread(_ server: LoopbackServer, key: String) async throws -> Int {
        let (data, _) = try await session.data(from: server.url("/trips?key=\(key)"))
        let trips = String(decoding: data, as: UTF8.self).split(separator: " ").compactMap {
            Double($0)
        }
        return Int(((trips.max() ?? 0) - (trips.min() ?? 0)) * 1000)
    }

    /// The clients' permit times the server was sent, in order, in seconds.
    private static func permitTimes(_ server: LoopbackServer, key: String) async throws
        -> [Double]
    {
        let (data, _) = try await session.data(from: server.url("/sent?key=\(key)"))
        return String(decoding: data, as: UTF8.self).split(separator: " ").compactMap {
            Double($0)
        }
    }

    /// Checks what the server counted and prints it: no 429, every request accepted, and the
    /// limiter admitted them in at most 1/0.9 of the shortest time the server allows for that
    /// many requests (`ceil(requests / permits) - 1` whole windows from the first to the last).
    /// The rate is measured at the permits, as the clients stamped them, not at the arrivals,
    /// whose spread is the machine's, not the limiter's (the arrivals' rate is printed too).
    private static func check(
        _ server: LoopbackServer, key: String, label: String, refused: Int, lateness: Duration
    ) async throws {
        let counted = try await stats(server, key: key)
        let windows = Double((requests + permits - 1) / permits - 1)
        let shortest = windows * Double(window / .seconds(1))
        let sent = try await permitTimes(server, key: key)
        let took = (sent.last ?? 0) - (sent.first ?? 0)
        let arrived = (counted.arrivals.last ?? 0) - (counted.arrivals.first ?? 0)
        // The most arrivals the server saw in any rolling window (its own count's view).
        var most = 0
        for (index, start) in counted.arrivals.enumerated() {
            let inWindow = counted.arrivals[index...].prefix {
                $0 - start < Double(window / .seconds(1))
            }
            most = max(most, inWindow.count)
        }
        let share = took > 0 ? shortest / took : 0
        let arrivalShare = arrived > 0 ? shortest / arrived : 0
        let spread = try await tripSpread(server, key: key)
        print(
            "[WindowLimitIntegration] \(label): \(counted.rejected) x 429, \(counted.accepted) "
                + "accepted, most in a window \(most), permits over \(took) s: "
                + "\(Int(share * 100))% of the allowed rate (arrivals: \(Int(arrivalShare * 100))%)"
                + ", trips spread over \(spread) ms")
        #expect(sent.count == requests)
        // A client that resumes late after its permit (a loaded machine, a busy pool) does not
        // spend the margin: the window counts a call when its operation ends. So the
        // server's count and the rate are checked however loaded the machine is; how late the
        // clients were and how far their trips spread is printed, for the record.
        print("[WindowLimitIntegration] \(label): clients up to \(lateness) late")
        // The limiter's promise at the clients' permit stamps: never more than `permits` starts
        // in any window.
        var mostStarted = 0
        for (index, start) in sent.enumerated() {
            let inWindow = sent[index...].prefix { $0 - start < Double(window / .seconds(1)) }
            mostStarted = max(mostStarted, inWindow.count)
        }
        #expect(mostStarted <= permits, "\(label): \(mostStarted) permits in one window")
        #expect(share >= 0.9, "\(label): \(share) of the allowed rate")
        do {
            #expect(counted.rejected == 0)
            #expect(refused == 0)
            #expect(counted.accepted == requests)
        }
    }

    /// Eight tasks share the work: each takes the next request and sends it through a waiting
    /// window limit with the default margin.
    @Test func realClockEightTasksThroughAWindowLimitNeverTripTheServerAndKeepItsRate()
        async throws
    {
        try await measuredAlone {
            let server = try await LoopbackServer.start("window_server.py")
            defer { server.stop() }
            let key = UUID().uuidString
            let url = server.url("/limited?key=\(key)&n=\(Self.permits)&window=1")
            let limit = RateLimit.window(Self.permits, per: Self.window)
            let executor = ThreadExecutor()
            defer { executor.stop() }
            let registry = TempoRegistry(clock: ContinuousClock())
            await waitForPunctualTimers(on: executor)
            // The session's connections are opened first, 8 at once: on a loaded machine that
            // takes up to 140 ms, which would otherwise fall on the first window's trips only,
            // past the margin (a start-up cost, paid once, that a margin need not cover).
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask { _ = try await Self.session.data(from: server.url("/stats")) }
                }
                try await group.waitForAll()
            }
            let next = Shared(0)
            let (statuses, lateness) = try await withLatenessProbe {
                try await registry.withCurrent {
                    let clients = (0..<8).map { _ in
                        Task(executorPreference: executor, priority: .high) {
                            var statuses: [Int] = []
                            while next.withLock({ count in
                                defer { count += 1 }
                                return count < Self.requests
                            }) {
                                statuses.append(
                                    try await rateLimit(limit, identifier: "window-\(key)") {
                                        try await Self.status(Self.stamped(url))
                                    })
                            }
                            return statuses
                        }
                    }
                    var statuses: [Int] = []
                    for client in clients { statuses += try await client.value }
                    return statuses
                }
            }
            #expect(statuses.count == Self.requests)
            try await Self.check(
                server, key: key, label: "8 tasks", refused: statuses.count { $0 != 200 },
                lateness: lateness)
        }
    }

    /// Eight plain threads, which cannot wait in the queue: each takes a permit with the
    /// synchronous `takeRatePermit`, sleeps its `retryAfter` when refused, and sends the
    /// request on a blocking socket.
    @Test func realClockEightThreadsThroughAWindowLimitNeverTripTheServerAndKeepItsRate()
        async throws
    {
        try await measuredAlone {
            let server = try await LoopbackServer.start("window_server.py")
            defer { server.stop() }
            let key = UUID().uuidString
            let url = server.url("/limited?key=\(key)&n=\(Self.permits)&window=1")
            let limit = RateLimit.window(Self.permits, per: Self.window)
            let registry = TempoRegistry(clock: ContinuousClock())
            let next = Shared(0)
            let statuses = Shared<[Int]>([])
            let done = DispatchGroup()
            let (finished, lateness) = await withLatenessProbe {
                for _ in 0..<8 {
                    done.enter()
                    let thread = Thread {
                        defer { done.leave() }
                        while next.withLock({ count in
                            defer { count += 1 }
                            return count < Self.requests
                        }) {
                            while true {
                                do {
                                    try registry.withCurrent {
                                        try takeRatePermit(limit, identifier: "window-\(key)")
                                    }
                                    break
                                } catch {
                                    let after =
                                        (error as? RateLimitError)?.retryAfter ?? .milliseconds(1)
                                    Thread.sleep(forTimeInterval: Double(after / .seconds(1)))
                                }
                            }
                            let status = Self.blockingStatus(Self.stamped(url))
                            statuses.withLock { $0.append(status) }
                        }
                    }
                    thread.qualityOfService = QualityOfService.userInitiated
                    thread.start()
                }
                return await finishes(within: .seconds(60)) {
                    await withCheckedContinuation { continuation in
                        done.notify(queue: .global()) { continuation.resume() }
                    }
                }
            }
            #expect(finished)
            #expect(statuses.withLock { $0.count } == Self.requests)
            try await Self.check(
                server, key: key, label: "8 threads",
                refused: statuses.withLock { $0.count { $0 != 200 } }, lateness: lateness)
        }
    }

    /// A request sent from a plain thread with a blocking socket, a connection of its own
    /// (closed after the answer): the status of the answer, 0 when there was none.
    private static func blockingStatus(_ url: URL) -> Int {
        #if canImport(Glibc)
            let stream = Int32(SOCK_STREAM.rawValue)
        #else
            let stream = SOCK_STREAM
        #endif
        let fd = socket(AF_INET, stream, 0)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(url.port ?? 80).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return 0 }
        let path = url.path + (url.query.map { "?" + $0 } ?? "")
        let request = Array(
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        guard send(fd, request, request.count, 0) == request.count else { return 0 }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            answer += buffer[0..<count]
        }
        // "HTTP/1.1 200 OK": the status is the second field of the first line.
        let fields = String(decoding: answer.prefix(32), as: UTF8.self).split(separator: " ")
        return fields.count > 1 ? Int(fields[1]) ?? 0 : 0
    }
}
