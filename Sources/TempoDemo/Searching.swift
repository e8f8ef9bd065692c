// The search section of the demo: a debounced search whose older, slower run is still going
// when a newer one starts; without and with latest wins. The back end sleeps (no network).

import Tempo

/// A search view model: each keystroke awaits a debounced, latest-wins (or not) search and
/// shows what it returns.
@MainActor final class DemoSearchModel {
    private let searcher = Debouncer(.milliseconds(150))
    private let latestWins: Bool
    private let start: ContinuousClock.Instant
    private(set) var results: [String] = []

    init(latestWins: Bool, start: ContinuousClock.Instant) {
        self.latestWins = latestWins
        self.start = start
    }

    /// The back end: slow (400 ms) for a short query, fast (50 ms) for a longer one.
    nonisolated static func backend(_ query: String) async throws -> [String] {
        try await Task.sleep(for: query.count < 3 ? .milliseconds(400) : .milliseconds(50))
        return [query + "!"]
    }

    func queryChanged(_ query: String) async {
        say("typed \"\(query)\"", since: start)
        do {
            let found = try await searcher.result(latestWins: latestWins) {
                try await DemoSearchModel.backend(query)
            }
            results = found
            say("search for \"\(query)\" returned \(found): showing \(results)", since: start)
        } catch let discarded as DiscardedCall {
            say("search for \"\(query)\": \(discarded)", since: start)
        } catch {
            say("search for \"\(query)\" failed: \(error)", since: start)
        }
    }
}

@MainActor func searching() async {
    for latestWins in [false, true] {
        print("▶ Debouncer(.milliseconds(150)).result(latestWins: \(latestWins)) — a search model")
        print(
            latestWins
                ? "  The newer search cancels the older one still running: \"sw\" never lands."
                : "  By default a running search is not cancelled: the slow \"sw\" lands last.")
        let start = ContinuousClock.now
        let model = DemoSearchModel(latestWins: latestWins, start: start)
        let sw = Task { await model.queryChanged("sw") }
        try? await Task.sleep(until: start + .milliseconds(250))
        let swift = Task { await model.queryChanged("swift") }
        await sw.value
        await swift.value
        say("the screen shows \(model.results)", since: start)
        print("")
    }
}
