import TempoTesting
import Testing

@_spi(Benchmarks) @testable import Tempo

// The model check of `ConcurrencyLimitModelCheckTests`, with three keys in a registry of one
// shard, so that the keys take the shard's kept idle entry from one another at every step: each
// key must still behave as its own model says, and after every step the tables must keep their
// rule (an idle entry only as the shard's kept one, marked so and without a timer),
// `liveKeyCount` must count exactly the keys with calls running or waiting, and `snapshot()`
// must list exactly them.

@Suite struct ConcurrencyLimitSharedShardModelCheckTests {
    enum Action {
        case call(Int, key: Int)
        case advance
        case cancel(Int)
        case reset(key: Int)
    }

    static let keys = ["k0", "k1", "k2"]

    struct Schedule {
        var limits: [Int] = []
        var queueLimits: [Int] = []
        var calls: [ConcurrencyLimitModel.Call] = []
        var actions: [Action] = []

        init(seed: UInt64) {
            var random = SplitMix64(seed: seed)
            for _ in keys {
                limits.append(Int.random(in: 1...2, using: &random))
                queueLimits.append(
                    Bool.random(using: &random) ? .max : Int.random(in: 0...3, using: &random))
            }
            for _ in 0..<Int.random(in: 15...40, using: &random) {
                let key = Int.random(in: 0..<keys.count, using: &random)
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<50:
                    let timeout: Int? =
                        switch Int.random(in: 0..<5, using: &random) {
                        case 0: 0
                        case 1, 2: Int.random(in: 0...2, using: &random) * 1_000 + 500
                        default: nil
                        }
                    calls.append(
                        .init(
                            seconds: Int.random(in: 1...2, using: &random),
                            timeoutMilliseconds: timeout))
                    actions.append(.call(calls.count - 1, key: key))
                case 50..<80: actions.append(.advance)
                case 80..<92 where !calls.isEmpty:
                    actions.append(.cancel(Int.random(in: 0..<calls.count, using: &random)))
                default: actions.append(.reset(key: key))
                }
            }
        }
    }

    @Test(arguments: 0..<48)
    func threeKeysInOneShardMatchTheirModels(seed: Int) async throws {
        let schedule = Schedule(seed: UInt64(seed) &* 104_729 &+ 7)
        let keys = Self.keys
        var models = keys.indices.map { key in
            var model = ConcurrencyLimitModel(
                limit: schedule.limits[key], queueLimit: schedule.queueLimits[key])
            model.calls = schedule.calls
            return model
        }
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock, shardCount: 1)
        let log = Log<String>()
        var tasks: [Int: Task<Void, any Error>] = [:]
        var failed = false
        await registry.withCurrent {
            for action in schedule.actions where !failed {
                switch action {
                case .call(let index, let key):
                    let call = schedule.calls[index]
                    tasks[index] = Task {
                        try await concurrencyLimit(
                            schedule.limits[key], queue: schedule.queueLimits[key],
                            queueTimeout: call.timeoutMilliseconds.map { .milliseconds($0) },
                            identifier: keys[key]
                        ) {
                            log.mark("start \(index)", registry)
                            try await clock.sleep(for: .seconds(call.seconds))
                            log.mark("end \(index)", registry)
                        }
                    }
                    models[key].call(index)
                    if models[key].outcomes[index] != nil { _ = await thrown(tasks[index]!) }
                case .advance:
                    await clock.advance(by: .seconds(1))
                    for key in keys.indices { models[key].advance(to: models[key].now + 1_000) }
                case .cancel(let index):
                    tasks[index]?.cancel()
                    for key in keys.indices { models[key].cancel(index) }
                case .reset(let key):
                    resetConcurrencyLimit(identifier: keys[key])
                    models[key].reset()
                }
                let starts = models.reduce(0) { $0 + $1.log.filter { $0.hasPrefix("start") }.count }
                let wanted = models.map(\.counts)
                let settled = await eventually {
                    keys.indices.allSatisfy { key in
                        (limitCounts(registry, keys[key]) ?? (0, 0)) == wanted[key]
                    } && log.all.filter { $0.hasPrefix("start") }.count == starts
                }
                let live = Set(keys.indices.filter { models[$0].counts != (0, 0) }.map { keys[$0] })
                let listed = registry.snapshot().entries.map(\.key)
                let check = registry.limitTablesCheck
                #expect(settled, "seed \(seed) after \(action): log \(log.all)")
                #expect(check.broken == nil, "seed \(seed) after \(action)")
                #expect(check.kept <= 1 && check.stored == live.count + check.kept)
                #expect(registry.liveKeyCount == live.count, "seed \(seed) after \(action)")
                #expect(listed.count == live.count && Set(listed) == live)
                if !settled || check.broken != nil { failed = true }
            }
            if failed {
                for task in tasks.values { task.cancel() }
                return
            }
            while models.contains(where: { $0.counts != (0, 0) }) {
                await clock.advance(by: .seconds(1))
                for key in keys.indices { models[key].advance(to: models[key].now + 1_000) }
            }
        }
        if failed { return }
        var expected: [Int: String] = [:]
        for model in models { expected.merge(model.outcomes) { first, _ in first } }
        var outcomes: [Int: String] = [:]
        for (index, task) in tasks {
            outcomes[index] = Self.outcome(await thrown(task))
        }
        #expect(outcomes == expected, "seed \(seed)")
        let modelLog = models.flatMap(\.log)
        #expect(
            ConcurrencyLimitModelCheckTests.byInstant(log.all)
                == ConcurrencyLimitModelCheckTests.byInstant(modelLog), "seed \(seed)")
        #expect(registry.liveKeyCount == 0)
        let check = registry.limitTablesCheck
        #expect(check.broken == nil && check.stored <= 1 && check.stored == check.kept)
    }

    /// How a call ended, as the model names it.
    static func outcome(_ error: (any Error)?) -> String {
        switch error {
        case nil: "ran"
        case let error as ConcurrencyLimitError:
            switch error {
            case .queueFull: "queueFull"
            case .queueTimedOut: "timedOut"
            case .reset: "reset"
            default: "\(error)"
            }
        case is CancellationError: "cancelled"
        case let error?: "\(error)"
        }
    }
}
