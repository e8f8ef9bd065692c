// The worked example of Docs/Tempo.docc/TestingWithManualClock.md, compiled and run: a search
// view model whose debounced query is tested without sleeping. Keep the two in step.
import Tempo
import TempoTesting
import Testing

// MARK: - The app's code

protocol SearchClient: Sendable {
    func search(_ query: String) async throws -> [String]
}

@MainActor
final class SearchScreenModel {
    private(set) var results: [String] = []
    private(set) var failure: String?
    private let client: any SearchClient

    init(client: any SearchClient) {
        self.client = client
    }

    /// Called on every keystroke: searches once the user stops typing for 300 ms.
    func queryChanged(_ query: String) {
        debounce(.milliseconds(300), identifier: "search", onError: reportFailure) {
            [client, weak self] in
            let found = try await client.search(query)
            await self?.show(found)
        }
    }

    /// Return pressed: search now for what is typed, instead of 300 ms later.
    func submit() {
        flushDebounce(identifier: "search")
    }

    private func show(_ found: [String]) {
        results = found
        failure = nil
    }

    private func reportFailure(_ error: any Error) {
        failure = "\(error)"
    }
}

// MARK: - The tests

/// A search client that answers at once and remembers what it was asked.
actor FakeSearchClient: SearchClient {
    private(set) var queries: [String] = []

    func search(_ query: String) async throws -> [String] {
        queries.append(query)
        return ["\(query) result"]
    }
}

@MainActor
@Suite struct SearchScreenModelTests {
    let clock = ManualClock()
    let client = FakeSearchClient()

    @Test func searchesOnPause() async {
        let model = SearchScreenModel(client: client)
        let registry = TempoRegistry(clock: clock)
        let typed = ["s", "sw", "swi", "swif", "swift"]
        await registry.withCurrent {
            for query in typed {
                model.queryChanged(query)
                // Next key: 100 ms later
                await clock.advance(by: .milliseconds(100))
            }
            // 100 ms after the last key
            #expect(await client.queries.isEmpty)

            // 300 ms after: one search
            await clock.advance(by: .milliseconds(200))
            #expect(await client.queries == ["swift"])
            #expect(model.results == ["swift result"])
            #expect(clock.sleeperCount == 0)  // nothing left waiting
        }
    }

    @Test func submitSearchesAtOnce() async {
        let model = SearchScreenModel(client: client)
        let registry = TempoRegistry(clock: clock)
        await registry.withCurrent {
            model.queryChanged("swift")
            model.submit()
            await clock.advance(by: .zero)  // let the flushed search finish; no time passes
            #expect(await client.queries == ["swift"])
            #expect(model.results == ["swift result"])

            await clock.advance(by: .seconds(1))  // and it does not run a second time
            #expect(await client.queries == ["swift"])
        }
        #expect(registry.liveKeyCount == 0)
    }
}
