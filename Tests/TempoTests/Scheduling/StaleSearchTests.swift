import Tempo
import TempoTesting
import Testing

/// The stale search: a slow search for "sw" is running when a fast search for "swift" starts.
/// By default a running operation is never cancelled, so the slow one lands last and the view
/// model shows "sw!"; with latest wins the newer run cancels it and "swift!" stays.
@MainActor final class StaleSearchModel {
    enum Form: CaseIterable, Sendable {
        case debounceByIdentifier, debounceByCallSite, debouncer
        case throttleByIdentifier, throttleByCallSite, throttler
    }

    let form: Form
    let latestWins: Bool
    let clock: ManualClock
    private let debouncer = Debouncer(.milliseconds(300))
    private let throttler = Throttler(.milliseconds(300))
    /// Every list of results published, in order.
    private(set) var published: [[String]] = []
    /// How each query's call ended.
    private(set) var ends: [String: String] = [:]

    init(_ form: Form, latestWins: Bool, clock: ManualClock) {
        self.form = form
        self.latestWins = latestWins
        self.clock = clock
    }

    var results: [String] { published.last ?? [] }

    func queryChanged(_ query: String) async {
        do {
            published.append(try await search(query))
            ends[query] = "value"
        } catch {
            ends[query] = "\(error)"
        }
    }

    /// The back end: a short query is slow (500 ms), a longer one fast (50 ms).
    nonisolated func backend(_ query: String) async throws -> [String] {
        try await clock.sleep(for: query.count < 3 ? .milliseconds(500) : .milliseconds(50))
        return [query + "!"]
    }

    private func search(_ query: String) async throws -> [String] {
        let wins = latestWins
        switch form {
        case .debounceByIdentifier:
            return try await debounceResult(
                .milliseconds(300), identifier: "search", latestWins: wins
            ) { try await self.backend(query) }
        case .debounceByCallSite:
            return try await debounceResult(.milliseconds(300), latestWins: wins) {
                try await self.backend(query)
            }
        case .debouncer:
            return try await debouncer.result(latestWins: wins) { try await self.backend(query) }
        case .throttleByIdentifier:
            return try await throttleResult(
                .milliseconds(300), identifier: "search", latestWins: wins
            ) { try await self.backend(query) }
        case .throttleByCallSite:
            return try await throttleResult(.milliseconds(300), latestWins: wins) {
                try await self.backend(query)
            }
        case .throttler:
            return try await throttler.result(latestWins: wins) { try await self.backend(query) }
        }
    }
}

@MainActor @Suite(.timeLimit(.minutes(5))) struct StaleSearchTests {
    /// Types "sw", waits 400 ms (its search is running by then), types "swift", and lets
    /// everything finish.
    private func typeSwift(_ model: StaleSearchModel, _ clock: ManualClock) async {
        let first = await started { await model.queryChanged("sw") }
        await clock.advance(by: .milliseconds(400))
        let second = await started { await model.queryChanged("swift") }
        await clock.advance(by: .seconds(2))
        _ = try? await first.value
        _ = try? await second.value
    }

    @Test(arguments: StaleSearchModel.Form.allCases)
    func byDefaultTheSlowOlderSearchLandsLast(_ form: StaleSearchModel.Form) async {
        await onMainManualClock { clock, _ in
            let model = StaleSearchModel(form, latestWins: false, clock: clock)
            await typeSwift(model, clock)
            // The documented default: a running operation is never cancelled.
            #expect(model.published == [["swift!"], ["sw!"]])
            #expect(model.results == ["sw!"])
        }
    }

    @Test(arguments: StaleSearchModel.Form.allCases)
    func withLatestWinsTheNewerSearchCancelsTheOlder(_ form: StaleSearchModel.Form) async {
        await onMainManualClock { clock, _ in
            let model = StaleSearchModel(form, latestWins: true, clock: clock)
            await typeSwift(model, clock)
            #expect(model.published == [["swift!"]])
            #expect(model.results == ["swift!"])
            #expect(model.ends == ["sw": "\(DiscardedCall.overtaken)", "swift": "value"])
        }
    }

    @Test func theOvertakenCallerIsToldWhenTheNewerRunStartsNotWhenItsOwnEnds() async {
        await onMainManualClock { clock, _ in
            let model = StaleSearchModel(.debouncer, latestWins: true, clock: clock)
            let first = await started { await model.queryChanged("sw") }
            await clock.advance(by: .milliseconds(400))
            _ = await started { await model.queryChanged("swift") }
            // At 700 ms the newer run starts: the older caller is settled right then.
            await clock.advance(by: .milliseconds(300))
            _ = try? await first.value
            #expect(model.ends["sw"] == "\(DiscardedCall.overtaken)")
            #expect(model.published.isEmpty)
            await clock.advance(by: .milliseconds(50))
            #expect(model.results == ["swift!"])
        }
    }
}

/// On `.ownedActor` an asynchronous operation holds the actor's turn until it returns: a newer
/// latest-wins run overtakes the older one when it is released, not once it has the turn
/// (which the older run would only give up when done).
@MainActor @Suite(.timeLimit(.minutes(5))) struct StaleSearchOnOwnedActorTests {
    @Test(arguments: [false, true])
    func theNewerRunOvertakesTheOlderOneHoldingTheActor(_ latestWins: Bool) async {
        await onMainManualClock { clock, _ in
            let debouncer = Debouncer(.milliseconds(300), by: .ownedActor)
            let published = Log<String>()
            func type(_ query: String) async -> Task<Void, any Error> {
                await started {
                    do {
                        let found = try await debouncer.result(latestWins: latestWins) {
                            TempoActor.shared.assertIsolated()
                            try await clock.sleep(for: .milliseconds(query.count < 3 ? 500 : 50))
                            return "\(query)!@\(Int(clock.now.offset / .milliseconds(1)))"
                        }
                        published.append(found)
                    } catch {
                        published.append("\(error)")
                    }
                }
            }
            let first = await type("sw")
            await clock.advance(by: .milliseconds(400))
            let second = await type("swift")
            await clock.advance(by: .seconds(2))
            _ = try? await first.value
            _ = try? await second.value
            // Without latest wins the newer run waits for the older one's turn: 800 + 50 ms.
            #expect(
                published.all
                    == (latestWins
                        ? ["\(DiscardedCall.overtaken)", "swift!@750"] : ["sw!@800", "swift!@850"]))
        }
    }
}
