import Tempo
import TempoTesting
import Testing

// The view model and the test of the "Building a search view model" article, as they appear
// there (the documentation build only compiles them; here they run), the type renamed:
// `DocsExampleTests` has a `SearchViewModel` of its own.

@MainActor final class ArticleSearchViewModel {
    private(set) var results: [String] = []
    private(set) var failure: String?

    private let searcher = Debouncer(.milliseconds(300))
    private let search: @Sendable (String) async throws -> [String]

    init(search: @escaping @Sendable (String) async throws -> [String]) {
        self.search = search
    }

    func queryChanged(_ query: String) async {
        do {
            results = try await searcher.result(latestWins: true) { [search] in
                try await search(query)
            }
            failure = nil
        } catch is DiscardedCall {
            // A newer query replaced this one, or overtook its search: its own call publishes.
        } catch is CancellationError {
            // The view went away.
        } catch {
            failure = "\(error)"
        }
    }
}

/// A keystroke, as the article's test makes one: `ManualClock.start` returns once the call
/// has been applied.
@MainActor func typed(
    _ query: String, into model: ArticleSearchViewModel, on clock: ManualClock
) async -> ManualClock.Started<Void> {
    await clock.start { await model.queryChanged(query) }
}

@MainActor @Suite(.timeLimit(.minutes(5))) struct SearchViewModelArticleTests {
    @Test func aSlowOlderSearchNeverOverwritesANewerOne() async throws {
        let clock = ManualClock()
        try await TempoRegistry(clock: clock).withCurrent {
            let model = ArticleSearchViewModel { query in
                try await clock.sleep(for: query == "sw" ? .milliseconds(500) : .milliseconds(50))
                return [query + "!"]
            }
            let sw = await typed("sw", into: model, on: clock)
            await clock.advance(by: .milliseconds(400))  // "sw" has been searching since 300 ms
            let swift = await typed("swift", into: model, on: clock)
            await clock.advance(by: .seconds(1))
            try await sw.value()
            try await swift.value()
            #expect(model.results == ["swift!"])
        }
    }

    /// What the article says of each `advance`: a caller on the main actor has published what
    /// its call returned before the advance returns to a main-actor test.
    @Test func eachAdvanceReturnsAfterTheMainActorCallerPublished() async {
        let clock = ManualClock()
        await TempoRegistry(clock: clock).withCurrent {
            let model = ArticleSearchViewModel { query in
                try await clock.sleep(for: .milliseconds(50))
                return [query + "!"]
            }
            _ = await typed("swift", into: model, on: clock)
            await clock.advance(by: .milliseconds(300))  // the search starts
            #expect(model.results.isEmpty)
            await clock.advance(by: .milliseconds(50))  // and returns
            #expect(model.results == ["swift!"])
        }
    }

    @Test func aFailedSearchIsReportedAndAReplacedOneIsNot() async throws {
        let clock = ManualClock()
        try await TempoRegistry(clock: clock).withCurrent {
            let model = ArticleSearchViewModel { query in
                struct Offline: Error {}
                if query == "swift" { throw Offline() }
                return [query]
            }
            let first = await typed("s", into: model, on: clock)
            let second = await typed("swift", into: model, on: clock)
            try await first.value()  // replaced: settled at once, no failure
            #expect(model.failure == nil)
            await clock.advance(by: .milliseconds(300))
            try await second.value()
            #expect(model.failure == "Offline()")
            #expect(model.results.isEmpty)
        }
    }
}
