// Real-network test of the observer: URLSession requests against a local server
// (Tests/Fixtures/budget_server.py, Python standard library) on 127.0.0.1 that answers every
// request with 503 and counts them. The counts the observer reports must add up to what the
// server counted: the calls the rate limit let through, plus every retry reported.

import Foundation
import Synchronization
import Tempo
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The server said no.
private struct ServerDown: Error {
    let status: Int
}

private let session: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 30
    configuration.httpMaximumConnectionsPerHost = 16
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    return URLSession(configuration: configuration)
}()

private func get(_ url: URL) async throws -> String {
    let (data, response) = try await session.data(from: url)
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    guard status == 200 else { throw ServerDown(status: status) }
    return String(decoding: data, as: UTF8.self)
}

@Suite(.enabled(if: LoopbackServer.isEnabled("budget_server.py")), .serialized)
struct EventsHTTPTests {
    @Test func realClockTheObserversCountsMatchTheServers() async throws {
        let server = try await LoopbackServer.start("budget_server.py")
        defer { server.stop() }
        let key = UUID().uuidString
        let url = server.url("/fail?key=\(key)")
        let counts = Lock<[String: Int]>([:])
        // The shared registry, as a server would observe it; other tests use it too, so only
        // this test's keys are counted.
        let observer = TempoRegistry.shared.observe { event in
            guard event.key.hasPrefix(key) || event.key.hasPrefix("TempoTests/EventsHTTPTests")
            else { return }
            let name: String
            switch event.decision {
            case .rateLimitRefused: name = "refused"
            case .retryScheduled: name = "retried"
            case .retryStopped(_, _, .attemptsExhausted): name = "exhausted"
            case .retryStopped(_, _, .budgetRefused): name = "budget"
            default: name = "other"
            }
            counts.withLock { $0[name, default: 0] += 1 }
        }
        defer { observer.cancel() }
        let calls = 40
        // A burst of 25: the rest of the 40 calls are refused before reaching the server. The
        // budget allows a retry a window (0.1 a second over 10 s) and refuses the rest, however
        // slowly a loaded machine runs the calls.
        let limit = RateLimit(1, per: .seconds(3_600), burst: 25)
        let budget = RetryBudget(identifier: key + "-budget", ratio: 0, minimumPerSecond: 0.1)
        let failures = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<calls {
                group.addTask {
                    do {
                        try await rateLimit(limit, whenLimited: .reject, identifier: key) {
                            _ = try await retry(3, every: .milliseconds(2), budget: budget) {
                                try await get(url)
                            }
                        }
                    } catch is ServerDown, is RateLimitError {
                        return 1
                    } catch {}
                    return 0
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == calls)
        await observer.waitUntilDelivered()
        let requests = Int(try await get(server.url("/stats?key=\(key)")))!
        let seen = counts.withLock { $0 }
        print("[EventsHTTP] server counted \(requests) requests; the observer saw \(seen)")
        let refused = seen["refused", default: 0]
        let retried = seen["retried", default: 0]
        #expect(refused == calls - 25)
        #expect(requests == calls - refused + retried)
        // Each call the limit let through stopped once: out of attempts, or refused a retry.
        #expect(seen["exhausted", default: 0] + seen["budget", default: 0] == calls - refused)
        #expect(seen["budget", default: 0] > 0)
        #expect(seen["other", default: 0] == 0)
        resetRetryBudget(identifier: key + "-budget")
    }
}
