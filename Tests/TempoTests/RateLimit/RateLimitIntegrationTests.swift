// Real-clock, real-network test of the rate limiter: a URLSession client that goes through
// `rateLimit` against a local server (Tests/Fixtures/rate_limit_server.py, Python standard
// library) that answers 429 above a request rate, started by `LoopbackServer`.

import Foundation
import Tempo
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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

@Suite(.enabled(if: LoopbackServer.isEnabled("rate_limit_server.py")), .serialized)
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

    private func stats(_ server: LoopbackServer, key: String) async throws -> ServerStats {
        let (data, _) = try await session.data(from: server.url("/stats?key=\(key)"))
        return ServerStats(String(decoding: data, as: UTF8.self))
    }

    /// The server allows 20 requests a second with a burst of 10: requests admitted by the
    /// client 50 ms apart may reach it bunched up when a loaded machine stalls the client for
    /// up to 400 ms. The client asks for the same rate with a burst of 2, and sends 50 requests
    /// at once, each from its own task through the rate limiter: none is refused, and the rate
    /// the server counts, from the 5th arrival to the 50th, is within 10% of 20 a second
    /// (about 2.5 s of real time).
    ///
    /// The rate at which the client starts them is held to the limiter's bound in every run,
    /// however loaded the machine. The server's count takes in each request's trip as well:
    /// under load it read up to 23.9 a second, because a request that starts on time but
    /// arrives late (its task stalled, its connection still being set up) shortens the span the
    /// server measures from the 5th arrival. So the server's rate is checked only when a probe
    /// found the machine punctual, and each run prints how late the 5th arrival was.
    @Test func realClockClientThroughRateLimitNeverTripsTheServerAndKeepsItsRate() async throws {
        try await measuredAlone {
            let server = try await LoopbackServer.start("rate_limit_server.py")
            defer { server.stop() }
            let key = UUID().uuidString
            let url = server.url("/limited?key=\(key)&rate=20&burst=10")
            let limit = RateLimit(20, per: .seconds(1), burst: 2)
            // The client runs on a thread of its own, not in the task pool the rest of a parallel
            // test run keeps busy.
            let executor = ThreadExecutor()
            defer { executor.stop() }
            // Its own registry: its timers are not queued behind the timers other suites arm on
            // the shared one.
            let registry = TempoRegistry(clock: ContinuousClock())
            await waitForPunctualTimers(on: executor)
            // When each operation started on the client (the limiter's admissions).
            let starts = Log<ContinuousClock.Instant>()
            let (statuses, lateness) = try await withLatenessProbe {
                try await registry.withCurrent {
                    // Clients of a high priority: the timer that admits their permits runs at the
                    // priority of the tasks that armed it (see GuaranteesRegistry.md, "Timers keep up with their
                    // callers"), and so is not queued behind the work of the default priority that the
                    // rest of a parallel run keeps the task pool busy with. Unstructured tasks, because
                    // in a task group's children `Task.currentPriority`, which the timers go by, reads
                    // the group's priority on Linux rather than the one they were added with.
                    let clients = (0..<50).map { _ in
                        Task(executorPreference: executor, priority: .high) {
                            try await rateLimit(limit, identifier: "integration-\(key)") {
                                starts.append(.now)
                                return try await status(url)
                            }
                        }
                    }
                    var statuses: [Int] = []
                    for client in clients { statuses.append(try await client.value) }
                    return statuses
                }
            }
            let counted = try await stats(server, key: key)
            #expect(statuses.filter { $0 != 200 }.isEmpty)
            #expect(counted.accepted == 50)
            #expect(counted.rejected == 0)
            let rate = counted.rate(skipping: 4)
            print("[RateLimitIntegration] the server counted \(rate) requests a second, allowed 20")
            // The limiter's own bound holds on the client whatever the load: at most the burst
            // plus 20 a second in any span, so the 5th to the 50th start (46 starts) span at
            // least 44 / 20 = 2.2 s, a rate of at most 45 / 2.2 = 20.45 a second. A late timer
            // can only make the rate lower: the bucket holds at most its burst when it fires.
            let admitted = starts.all.sorted()
            #expect(admitted.count == 50)
            if admitted.count == 50 {
                let span = admitted[49] - admitted[4]
                let seconds = Double(span.attoseconds) / 1e18
                let clientRate = 45 / seconds
                #expect(clientRate <= 20.46, "the client started \(clientRate) a second")
                // What reads high at the server is the trip, not the limiter: a request whose
                // start is on time but whose arrival is late (a stalled client, a connection
                // being set up) shortens the span the server measures. How much later than the
                // last one the 5th arrived, beyond what their starts were apart:
                if counted.arrivals.count == 50 {
                    let serverSpan = counted.arrivals[49] - counted.arrivals[4]
                    let lag = seconds - serverSpan
                    print(
                        "[RateLimitIntegration] the client started \(clientRate) a second; the "
                            + "5th request arrived \(Int(lag * 1000)) ms later than it started, "
                            + "relative to the 50th")
                }
            }
            // The rate needs clients scheduled on time: checked when a probe beside them woke at
            // most 50 ms late (see `withLatenessProbe`); 0 x 429 above holds regardless.
            if lateness <= .milliseconds(50) {
                #expect(abs(rate - 20) <= 2, "server counted \(rate) a second")
            } else {
                print("[RateLimitIntegration] clients up to \(lateness) late: rate not checked")
            }
            // The key leaves the registry once its bucket is full again (within 100 ms).
            let gone = await eventually(within: .seconds(5)) {
                !registry.snapshot().entries.contains { $0.key == "integration-\(key)" }
            }
            #expect(gone)
        }
    }

    /// The control: the same 50 requests without the rate limiter trip the server.
    @Test func realClockTheSameRequestsWithoutTheRateLimitAreRefused() async throws {
        let server = try await LoopbackServer.start("rate_limit_server.py")
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
