import Tempo
import TempoTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Drives random schedules of hedged calls (attempt counts, delays, each attempt's duration and
// outcome, and sometimes a caller cancellation) through `hedge` on the manual clock and through
// `HedgeModel`, and requires the same attempt events at the same instants (starts, successes,
// failures, cancellations), the same outcome (the winner, or every error in start order, or
// cancellation), every attempt ended before the call returned, and nothing left behind. The
// registry's observer must report the model's decisions: each attempt after the first started,
// the winner, or every attempt failed, at their instants.
//
// Run one seed alone: `TEMPO_MODEL_SEED=1234 swift test --filter HedgeModelCheck`.

@Suite struct HedgeModelCheckTests {
    static func seeds(_ count: Int) -> [UInt64] {
        if let text = getenv("TEMPO_MODEL_SEED").map({ String(cString: $0) }),
            let seed = UInt64(text)
        {
            return [seed]
        }
        return (0..<UInt64(count)).map { 0x5EED_0014 &+ $0 }
    }

    @Test func hedgeMatchesTheReferenceModel() async {
        var checked = 0
        for seed in Self.seeds(300) {
            guard let failure = await Self.run(seed: seed) else {
                checked += 1
                continue
            }
            Issue.record("seed \(seed): \(failure)")
            break
        }
        #expect(checked == Self.seeds(300).count)
    }

    /// A schedule with no two things at one instant, drawn from `random`.
    static func schedule(_ random: inout SplitMix64) -> HedgeModel {
        while true {
            let maxAttempts = Int.random(in: 1...5, using: &random)
            let model = HedgeModel(
                maxAttempts: maxAttempts,
                delay: [0, 10, 25, 50, 80].randomElement(using: &random)!,
                scripts: (0..<maxAttempts).map { _ in
                    (Int.random(in: 1...200, using: &random), Bool.random(using: &random))
                },
                cancelAt: Int.random(in: 0..<4, using: &random) == 0
                    ? Int.random(in: 1...300, using: &random) : nil)
            if model.run() != nil { return model }
        }
    }

    /// Runs one schedule; returns a description of the first difference, or `nil`.
    static func run(seed: UInt64) async -> String? {
        var random = SplitMix64(seed: seed)
        let model = schedule(&random)
        let (expected, outcome, end) = model.run()!
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let log = Log<AttemptEvent>()
        let scripts = model.scripts.map {
            AttemptScript(duration: .milliseconds($0.duration), succeeds: $0.succeeds)
        }
        let operation = scriptedAttempts(clock, log, scripts)
        let reported = Log<String>()
        let observer = registry.observe { event in
            switch event.decision {
            case .hedgeStarted(let attempt): reported.append("started \(attempt) @\(event.at)")
            case .hedgeWon(let attempt): reported.append("won \(attempt) @\(event.at)")
            case .hedgeFailed(let attempts): reported.append("failed \(attempts) @\(event.at)")
            default: reported.append("unexpected \(event)")
            }
        }
        let eventsWhenReturned = Log<Int>()
        let call = Task {
            defer { eventsWhenReturned.append(log.count) }
            return try await registry.withCurrent {
                try await hedge(
                    maxAttempts: model.maxAttempts, after: .milliseconds(model.delay),
                    operation: operation)
            }
        }
        // The attempts started at once, asleep, and the hedge timer if one is left.
        let atOnce = model.delay > 0 ? 1 : model.maxAttempts
        await clock.waitForSleepers(atOnce + (atOnce < model.maxAttempts ? 1 : 0))
        if outcome == .cancelled {
            await clock.advance(to: ManualClock.Instant(offset: .milliseconds(end)))
            call.cancel()
        } else {
            await clock.advance(to: ManualClock.Instant(offset: .seconds(3)))
        }
        let actual: HedgeModel.Outcome
        do {
            actual = .value(try await call.value)
        } catch let error as HedgingError {
            actual = .allFailed(error.errors.map { ($0 as? Boom)?.attempt ?? -1 })
        } catch {
            actual = error is CancellationError ? .cancelled : .allFailed([-2])
        }
        let events = log.all
        let context = "\(model)\n  expected \(expected)\n  got      \(events)"
        guard actual == outcome else { return "outcome \(actual), expected \(outcome); \(context)" }
        // Attempts cancelled at one instant may log in either order.
        guard events.sorted(by: Self.order) == expected.sorted(by: Self.order) else {
            return "events differ; \(context)"
        }
        // What the observer must be told, from the model's attempts and outcome.
        var decisions: [String] = []
        for event in expected {
            switch event {
            case .started(let attempt, let at) where attempt > 1:
                decisions.append("started \(attempt) @\(at)")
            case .succeeded(let attempt, let at):
                if case .value(attempt) = outcome { decisions.append("won \(attempt) @\(at)") }
            default:
                break
            }
        }
        if case .allFailed(let errors) = outcome {
            let last = expected.compactMap { event -> Duration? in
                if case .failed(_, let at) = event { return at }
                return nil
            }.max()!
            decisions.append("failed \(errors.count) @\(last)")
        }
        await observer.waitUntilDelivered()
        guard reported.all.sorted() == decisions.sorted() else {
            return "observed \(reported.all), model \(decisions); \(context)"
        }
        guard eventsWhenReturned.all == [events.count] else {
            return "an attempt ended after the call returned; \(context)"
        }
        guard clock.sleeperCount == 0, registry.snapshot().isEmpty else {
            return "left behind: \(clock.sleeperCount) sleepers, \(registry.snapshot())"
        }
        return nil
    }

    static func order(_ a: AttemptEvent, _ b: AttemptEvent) -> Bool {
        (instant(a), a.description) < (instant(b), b.description)
    }

    static func instant(_ event: AttemptEvent) -> Duration {
        switch event {
        case .started(_, let at), .succeeded(_, let at), .failed(_, let at),
            .cancelled(_, let at):
            at
        }
    }
}
