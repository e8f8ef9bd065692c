import Synchronization
import TempoTesting
import Testing

@testable import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Drives random schedules of `retry` calls through one budget (each attempt failing,
// succeeding or throwing `CancellationError`, as the schedule says) and clock advances, through
// the engine (on the manual clock, through the public API) and through a reference model that
// keeps every call and retry with its instant. After every step both must agree on the attempts
// made and on the snapshot row (or its absence); and the whole run must keep the bound
// `retries <= ratio * calls + minimumPerSecond * (span + window)`, `span` being the time from
// the first call to the last retry.
//
// Run one seed alone: `TEMPO_MODEL_SEED=1234 swift test --filter RetryBudgetModelCheck`.

/// The reference: every event kept with its instant, in nanoseconds.
struct RetryBudgetModel {
    let ratio: Double
    let perSecond: Double
    let window: Int64
    var calls: [Int64] = []
    var retries: [Int64] = []

    /// The slice an instant falls in.
    func slice(_ t: Int64) -> Int64 { t / (window / 10) }
    /// Whether an event at `t` still counts at `now`: its slice is one of the last ten.
    func counts(_ t: Int64, at now: Int64) -> Bool { slice(t) > slice(now) - 10 }

    func live(at now: Int64) -> (calls: Int, retries: Int) {
        (calls.filter { counts($0, at: now) }.count, retries.filter { counts($0, at: now) }.count)
    }

    /// The balance in millionths, as the documentation states it.
    func balance(at now: Int64) -> Int64 {
        let (c, r) = live(at: now)
        let deposit = Int64((ratio * 1e6).rounded())
        let reserve = Int64((perSecond * Double(window) / 1_000).rounded())
        return Int64(c) * deposit + reserve - Int64(r) * 1_000_000
    }

    /// One call whose attempts end as `outcomes` say (the last repeats); returns the attempts.
    mutating func call(at now: Int64, maxAttempts: Int, outcomes: [Outcome]) -> Int {
        calls.append(now)
        var attempt = 1
        while true {
            let outcome = outcomes[min(attempt, outcomes.count) - 1]
            guard outcome == .fail, attempt < maxAttempts else { return attempt }
            guard balance(at: now) >= 1_000_000 else { return attempt }
            retries.append(now)
            attempt += 1
        }
    }

    enum Outcome: Equatable { case fail, succeed, cancel }
}

@Suite struct RetryBudgetModelCheckTests {
    static func seeds(_ count: Int) -> [UInt64] {
        if let text = getenv("TEMPO_MODEL_SEED").map({ String(cString: $0) }),
            let seed = UInt64(text)
        {
            return [seed]
        }
        return (0..<UInt64(count)).map { 0x5EED_0B06 &+ $0 }
    }

    @Test func engineMatchesTheReferenceModelAndKeepsTheBound() async {
        for seed in Self.seeds(60) {
            let failure = await Self.run(seed: seed, steps: 60)
            #expect(failure == nil, "seed \(seed): \(failure ?? "")")
            if failure != nil { break }
        }
    }

    /// Runs one schedule; returns a description of the first difference, or `nil`.
    static func run(seed: UInt64, steps: Int) async -> String? {
        var random = SplitMix64(seed: seed)
        let ratio = [0, 0.05, 0.1, 0.25, 0.5, 1, 1.5][Int.random(in: 0..<7, using: &random)]
        let perSecond = [0, 0, 100, 350.5][Int.random(in: 0..<4, using: &random)]
        let windowMS = Int64.random(in: 1...40, using: &random)
        let budget = RetryBudget(
            identifier: "model", ratio: ratio, minimumPerSecond: perSecond,
            window: .milliseconds(windowMS))
        var model = RetryBudgetModel(
            ratio: ratio, perSecond: perSecond, window: windowMS * 1_000_000)
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        var now: Int64 = 0
        var trace = ["ratio \(ratio), \(perSecond)/s, window \(windowMS) ms"]
        var firstCall: Int64?
        var lastRetry: Int64?
        for step in 0..<steps {
            if Int.random(in: 0..<3, using: &random) == 0 {
                let by = Int64.random(in: 0...(model.window * 3 / 2), using: &random)
                now += by
                trace.append("advance \(by) ns")
                await registry.withCurrent { await clock.advance(by: .nanoseconds(by)) }
            } else {
                let maxAttempts = Int.random(in: 1...5, using: &random)
                let outcomes = (0..<maxAttempts).map { _ in
                    [RetryBudgetModel.Outcome.fail, .fail, .fail, .succeed, .cancel][
                        Int.random(in: 0..<5, using: &random)]
                }
                let expected = model.call(at: now, maxAttempts: maxAttempts, outcomes: outcomes)
                let made = await Self.engineCall(
                    budget, registry: registry, maxAttempts: maxAttempts, outcomes: outcomes)
                trace.append("call \(maxAttempts) \(outcomes): \(made) attempts")
                firstCall = firstCall ?? now
                if expected > 1 { lastRetry = now }
                if made != expected {
                    return "step \(step): \(made) attempts, model \(expected)\n"
                        + trace.joined(separator: "\n")
                }
            }
            let (calls, retries) = model.live(at: now)
            let row = registry.budgetRow("model")
            let want =
                calls + retries == 0
                ? nil : (Double(model.balance(at: now)) / 1e6, calls, retries)
            if row?.balance != want?.0 || row?.calls != want?.1 || row?.retries != want?.2 {
                return
                    "step \(step): row \(String(describing: row)), model \(String(describing: want))\n"
                    + trace.joined(separator: "\n")
            }
        }
        // The bound over the whole run.
        let span = Double((lastRetry ?? 0) - (firstCall ?? 0)) / 1e9
        let bound =
            ratio * Double(model.calls.count) + perSecond * (span + Double(model.window) / 1e9)
        if Double(model.retries.count) > bound + 1e-9 {
            return "\(model.retries.count) retries > bound \(bound)\n"
                + trace.joined(separator: "\n")
        }
        return nil
    }

    /// One `retry` call through the engine; returns the attempts it made.
    static func engineCall(
        _ budget: RetryBudget, registry: TempoRegistry, maxAttempts: Int,
        outcomes: [RetryBudgetModel.Outcome]
    ) async -> Int {
        let made = Lock(0)
        await registry.withCurrent {
            _ = try? await retry(maxAttempts, every: .zero, budget: budget) {
                let attempt = made.withLock {
                    $0 += 1
                    return $0
                }
                switch outcomes[min(attempt, outcomes.count) - 1] {
                case .fail: throw Boom(attempt: attempt)
                case .succeed: return
                case .cancel: throw CancellationError()
                }
            }
        }
        return made.withLock { $0 }
    }
}
