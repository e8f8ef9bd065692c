import Synchronization
import TempoTesting
import Testing

@testable import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Drives random schedules of breaker calls (ending at once in success, failure, cancellation,
// a rate limit's refusal or an error the policy marks ignored, or held at a gate and ended
// later), under a failure classifier that counts every error or one that calls refusals
// successes, clock advances and manual opens and
// closes through the engine (on the manual clock, through the public API) and through
// `BreakerModel`, and requires the same answer for every call, the same state changes, and
// after every step the same snapshot row: none exactly when the model says the breaker leaves
// (closed, no call of its state running, no failure in its window), and a breaker that left
// and comes back matches a new model (its successes forgotten), its earlier calls counting for
// nothing.
//
// Run one seed alone: `TEMPO_MODEL_SEED=1234 swift test --filter CircuitBreakerModelCheck`.

/// The breaker as the documentation states it, kept as plainly as possible: every outcome of
/// the closed state in one list, filtered by the window at each reading.
struct BreakerModel {
    var count: Int?
    var span: Int?
    var ratio: Double
    var minimumCalls: Int
    var base: Int
    var maximum: Int?
    var trials: Int

    var state = "closed"
    var outcomes: [(at: Int, failed: Bool)] = []
    var reopensAt: Int?
    var lastBreak: Int?
    var running = 0
    var succeeded = 0
    var epoch = 0
    /// Calls admitted while closed, in this epoch, not ended yet.
    var closedRunning = 0
    /// Which breaker of the key this is: one made after the last one left is another.
    var generation = 0
    var changes: [String] = []
    /// A breaker opened by hand before any call knows no callback yet.
    var callbackKnown = false
    /// What the registry's observer is told: every change (callback or not) and every
    /// rejection, with its wait.
    var events: [String] = []

    func window(at now: Int) -> [(at: Int, failed: Bool)] {
        if let count { return Array(outcomes.suffix(count)) }
        return outcomes.filter { $0.at > now - span! }
    }

    mutating func move(_ new: String) {
        if new != state, callbackKnown { changes.append("\(state)>\(new)") }
        if new != state { events.append("\(state)>\(new)") }
        state = new
        epoch += 1
        outcomes = []
        running = 0
        closedRunning = 0
        succeeded = 0
    }

    /// Leaves the registry at `now`: closed, no call of its epoch running, no failure in its
    /// window (successes alone never open a breaker: it forgets them).
    func isFresh(at now: Int) -> Bool {
        state == "closed" && closedRunning == 0 && !window(at: now).contains { $0.failed }
    }

    /// A fresh breaker leaves: the next call, or control, finds a new one, with an empty
    /// window, which knows no callback and counts no call admitted before.
    mutating func leaveIfFresh(at now: Int) {
        guard isFresh(at: now) else { return }
        let kept = (changes, generation, events)
        self = BreakerModel(
            count: count, span: span, ratio: ratio, minimumCalls: minimumCalls, base: base,
            maximum: maximum, trials: trials)
        changes = kept.0
        generation = kept.1 + 1
        events = kept.2
    }

    mutating func open(at now: Int, for length: Int?) {
        reopensAt = length.map { now + $0 }
        if let length { lastBreak = length }
        move("open")
    }

    mutating func close() {
        lastBreak = nil
        reopensAt = nil
        move("closed")
    }

    /// `.success(epoch)`, or the rejection as the engine's test describes it (and as its
    /// event is described).
    mutating func admit(at now: Int) -> Result<Int, BreakerModelRejection> {
        let admission = decide(at: now)
        if case .failure(let rejection) = admission { events.append(rejection.text) }
        return admission
    }

    private mutating func decide(at now: Int) -> Result<Int, BreakerModelRejection> {
        callbackKnown = true
        if state == "open" {
            guard let reopensAt else { return .failure(.init(text: "open(?)")) }
            if now < reopensAt { return .failure(.init(text: "open(\(reopensAt - now)ms)")) }
            move("halfOpen")
        }
        if state == "halfOpen" {
            if running + succeeded >= trials { return .failure(.init(text: "open(?)")) }
            running += 1
        } else {
            closedRunning += 1
        }
        return .success(epoch)
    }

    mutating func finish(_ outcome: BreakerStep, epoch: Int, generation: Int, at now: Int) {
        guard epoch == self.epoch, generation == self.generation else { return }
        if state == "closed" {
            closedRunning -= 1
            guard counts(outcome) else { return }
            outcomes.append((now, outcome == .fail))
            let window = window(at: now)
            let failures = window.filter(\.failed).count
            // A count window never holds more than its count: the minimum is at most that.
            if window.count >= min(minimumCalls, count ?? .max),
                Double(failures) / Double(window.count) >= ratio
            {
                open(at: now, for: base)
            }
        } else if state == "halfOpen" {
            running -= 1
            switch outcome {
            case .cancel, .refuse, .ignore: break
            case .fail:
                let next = lastBreak.flatMap { last in maximum.map { min(last * 2, $0) } } ?? base
                open(at: now, for: next)
            case .succeed:
                succeeded += 1
                if succeeded == trials { close() }
            }
        }
    }

    /// Whether an outcome counts: cancellation, Tempo's refusals and the errors the policy
    /// marks are ignored, whatever the failure classifier says.
    func counts(_ outcome: BreakerStep) -> Bool { outcome == .succeed || outcome == .fail }

    func row(at now: Int) -> String {
        switch state {
        case "closed":
            let window = window(at: now)
            return "closed \(window.filter(\.failed).count)/\(window.count) nil"
        case "open":
            if let reopensAt, reopensAt <= now { return "halfOpen 0/0 nil" }
            return "open 0/0 \(reopensAt.map(String.init) ?? "nil")"
        default:
            return "halfOpen 0/\(running + succeeded) nil"
        }
    }
}

struct BreakerModelRejection: Error { var text: String }

@Suite struct CircuitBreakerModelCheckTests {
    static let tick = Duration.milliseconds(1)

    static func seeds(_ count: Int) -> [UInt64] {
        if let text = getenv("TEMPO_MODEL_SEED").map({ String(cString: $0) }),
            let seed = UInt64(text)
        {
            return [seed]
        }
        return (0..<UInt64(count)).map { 0xB4EA_0014 &+ $0 }
    }

    @Test func engineMatchesTheReferenceModel() async {
        for seed in Self.seeds(60) {
            let failure = await Self.run(seed: seed, steps: 40)
            #expect(failure == nil, "seed \(seed): \(failure ?? "")")
            if failure != nil { break }
        }
    }

    static func row(_ registry: TempoRegistry) -> String {
        guard let row = breakerRow(registry, "k") else { return "none" }
        let reopens = row.reopensAt.map { String(Int($0 / tick)) } ?? "nil"
        return "\(row.state.rawValue) \(row.failures)/\(row.calls) \(reopens)"
    }

    /// Runs one schedule; returns a description of the first difference, or `nil`.
    static func run(seed: UInt64, steps: Int) async -> String? {
        var random = SplitMix64(seed: seed)
        let byCount = Bool.random(using: &random)
        let size = Int.random(in: 1...5, using: &random)
        let ratios = [0.25, 0.5, 2.0 / 3.0, 1]
        var model = BreakerModel(
            count: byCount ? size : nil, span: byCount ? nil : size * 2,
            ratio: ratios[Int.random(in: 0..<4, using: &random)],
            minimumCalls: Int.random(in: 1...4, using: &random),
            base: Int.random(in: 1...6, using: &random),
            maximum: Bool.random(using: &random) ? nil : Int.random(in: 4...20, using: &random),
            trials: Int.random(in: 1...3, using: &random))
        let changes = Log<String>()
        // The classifier that made refusals successes, or the default that counts them.
        let refusalsSucceed = Bool.random(using: &random)
        let policy = CircuitBreakerPolicy(
            failureRatio: model.ratio,
            window: byCount ? .lastCalls(size) : .lastDuration(tick * (size * 2)),
            minimumCalls: model.minimumCalls, breakDuration: tick * model.base,
            maximumBreakDuration: model.maximum.map { tick * $0 }, trialCalls: model.trials,
            isFailure: { !(refusalsSucceed && $0 is RateLimitError) },
            isIgnored: { $0 is BreakerIgnored }, onStateChange: breakerChangeLog(changes))
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let events = Log<String>()
        let observer = registry.observe { event in
            switch event.decision {
            case .breakerChanged(let from, let to): events.append("\(from)>\(to)")
            case .breakerRejected(let after?): events.append("open(\(Int(after / tick))ms)")
            case .breakerRejected(nil): events.append("open(?)")
            default: events.append("unexpected \(event)")
            }
        }
        var now = 0
        var held: [(gate: BreakerGate, task: Task<String, Never>, epoch: Int, generation: Int)] = []
        var trace: [String] = ["\(model) refusalsSucceed: \(refusalsSucceed)"]
        let endings: [BreakerStep] = [.succeed, .fail, .cancel, .refuse, .ignore]
        let names = ["ok", "boom", "cancelled", "refused", "ignored"]

        func fail(_ text: String) -> String { text + "\n" + trace.joined(separator: "\n") }

        for step in 0..<steps {
            let choice = Int.random(in: 0..<12, using: &random)
            let outcome = endings[Int.random(in: 0..<endings.count, using: &random)]
            switch choice {
            case 0...3:
                trace.append("call \(outcome) at \(now)")
                let engine = await registry.withCurrent {
                    await breakerCall(policy, key: "k", outcome)
                }
                var expected: String
                switch model.admit(at: now) {
                case .success(let epoch):
                    model.finish(outcome, epoch: epoch, generation: model.generation, at: now)
                    expected = names[endings.firstIndex(of: outcome)!]
                case .failure(let rejection):
                    expected = rejection.text
                }
                if engine != expected { return fail("step \(step): \(engine), model \(expected)") }
            case 4, 5:
                trace.append("hold at \(now)")
                let call = await gatedBreakerCall(policy, key: "k", registry: registry)
                switch model.admit(at: now) {
                case .success(let epoch):
                    held.append((call.gate, call.task, epoch, model.generation))
                case .failure(let rejection):
                    let engine = await call.task.value
                    if engine != rejection.text {
                        return fail("step \(step): held \(engine), model \(rejection.text)")
                    }
                }
            case 6, 7:
                guard !held.isEmpty else { continue }
                let index = Int.random(in: 0..<held.count, using: &random)
                let call = held.remove(at: index)
                trace.append("end held #\(index) \(outcome) at \(now)")
                call.gate.open(outcome)
                _ = await call.task.value
                model.finish(outcome, epoch: call.epoch, generation: call.generation, at: now)
            case 8, 9:
                let step = Int.random(in: 0...5, using: &random)
                trace.append("advance \(step)")
                await clock.advance(by: tick * step)
                now += step
            case 10:
                trace.append("open by hand at \(now)")
                registry.openCircuitBreaker(identifier: "k")
                model.open(at: now, for: nil)
            default:
                trace.append("close by hand at \(now)")
                registry.closeCircuitBreaker(identifier: "k")
                model.close()
            }
            model.leaveIfFresh(at: now)
            let engineRow = row(registry)
            let modelRow = model.isFresh(at: now) ? "none" : model.row(at: now)
            if engineRow != modelRow {
                return fail("step \(step): row \(engineRow), model \(modelRow)")
            }
            if changes.all != model.changes {
                return fail("step \(step): changes \(changes.all), model \(model.changes)")
            }
            await observer.waitUntilDelivered()
            if events.all != model.events {
                return fail("step \(step): events \(events.all), model \(model.events)")
            }
        }
        for call in held {
            call.gate.open(.succeed)
            _ = await call.task.value
        }
        return nil
    }
}
