import Synchronization
import TempoTesting
import Testing

@testable import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Drives random schedules of window-limited calls (taken at once, waiting with or without a
// maximum wait, of random weights), cancellations, resets and clock advances through the engine
// (on the manual clock, through the public API) and through `WindowLimitModel`, and requires
// the same events and, after every step, the same snapshot row and live key count (exactly: a
// key leaves the instant its window is empty). The schedules are run from offset zero, from
// the clock's first instant and from a second before its last (where no window reaches past
// the end; that is `WindowLimitClockRangeTests`). The registry's observer must report, in order,
// what the model decided, as for the token bucket (`RateLimitModelCheckTests`).
//
// Run one seed alone: `TEMPO_MODEL_SEED=1234 swift test --filter WindowLimitModelCheck`.

@Suite struct WindowLimitModelCheckTests {
    static let tick = Duration.milliseconds(1)

    static func seeds(_ count: Int) -> [UInt64] {
        if let text = getenv("TEMPO_MODEL_SEED").map({ String(cString: $0) }),
            let seed = UInt64(text)
        {
            return [seed]
        }
        return (0..<UInt64(count)).map { 0x5EED_0013 &+ $0 }
    }

    @Test(arguments: [Duration.zero, .saturatedMin, .saturatedMax.subtracting(.seconds(1))])
    func engineMatchesTheReferenceModel(origin: Duration) async {
        for seed in Self.seeds(40) {
            let failure = await Self.run(seed: seed, steps: 30, origin: origin)
            #expect(failure == nil, "seed \(seed): \(failure ?? "")")
            if failure != nil { break }
        }
    }

    /// Runs one schedule; returns a description of the first difference, or `nil`.
    static func run(seed: UInt64, steps: Int, origin: Duration) async -> String? {
        var random = SplitMix64(seed: seed)
        let permits = Int.random(in: 1...4, using: &random)
        let window = Int.random(in: 1...6, using: &random)
        let margin = Int.random(in: 0...2, using: &random)
        let burst = permits
        let limit = RateLimit.window(permits, per: tick * window, margin: tick * margin)
        var model = WindowLimitModel(permits: permits, span: window + margin)
        let clock = ManualClock(now: .init(offset: origin))
        let registry = TempoRegistry(clock: clock)
        let log = Log<String>()
        var expected: [String] = []
        var tasks: [String: Task<Void, Never>] = [:]
        var now = 0
        var trace: [String] = ["\(limit)"]

        /// The registry's time in ticks from the origin.
        func ticks(_ registry: TempoRegistry) -> Int {
            Int(registry.now.subtracting(origin) / tick)
        }

        let (observer, reported) = rateLimitEventLines(registry, tick: tick, origin: origin)
        var decisions = ModelRateEvents()

        func record(_ events: [WindowLimitModel.Event]) {
            expected += events.map(\.description)
            decisions.record(events, at: now)
        }

        for step in 0..<steps {
            let choice = Int.random(in: 0..<10, using: &random)
            let weight = Int.random(in: 1...burst, using: &random)
            switch choice {
            case 0, 1:
                trace.append("take weight \(weight) at \(now)")
                let engine = registry.withCurrent { take(limit, weight: weight, key: "k") }.map {
                    Int(($0.retryAfter ?? .zero) / tick)
                }
                let reference = model.take(weight, at: now)
                if let reference { decisions.refused(reference, at: now) }
                if engine != reference {
                    return "step \(step): take gave \(String(describing: engine)), "
                        + "model \(String(describing: reference))\n" + trace.joined(separator: "\n")
                }
            case 2, 3, 4:
                let label = "w\(step)"
                let maxWait: Int? =
                    Bool.random(using: &random) ? nil : Int.random(in: 0...6, using: &random)
                trace.append(
                    "wait \(label) weight \(weight) maxWait \(String(describing: maxWait))")
                let estimate = model.waitForNewcomer(weight, at: now)
                let events = model.wait(label, weight: weight, maxWait: maxWait, at: now)
                if events.isEmpty { decisions.queued(label, estimate: estimate, at: now) }
                record(events)
                let queuedBefore = rateWaiters(registry, "k")
                let policy: RateLimitPolicy = maxWait.map { .wait(atMost: tick * $0) } ?? .wait
                tasks[label] = Task {
                    await registry.withCurrent {
                        do {
                            // Logged once the call returns: a window records an operation
                            // at its end (here, the instant it started), after it runs.
                            let at = try await rateLimit(
                                limit, weight: weight, whenLimited: policy, identifier: "k"
                            ) {
                                ticks(registry)
                            }
                            log.append("\(label)@\(at)")
                        } catch is CancellationError {
                            log.append("\(label)!cancelled")
                        } catch {
                            let after = (error as? RateLimitError)?.retryAfter ?? .zero
                            log.append("\(label)!\(Int(after / tick))")
                        }
                    }
                }
                if events.isEmpty {
                    _ = await eventually { rateWaiters(registry, "k") == queuedBefore + 1 }
                }
            case 5:
                guard let victim = model.queue.randomElement(using: &random)?.label else {
                    continue
                }
                trace.append("cancel \(victim)")
                record(model.cancel(victim, at: now))
                tasks[victim]?.cancel()
                await tasks[victim]?.value
            case 6:
                trace.append("reset at \(now)")
                record(model.reset(at: now))
                registry.resetRateLimit(identifier: "k")
            default:
                let steps = Int.random(in: 1...5, using: &random)
                trace.append("advance \(steps)")
                for _ in 0..<steps {
                    now += 1
                    record(model.settle(at: now))
                }
                await clock.advance(by: tick * steps)
            }
            let count = expected.count
            _ = await eventually { log.count >= count }
            if log.all.sorted() != expected.sorted() {
                return "step \(step): events \(log.all.sorted()), model \(expected.sorted())\n"
                    + trace.joined(separator: "\n")
            }
            await observer.waitUntilDelivered()
            if inInstantOrder(reported.all) != inInstantOrder(decisions.lines) {
                return "step \(step): observed \(reported.all), model \(decisions.lines)\n"
                    + trace.joined(separator: "\n")
            }
            let row = rateRow(registry, "k")
            let live = registry.liveKeyCount == 1
            if live != model.isLive(at: now)
                || (row?.tokens ?? burst) != model.tokens(at: now)
                || (row?.waiters ?? 0) != model.queue.count
                || (row.map { Int(($0.next.subtracting(registry.now)) / tick) } ?? 0)
                    != model.nextPermitIn(at: now)
            {
                return "step \(step): row \(String(describing: row)) live \(live), model "
                    + "tokens \(model.tokens(at: now)) waiters \(model.queue.count) next in "
                    + "\(model.nextPermitIn(at: now)) live \(model.isLive(at: now))\n"
                    + trace.joined(separator: "\n")
            }
        }
        for task in tasks.values { task.cancel() }
        for task in tasks.values { await task.value }
        return nil
    }
}
