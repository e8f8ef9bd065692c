// Real-network integration test of `retry(..., budget:)`: URLSession requests against a local
// server (Tests/Fixtures/budget_server.py, Python standard library) on 127.0.0.1 that answers
// every request with 503 and counts them, started by `LoopbackServer`. The bound is checked on
// the server's count: what the dependency really saw.

import Foundation
import Tempo
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private let session: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 30
    configuration.httpMaximumConnectionsPerHost = 64
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    return URLSession(configuration: configuration)
}()

/// The server said no.
private struct ServerDown: Error {
    let status: Int
}

/// GET: the body; a status other than 200 throws ``ServerDown``.
private func get(_ url: URL) async throws -> String {
    let (data, response) = try await session.data(from: url)
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    guard status == 200 else { throw ServerDown(status: status) }
    return String(decoding: data, as: UTF8.self)
}

@Suite(.enabled(if: LoopbackServer.isEnabled("budget_server.py")), .serialized)
struct RetryBudgetHTTPTests {
    let calls = 200
    let maxAttempts = 4
    let concurrency = 40

    /// Makes `calls` client calls, `concurrency` at a time, each a `retry` of at most
    /// `maxAttempts` against the failing server; returns the requests the server counted, the
    /// seconds the calls took, and the budget's row in the registry read as soon as they ended
    /// (`settled`: the seconds from the first call until that read).
    func run(budget: RetryBudget?, key: String) async throws -> (
        requests: Int, seconds: Double, row: (balance: Double, calls: Int, retries: Int)?,
        settled: Double
    ) {
        let server = try await LoopbackServer.start("budget_server.py")
        defer { server.stop() }
        let url = server.url("/fail?key=\(key)")
        let executor = ThreadExecutor()
        defer { executor.stop() }
        let (calls, maxAttempts, concurrency) = (calls, maxAttempts, concurrency)
        let start = ContinuousClock.now
        let failures = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<concurrency {
                group.addTask(executorPreference: executor) {
                    var failed = 0
                    for _ in stride(from: worker, to: calls, by: concurrency) {
                        do {
                            _ = try await retry(
                                maxAttempts, every: .milliseconds(2), budget: budget
                            ) { try await get(url) }
                        } catch is ServerDown {
                            failed += 1
                        } catch {}
                    }
                    return failed
                }
            }
            return await group.reduce(0, +)
        }
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        // Read before the request for the server's count, which a loaded machine can hold up
        // for seconds: by then the first calls may have left the budget's window.
        let row = TempoRegistry.shared.budgetRow(key)
        let settled = (ContinuousClock.now - start) / .seconds(1)
        #expect(failures == calls)  // every call failed, with the server's 503
        let requests = Int(try await get(server.url("/stats?key=\(key)")))!
        return (requests, seconds, row, settled)
    }

    @Test func realClockUnderATotalOutageTheBudgetKeepsServerCallsWithinTheRatio() async throws {
        let key = UUID().uuidString
        let budget = RetryBudget(identifier: key, ratio: 0.1, minimumPerSecond: 1)
        let (requests, seconds, row, settled) = try await run(budget: budget, key: key)
        // (1 + ratio) × calls, plus the allowance of every window the outage spans: one per
        // second, from the first call to the last retry, plus one window.
        let allowance = budget.minimumPerSecond * (seconds + budget.window / .seconds(1))
        let bound = (1 + budget.ratio) * Double(calls) + allowance
        print(
            "[RetryBudgetHTTP] \(requests) requests at the server for \(calls) calls in \(seconds) s, bound \(bound)"
        )
        #expect(requests >= calls)
        #expect(Double(requests) <= bound, "\(requests) requests, bound \(bound)")
        // The registry counted what the server saw, while none of it had left the window.
        if settled < 9, let row {
            #expect(row.calls + row.retries == requests)
        }
        resetRetryBudget(identifier: key)
    }

    @Test func realClockWithNoAllowanceTheServerSeesAtMostOnePlusRatioTimesTheCalls() async throws {
        // No allowance: the bound is (1 + ratio) × calls, whatever the time the outage takes.
        let key = UUID().uuidString
        let budget = RetryBudget(identifier: key, ratio: 0.1, minimumPerSecond: 0)
        let (requests, _, _, _) = try await run(budget: budget, key: key)
        #expect(requests >= calls)
        #expect(Double(requests) <= (1 + budget.ratio) * Double(calls), "\(requests) requests")
        resetRetryBudget(identifier: key)
    }

    @Test func realClockWithoutABudgetEveryCallRetriesInFull() async throws {
        // The control: without a budget the outage gets `maxAttempts` times the calls.
        let (requests, _, _, _) = try await run(budget: nil, key: UUID().uuidString)
        #expect(requests == calls * maxAttempts)
    }
}
