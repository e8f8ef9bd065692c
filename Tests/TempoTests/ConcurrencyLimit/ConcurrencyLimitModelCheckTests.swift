import TempoTesting
import Testing

@testable import Tempo

// Drives random schedules of calls (with random durations and queue timeouts), clock advances,
// cancels and resets through `concurrencyLimit` on the manual clock, and through
// `ConcurrencyLimitModel`, and requires the same starts and ends at the same instants, the same
// outcome for every call, and after every step the same running and waiting counts.
//
// Operations last whole seconds and calls are made on whole seconds; queue timeouts end on half
// seconds, so no deadline meets the end of an operation at one instant (the contract does not
// order those two). The registry's observer must report what the model decided: each call
// queued (with the counts after it), refused, timed out or admitted from the queue (with its
// wait), at its instant.

@Suite struct ConcurrencyLimitModelCheckTests {
    enum Action {
        case call(Int)
        case advance
        case cancel(Int)
        case reset
    }

    struct Schedule {
        var limit: Int
        var queueLimit: Int
        var calls: [ConcurrencyLimitModel.Call] = []
        var actions: [Action] = []

        init(seed: UInt64) {
            var random = SplitMix64(seed: seed)
            limit = Int.random(in: 1...3, using: &random)
            queueLimit = Bool.random(using: &random) ? .max : Int.random(in: 0...4, using: &random)
            for _ in 0..<Int.random(in: 8...30, using: &random) {
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<50:
                    let timeout: Int? =
                        switch Int.random(in: 0..<6, using: &random) {
                        case 0: 0
                        case 1, 2: Int.random(in: 0...3, using: &random) * 1_000 + 500
                        default: nil
                        }
                    calls.append(
                        .init(
                            seconds: Int.random(in: 1...3, using: &random),
                            timeoutMilliseconds: timeout))
                    actions.append(.call(calls.count - 1))
                case 50..<80: actions.append(.advance)
                case 80..<95 where !calls.isEmpty:
                    actions.append(.cancel(Int.random(in: 0..<calls.count, using: &random)))
                default: actions.append(.reset)
                }
            }
        }
    }

    @Test(arguments: 0..<96)
    func engineMatchesTheModel(seed: Int) async throws {
        let schedule = Schedule(seed: UInt64(seed) &* 7_919 &+ 13)
        var model = ConcurrencyLimitModel(limit: schedule.limit, queueLimit: schedule.queueLimit)
        model.calls = schedule.calls
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let log = Log<String>()
        let reported = Log<String>()
        let observer = registry.observe { event in
            let at = Int(event.at / .milliseconds(1))
            func ms(_ duration: Duration) -> Int { Int(duration / .milliseconds(1)) }
            switch event.decision {
            case .concurrencyLimitQueued(let running, let queued):
                reported.append("queued \(running) \(queued)@\(at)")
            case .concurrencyLimitRefused(let running, let queued):
                reported.append("refused \(running) \(queued)@\(at)")
            case .concurrencyLimitAdmitted(let waited):
                reported.append("admitted \(ms(waited))@\(at)")
            case .concurrencyLimitTimedOut(let waited):
                reported.append("timedOut \(ms(waited))@\(at)")
            default: reported.append("unexpected \(event)")
            }
        }
        var tasks: [Int: Task<Void, any Error>] = [:]
        await registry.withCurrent {
            for action in schedule.actions {
                switch action {
                case .call(let index):
                    let call = schedule.calls[index]
                    tasks[index] = Task {
                        try await concurrencyLimit(
                            schedule.limit, queue: schedule.queueLimit,
                            queueTimeout: call.timeoutMilliseconds.map { .milliseconds($0) },
                            identifier: "api"
                        ) {
                            log.mark("start \(index)", registry)
                            try await clock.sleep(for: .seconds(call.seconds))
                            log.mark("end \(index)", registry)
                        }
                    }
                    model.call(index)
                    // A call turned away at once has ended before the next step.
                    if model.outcomes[index] != nil { _ = await thrown(tasks[index]!) }
                case .advance:
                    await clock.advance(by: .seconds(1))
                    model.advance(to: model.now + 1_000)
                case .cancel(let index):
                    tasks[index]?.cancel()
                    model.cancel(index)
                case .reset:
                    resetConcurrencyLimit(identifier: "api")
                    model.reset()
                }
                // The engine has caught up when it shows the model's counts and every start.
                let expected = model.counts
                let starts = model.log.filter { $0.hasPrefix("start") }.count
                let settled = await eventually {
                    let counts = limitCounts(registry, "api") ?? (0, 0)
                    return counts == expected
                        && log.all.filter { $0.hasPrefix("start") }.count == starts
                }
                #expect(registry.limitTablesCheck.broken == nil, "seed \(seed) after \(action)")
                #expect(
                    settled,
                    """
                    seed \(seed) after \(action): engine \(String(describing: limitCounts(registry, "api"))), \
                    model \(model.counts); engine log \(log.all); model log \(model.log)
                    """)
                if !settled {
                    // Cancelled, so that no task waits for a slot for good.
                    for task in tasks.values { task.cancel() }
                    return
                }
            }
            while model.counts != (0, 0) {
                await clock.advance(by: .seconds(1))
                model.advance(to: model.now + 1_000)
            }
        }
        var outcomes: [Int: String] = [:]
        for (index, task) in tasks {
            switch await thrown(task) {
            case nil: outcomes[index] = "ran"
            case let error as ConcurrencyLimitError:
                switch error {
                case .queueFull: outcomes[index] = "queueFull"
                case .queueTimedOut: outcomes[index] = "timedOut"
                case .reset: outcomes[index] = "reset"
                default: outcomes[index] = "\(error)"
                }
            case is CancellationError: outcomes[index] = "cancelled"
            case let error?: outcomes[index] = "\(error)"
            }
        }
        #expect(outcomes == model.outcomes, "seed \(seed)")
        #expect(Self.byInstant(log.all) == Self.byInstant(model.log), "seed \(seed)")
        await observer.waitUntilDelivered()
        #expect(Self.byInstant(reported.all) == Self.byInstant(model.events), "seed \(seed)")
        #expect(registry.liveKeyCount == 0)
        #expect(registry.limitTablesCheck.broken == nil)
        #expect(registry.limitTablesCheck.stored <= 1)
    }

    /// The log ordered by instant, and within one instant by text (calls that start or end at
    /// one instant do so in no set order).
    static func byInstant(_ log: [String]) -> [String] {
        log.sorted { a, b in
            let (ta, tb) = (Int(a.split(separator: "@")[1])!, Int(b.split(separator: "@")[1])!)
            return (ta, a) < (tb, b)
        }
    }
}
