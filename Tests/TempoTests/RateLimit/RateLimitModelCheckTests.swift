import Synchronization
import TempoTesting
import Testing

@testable import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Drives random schedules of rate-limited calls (taken at once, waiting with or without a
// maximum wait), cancellations, resets and clock advances through the engine (on the manual
// clock, through the public API) and through `RateLimitModel`, and requires the same events
// (who was admitted when, who gave up with which retry-after, who was refused with which
// retry-after) and, after every step, the same snapshot row and live key count (an idle key may
// linger, full, for at most one bucket's refill). The registry's observer must report, in order,
// what the model decided: each refusal with its retry-after, each waiter queued with the wait
// expected, and each admitted or given up with how long it waited.
//
// Run one seed alone: `TEMPO_MODEL_SEED=1234 swift test --filter RateLimitModelCheck`.

@Suite struct RateLimitModelCheckTests {
    static let tick = Duration.milliseconds(1)

    static func seeds(_ count: Int) -> [UInt64] {
        if let text = getenv("TEMPO_MODEL_SEED").map({ String(cString: $0) }),
            let seed = UInt64(text)
        {
            return [seed]
        }
        return (0..<UInt64(count)).map { 0x5EED_0013 &+ $0 }
    }

    @Test func engineMatchesTheReferenceModel() async {
        for seed in Self.seeds(40) {
            let failure = await Self.run(seed: seed, steps: 30)
            #expect(failure == nil, "seed \(seed): \(failure ?? "")")
            if failure != nil { break }
        }
    }

    /// Runs one schedule; returns a description of the first difference, or `nil`.
    static func run(seed: UInt64, steps: Int) async -> String? {
        var random = SplitMix64(seed: seed)
        let refill = Int.random(in: 1...4, using: &random)
        let permits = Int.random(in: 1...4, using: &random)
        let burst = Int.random(in: 1...4, using: &random)
        let limit = RateLimit(permits, per: tick * (permits * refill), burst: burst)
        var model = RateLimitModel(refill: refill, burst: burst)
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let log = Log<String>()
        var expected: [String] = []
        var tasks: [String: Task<Void, Never>] = [:]
        var now = 0
        var trace: [String] = ["refill \(refill) ms, \(limit)"]
        let (observer, reported) = rateLimitEventLines(registry, tick: tick, origin: .zero)
        var decisions = ModelRateEvents()

        func record(_ events: [RateLimitModel.Event]) {
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
                let reference = model.take(weight)
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
                let estimate = model.waitForNewcomer(weight)
                let events = model.wait(label, weight: weight, maxWait: maxWait, at: now)
                if events.isEmpty { decisions.queued(label, estimate: estimate, at: now) }
                record(events)
                let queuedBefore = rateWaiters(registry, "k")
                let policy: RateLimitPolicy = maxWait.map { .wait(atMost: tick * $0) } ?? .wait
                tasks[label] = Task {
                    await registry.withCurrent {
                        do {
                            try await rateLimit(
                                limit, weight: weight, whenLimited: policy, identifier: "k"
                            ) {
                                log.append(at(label, registry))
                            }
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
                let ticks = Int.random(in: 1...5, using: &random)
                trace.append("advance \(ticks)")
                for _ in 0..<ticks {
                    now += 1
                    record(model.tick(to: now))
                }
                await clock.advance(by: tick * ticks)
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
            // A key in use whose bucket filled up again leaves the registry at the latest one
            // whole bucket's refill later (its timer does not chase every refill).
            let lingers = !model.isLive && live && row.map { $0.tokens == burst } == true
            if (live != model.isLive && !lingers) || (row?.tokens ?? burst) != model.tokens
                || (row?.waiters ?? 0) != model.queue.count
                || (row.map { Int(($0.next - registry.now) / tick) } ?? 0) != model.nextPermitIn
            {
                return "step \(step): row \(String(describing: row)) live \(live), model "
                    + "tokens \(model.tokens) waiters \(model.queue.count) next in "
                    + "\(model.nextPermitIn) live \(model.isLive)\n" + trace.joined(separator: "\n")
            }
        }
        for task in tasks.values { task.cancel() }
        for task in tasks.values { await task.value }
        return nil
    }
}
