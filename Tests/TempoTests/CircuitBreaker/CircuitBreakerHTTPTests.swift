// Real-network integration test of `circuitBreaker`: URLSession requests against a local
// server (Tests/Fixtures/breaker_server.py, Python standard library) on 127.0.0.1 that
// answers 500 until it is told to recover, started by `LoopbackServer`. The calls are real;
// the breaker's time is a ManualClock's, so its break ends exactly when the test says.

import Foundation
import Tempo
import TempoTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private let session: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 30
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    return URLSession(configuration: configuration)
}()

/// An answer other than 200.
private struct HTTPStatusError: Error { var status: Int }

/// GET: the body of a 200; any other status throws.
private func get(_ url: URL) async throws -> String {
    let (data, response) = try await session.data(from: url)
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    guard status == 200 else { throw HTTPStatusError(status: status) }
    return String(decoding: data, as: UTF8.self)
}

@Suite(.enabled(if: LoopbackServer.isEnabled("breaker_server.py")), .serialized)
struct CircuitBreakerHTTPTests {
    @Test func theServerSeesNoCallWhileTheBreakerIsOpenAndATrialClosesIt() async throws {
        let server = try await LoopbackServer.start("breaker_server.py")
        defer { server.stop() }
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let changes = Log<String>()
        let policy = CircuitBreakerPolicy(
            failureRatio: 0.5, window: .lastCalls(4), minimumCalls: 4,
            breakDuration: .seconds(30), onStateChange: { changes.append("\($0)>\($1)") })
        let call = server.url("/call?key=api")
        func stats() async throws -> String { try await get(server.url("/stats?key=api")) }

        var answers: [String] = []
        try await registry.withCurrent {
            // The failing phase: four 500s open the breaker.
            for _ in 0..<4 {
                do {
                    _ = try await circuitBreaker(policy, identifier: "api") { try await get(call) }
                } catch let error as HTTPStatusError {
                    answers.append("\(error.status)")
                }
            }
            #expect(try await stats() == "4 4")
            // Open: fifty calls are rejected at once, and none reaches the server.
            var rejected = 0
            for _ in 0..<50 {
                do {
                    _ = try await circuitBreaker(policy, identifier: "api") { try await get(call) }
                } catch CircuitBreakerError.open(let after) {
                    if after == .seconds(30) { rejected += 1 }
                }
            }
            #expect(rejected == 50)
            #expect(try await stats() == "4 4")
            // The server recovers; after the break one trial call reaches it and closes.
            _ = try await get(server.url("/recover?key=api"))
            await clock.advance(by: .seconds(30))
            answers.append(
                try await circuitBreaker(policy, identifier: "api") { try await get(call) })
            #expect(try await stats() == "5 4")
        }
        #expect(answers == ["500", "500", "500", "500", "ok"])
        #expect(changes.all == ["closed>open", "open>halfOpen", "halfOpen>closed"])
        // Closed again, with nothing in its window: a fresh breaker, which leaves.
        #expect(registry.snapshot().entries(.circuitBreaker).isEmpty)
    }
}
