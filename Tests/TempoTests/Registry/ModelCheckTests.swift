import Synchronization
import Tempo
import TempoTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Drives random schedules of calls, clock advances, cancels and flushes through the engine (on
// the manual clock, through the public API) and through the reference models
// (`Debounce/DebounceModel.swift`, `Throttle/ThrottleModel.swift`), and requires the same runs,
// with the same operations, at the same instants; and, after every step, the same pending calls
// (and when they run) and the same number of live keys. The registry's observer must be told
// of every run and every drop, at its instant.
//
// Schedules also have groups of zero or negative duration (every call runs at once), release
// their `Debouncer`s and `Throttler`s (whose `onDeinit` flushes or cancels), and may run with
// late timers: every timer fires a few ticks after its deadline (`LateTimerClock`), so calls,
// cancels and flushes find calls due whose timers have not fired (catch-up runs). With late
// timers a run may come up to that many ticks after the model's, and the observer must be told
// of it when it comes; the pending calls are not compared.
//
// Run one seed alone: `TEMPO_MODEL_SEED=1234 swift test --filter ModelCheck`.

/// One random schedule.
struct Schedule: CustomStringConvertible {
    enum Mode: CustomStringConvertible {
        case debounce(DebounceOptions, maxWait: Int?)
        case throttle(ThrottleOptions)

        var description: String {
            switch self {
            case .debounce(let option, let maxWait):
                "debounce .\(option)" + (maxWait.map { " maxWait \($0)" } ?? "")
            case .throttle(let option): "throttle .\(option)"
            }
        }
    }

    struct Group {
        var name: String
        var mode: Mode
        var duration: Int
    }

    enum Action {
        case call(group: Int, op: Int)
        case advance(Int)
        case cancel(Int)
        case flush(Int)
        case cancelAll
        /// A `Debouncer` or `Throttler` goes away (its `onDeinit` runs) and a new one takes its
        /// place: a new group. Only in the fronts that use them.
        case release(Int)
        /// `flushAll()`: every group's pending call runs now, as a flush of each.
        case flushAll
        /// `drain()`: a flush of every group, then a wait for what it started (nothing else is
        /// pending: a schedule has no delays), so the clock does not move.
        case drain
    }

    /// How the engine is called.
    enum Front: CaseIterable {
        /// Free functions with an identifier, synchronous operations in the task's context.
        case identifier
        /// `Debouncer` / `Throttler` objects.
        case scoped
        /// Free functions, main-actor operations.
        case mainActor
        /// Free functions, the `Task`-returning overloads (their operations kept by the engine).
        case task
        /// `Debouncer` / `Throttler` objects, their `Task`-returning form (a ticket per call).
        case scopedTask
    }

    var seed: UInt64
    var front: Front
    var groups: [Group]
    var actions: [Action]
    /// How many ticks late every timer fires (0: on time).
    var lateness: Int
    /// What a released `Debouncer` or `Throttler` does with its pending call.
    var onDeinit: OnDeinit

    init(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        self.seed = seed
        let frontRoll = Int.random(in: 0..<20, using: &random)
        front =
            frontRoll < 11
            ? .identifier
            : frontRoll < 14
                ? .scoped : frontRoll < 16 ? .mainActor : frontRoll < 18 ? .task : .scopedTask
        let groupCount = Int.random(in: 1...2, using: &random)
        let shareName = Bool.random(using: &random)
        groups = (0..<groupCount).map { index in
            let mode: Mode
            if Bool.random(using: &random) {
                let option = [DebounceOptions.default, .runFirst, .leading].randomElement(
                    using: &random)!
                let maxWait =
                    Bool.random(using: &random) ? Int.random(in: -2...12, using: &random) : nil
                mode = .debounce(option, maxWait: maxWait)
            } else {
                mode = .throttle(
                    [ThrottleOptions.default, .ensureLast, .trailing].randomElement(using: &random)!
                )
            }
            // Now and then a duration of zero or less: every call runs at once.
            let duration =
                Int.random(in: 0..<8, using: &random) == 0
                ? Int.random(in: -2...0, using: &random) : Int.random(in: 1...6, using: &random)
            return Group(name: shareName ? "g" : "g\(index)", mode: mode, duration: duration)
        }
        lateness =
            Int.random(in: 0..<10, using: &random) < 3 ? Int.random(in: 1...3, using: &random) : 0
        onDeinit = Bool.random(using: &random) ? .flush : .cancel
        let scoped = front == .scoped || front == .scopedTask
        // Two groups of the same kind never share a name: they would be one group.
        if groupCount == 2, shareName {
            switch (groups[0].mode, groups[1].mode) {
            case (.debounce, .debounce), (.throttle, .throttle): groups[1].name = "g1"
            default: break
            }
        }
        var actions: [Action] = []
        var op = 0
        for _ in 0..<Int.random(in: 4...24, using: &random) {
            let group = Int.random(in: 0..<groupCount, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<50:
                op += 1
                actions.append(.call(group: group, op: op))
            case 50..<80: actions.append(.advance(Int.random(in: 0...4, using: &random)))
            case 80..<88: actions.append(.flush(group))
            case 88..<94: actions.append(.cancel(group))
            case 94..<96: actions.append(.flushAll)
            case 96..<98: actions.append(.drain)
            case 98 where scoped: actions.append(.release(group))
            default: actions.append(.cancelAll)
            }
        }
        actions.append(.advance(40))
        self.actions = actions
    }

    var description: String {
        "seed \(seed), \(front), lateness \(lateness), onDeinit .\(onDeinit), groups: "
            + groups.enumerated().map { "#\($0) \"\($1.name)\" \($1.mode) duration \($1.duration)" }
            .joined(separator: "; ")
    }
}

/// What a run of a schedule shows: the runs of each group, and what was observed after each
/// action.
struct Trace: Equatable {
    struct Run: Equatable, CustomStringConvertible {
        var time: Int
        var op: Int
        var description: String { "op\(op)@\(time)" }
    }

    struct Observation: Equatable, CustomStringConvertible {
        var time: Int
        /// Per group: when its pending call runs, `nil` when none is pending.
        var pending: [Int?]
        var liveKeys: Int
        var description: String {
            "t=\(time) pending \(pending.map { $0.map(String.init) ?? "-" }) live \(liveKeys)"
        }
    }

    var runs: [[Run]]
    /// The instant of every run of every group, in order: what the registry's observer must be
    /// told (`callRan`).
    var ranAt: [Int] = []
    /// The instant of every call dropped (replaced, dropped by its mode, cancelled), in order:
    /// what the registry's observer must be told (`callDropped`).
    var droppedAt: [Int] = []
    var observations: [Observation]

    mutating func sortRunsWithinInstants() {
        for index in runs.indices { runs[index].sort { ($0.time, $0.op) < ($1.time, $1.op) } }
    }

    /// Whether the engine's trace agrees with the model's (`self`), with timers `lateness`
    /// ticks late: each run the model's, up to `lateness` ticks after it, and told to the
    /// observer when it came; the drops at the model's instants; on time, the pending calls
    /// after every step too.
    func isMatched(by engine: Trace, lateness: Int) -> Bool {
        guard runs.count == engine.runs.count, droppedAt == engine.droppedAt else { return false }
        for (model, engine) in zip(runs, engine.runs) {
            guard model.count == engine.count else { return false }
            for (m, e) in zip(model, engine)
            where m.op != e.op || e.time < m.time || e.time > m.time + lateness {
                return false
            }
        }
        if lateness == 0 { return ranAt == engine.ranAt && observations == engine.observations }
        return engine.ranAt == engine.runs.flatMap { $0.map(\.time) }.sorted()
    }
}

// MARK: - The model side

func runModel(_ schedule: Schedule) -> Trace {
    enum Group {
        case debounce(DebounceModel)
        case throttle(ThrottleModel)
    }
    var groups: [Group] = schedule.groups.map { group in
        switch group.mode {
        case .debounce(let option, let maxWait):
            .debounce(DebounceModel(option: option, duration: group.duration, maxWait: maxWait))
        case .throttle(let option):
            .throttle(ThrottleModel(option: option, duration: group.duration))
        }
    }
    let fresh = groups
    var trace = Trace(runs: Array(repeating: [], count: groups.count), observations: [])
    var now = 0

    func record(_ op: Int?, _ index: Int) {
        if let op { trace.runs[index].append(.init(time: now, op: op)) }
    }

    /// The call a group holds, waiting.
    func held(_ index: Int) -> Int? {
        switch groups[index] {
        case .debounce(let model): model.pending?.op
        case .throttle(let model): model.trailing
        }
    }

    /// Records as dropped, now, each of `ops` that group `index` neither holds nor has run.
    func recordDrops(_ ops: [Int?], _ index: Int) {
        let kept = held(index)
        for case let op? in ops where op != kept && trace.runs[index].last?.op != op {
            trace.droppedAt.append(now)
        }
    }

    func cancel(_ index: Int) {
        let before = held(index)
        switch groups[index] {
        case .debounce(var model):
            model.cancel()
            groups[index] = .debounce(model)
        case .throttle(var model):
            model.cancel()
            groups[index] = .throttle(model)
        }
        recordDrops([before], index)
    }

    func flush(_ index: Int) {
        switch groups[index] {
        case .debounce(var model):
            record(model.flush(at: now), index)
            groups[index] = .debounce(model)
        case .throttle(var model):
            record(model.flush(at: now), index)
            groups[index] = .throttle(model)
        }
    }

    for action in schedule.actions {
        switch action {
        case .call(let index, let op) where schedule.groups[index].duration <= 0:
            record(op, index)  // no duration: it runs at once, and the group is not touched
        case .call(let index, let op):
            let before = held(index)
            switch groups[index] {
            case .debounce(var model):
                record(model.call(op, at: now), index)
                groups[index] = .debounce(model)
            case .throttle(var model):
                record(model.call(op, at: now), index)
                groups[index] = .throttle(model)
            }
            recordDrops([before, op], index)
        case .advance(let ticks):
            for _ in 0..<ticks {
                now += 1
                for index in groups.indices {
                    switch groups[index] {
                    case .debounce(var model):
                        record(model.clockReaches(now), index)
                        groups[index] = .debounce(model)
                    case .throttle(var model):
                        record(model.clockReaches(now), index)
                        groups[index] = .throttle(model)
                    }
                }
            }
        case .flush(let index): flush(index)
        case .cancel(let index): cancel(index)
        case .cancelAll: for index in groups.indices { cancel(index) }
        case .release(let index):
            // The deinit flushes (when asked), then cancels; the new object is a new group.
            if schedule.onDeinit == .flush { flush(index) }
            cancel(index)
            groups[index] = fresh[index]
        case .flushAll, .drain: for index in groups.indices { flush(index) }
        }
        var pending: [Int?] = []
        var live = 0
        for group in groups {
            switch group {
            case .debounce(let model):
                pending.append(model.pending?.due)
                live += model.isLive(at: now) ? 1 : 0
            case .throttle(let model):
                pending.append(model.pendingDue)
                live += model.isLive(at: now) ? 1 : 0
            }
        }
        trace.observations.append(.init(time: now, pending: pending, liveKeys: live))
    }
    trace.ranAt = trace.runs.flatMap { $0.map(\.time) }.sorted()
    return trace
}

// MARK: - The engine side

private func ticks(_ duration: Duration) -> Int {
    let (seconds, attoseconds) = duration.components
    return Int(seconds) * 1_000 + Int(attoseconds / 1_000_000_000_000_000)
}

/// One group as the engine sees it.
private struct EngineGroup: Sendable {
    var spec: Schedule.Group
    var front: Schedule.Front
    var debouncer: Debouncer?
    var throttler: Throttler?
    var log: Log<Trace.Run>
    var registry: TempoRegistry

    var duration: Duration { .milliseconds(spec.duration) }

    func call(_ op: Int) {
        let log = self.log
        let registry = self.registry
        let record: @Sendable () -> Void = { log.append(.init(time: ticks(registry.now), op: op)) }
        switch spec.mode {
        case .debounce(let option, let maxWait):
            let maxWait = maxWait.map { Duration.milliseconds($0) }
            switch front {
            case .identifier:
                debounce(
                    duration, identifier: spec.name, by: .taskContext, option: option,
                    maxWait: maxWait, operation: record)
            case .scoped:
                debouncer!(record)
            case .scopedTask:
                debouncer!(onError: nil) { record() }
            case .mainActor:
                debounce(duration, identifier: spec.name, option: option, maxWait: maxWait) {
                    @MainActor in record()
                }
            case .task:
                debounce(
                    duration, identifier: spec.name, by: .taskContext, option: option,
                    maxWait: maxWait, onError: nil, operation: { record() })
            }
        case .throttle(let option):
            switch front {
            case .identifier:
                throttle(
                    duration, identifier: spec.name, by: .taskContext, option: option,
                    operation: record)
            case .scoped:
                throttler!(record)
            case .scopedTask:
                throttler!(onError: nil) { record() }
            case .mainActor:
                throttle(duration, identifier: spec.name, option: option) {
                    @MainActor in record()
                }
            case .task:
                throttle(
                    duration, identifier: spec.name, by: .taskContext, option: option,
                    onError: nil, operation: { record() })
            }
        }
    }

    func flush() {
        switch (spec.mode, front) {
        case (.debounce, .scoped), (.debounce, .scopedTask): debouncer!.flush()
        case (.debounce, _): flushDebounce(identifier: spec.name)
        case (.throttle, .scoped), (.throttle, .scopedTask): throttler!.flush()
        case (.throttle, _): flushThrottle(identifier: spec.name)
        }
    }

    func cancel() {
        switch (spec.mode, front) {
        case (.debounce, .scoped), (.debounce, .scopedTask): debouncer!.cancel()
        case (.debounce, _): cancelDebounce(identifier: spec.name)
        case (.throttle, .scoped), (.throttle, .scopedTask): throttler!.cancel()
        case (.throttle, _): cancelThrottle(identifier: spec.name)
        }
    }

    var pending: PendingCall? {
        switch (spec.mode, front) {
        case (.debounce, .scoped), (.debounce, .scopedTask): debouncer!.pending
        case (.debounce, _): pendingDebounce(identifier: spec.name)
        case (.throttle, .scoped), (.throttle, .scopedTask): throttler!.pending
        case (.throttle, _): pendingThrottle(identifier: spec.name)
        }
    }
}

/// A manual clock whose timers all fire `lateness` after their deadlines, as on a busy real
/// clock: the calls, cancels and flushes made meanwhile find calls due whose timers have not
/// fired. Advance the manual clock itself.
final class LateTimerClock: Clock, DeterministicClock, Sendable {
    let host: ManualClock
    let lateness: Duration

    init(_ host: ManualClock, lateness: Duration) {
        self.host = host
        self.lateness = lateness
    }

    var now: ManualClock.Instant { host.now }
    var minimumResolution: Duration { host.minimumResolution }
    func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
        try await host.sleep(until: deadline, tolerance: tolerance)
    }

    var offset: Duration { host.offset }
    func scheduleTimer(at deadline: Duration, _ fire: @escaping @Sendable (Duration) -> Duration?)
        -> UInt64
    {
        let lateness = self.lateness
        return host.scheduleTimer(at: deadline + lateness) { now in
            fire(now).map { $0 + lateness }
        }
    }
    func cancelTimer(_ id: UInt64) { host.cancelTimer(id) }
    func openSettleToken() -> UInt64 { host.openSettleToken() }
    func closeSettleToken(_ id: UInt64) { host.closeSettleToken(id) }
    func park(_ work: SettleToken) { host.park(work) }
    func unpark(_ work: SettleToken) { host.unpark(work) }
    func attach(_ registry: TempoRegistry) { host.attach(registry) }
}

func runEngine(_ schedule: Schedule) async -> Trace {
    let clock = ManualClock()
    let registry =
        schedule.lateness == 0
        ? TempoRegistry(clock: clock)
        : TempoRegistry(clock: LateTimerClock(clock, lateness: .milliseconds(schedule.lateness)))
    let ranAt = Log<Int>()
    let droppedAt = Log<Int>()
    let observer = registry.observe { event in
        switch event.decision {
        case .callRan: ranAt.append(ticks(event.at))
        case .callDropped: droppedAt.append(ticks(event.at))
        default: Issue.record("unexpected event: \(event)")
        }
    }
    defer { observer.cancel() }
    return await registry.withCurrent {
        func makeGroup(_ spec: Schedule.Group, log: Log<Trace.Run> = Log()) -> EngineGroup {
            var group = EngineGroup(spec: spec, front: schedule.front, log: log, registry: registry)
            if schedule.front == .scoped || schedule.front == .scopedTask {
                switch spec.mode {
                case .debounce(let option, let maxWait):
                    group.debouncer = Debouncer(
                        group.duration, by: .taskContext, option: option,
                        maxWait: maxWait.map { .milliseconds($0) }, onDeinit: schedule.onDeinit)
                case .throttle(let option):
                    group.throttler = Throttler(
                        group.duration, by: .taskContext, option: option,
                        onDeinit: schedule.onDeinit)
                }
            }
            return group
        }
        var groups = schedule.groups.map { makeGroup($0) }
        var observations: [Trace.Observation] = []
        for action in schedule.actions {
            switch action {
            case .call(let index, let op): groups[index].call(op)
            case .advance(let ticks): await clock.advance(by: .milliseconds(ticks))
            case .flush(let index): groups[index].flush()
            case .cancel(let index): groups[index].cancel()
            case .cancelAll: registry.cancelAll()
            case .release(let index):
                // The old object's deinit runs here, as the new one takes its place.
                groups[index] = makeGroup(schedule.groups[index], log: groups[index].log)
            case .flushAll: registry.flushAll()
            case .drain:
                let report = await registry.drain()
                if !report.isComplete { Issue.record("drain incomplete: \(report)") }
            }
            observations.append(
                .init(
                    time: ticks(registry.now),
                    pending: groups.map { $0.pending.map { ticks($0.runsAt) } },
                    liveKeys: registry.liveKeyCount))
        }
        await observer.waitUntilDelivered()
        return Trace(
            runs: groups.map(\.log.all), ranAt: ranAt.all.sorted(),
            droppedAt: droppedAt.all.sorted(), observations: observations)
    }
}

// MARK: - The timeline of a failing seed

func timeline(_ schedule: Schedule, model: Trace, engine: Trace) -> String {
    var lines = [
        "Model check failed: \(schedule)", "", "  step  t  action          model | engine",
    ]
    var now = 0
    for (step, action) in schedule.actions.enumerated() {
        let text: String
        switch action {
        case .call(let group, let op): text = "call #\(group) op\(op)"
        case .advance(let ticks):
            text = "advance \(ticks)"
            now += ticks
        case .flush(let group): text = "flush #\(group)"
        case .cancel(let group): text = "cancel #\(group)"
        case .cancelAll: text = "cancelAll"
        case .release(let group): text = "release #\(group)"
        case .flushAll: text = "flushAll"
        case .drain: text = "drain"
        }
        let m = model.observations[step]
        let e = step < engine.observations.count ? engine.observations[step] : nil
        let mark = m == e ? " " : "*"
        let padded = text.padding(to: 15)
        lines.append(
            "\(mark) \(String(step).padding(to: 4)) \(String(now).padding(to: 2)) \(padded) "
                + "\(m) | \(e.map(String.init(describing:)) ?? "-")")
    }
    lines.append("")
    for index in schedule.groups.indices {
        let mark = model.runs[index] == engine.runs[index] ? " " : "*"
        lines.append("\(mark) runs #\(index) model:  \(model.runs[index])")
        lines.append("\(mark) runs #\(index) engine: \(engine.runs[index])")
    }
    if model.ranAt != engine.ranAt {
        lines.append("* runs reported to the observer: \(engine.ranAt), model \(model.ranAt)")
    }
    if model.droppedAt != engine.droppedAt {
        lines.append(
            "* drops reported to the observer: \(engine.droppedAt), model \(model.droppedAt)")
    }
    lines.append("Replay: TEMPO_MODEL_SEED=\(schedule.seed) swift test --filter ModelCheck")
    return lines.joined(separator: "\n")
}

extension String {
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

// MARK: - The tests

@Suite struct ModelCheckTests {
    static let baseSeed: UInt64 = 0x7E4D_0000

    /// The seeds to run: `TEMPO_MODEL_SEED` alone when set, else `count` seeds from the base.
    static func seeds(_ count: Int, offset: UInt64) -> [UInt64] {
        if let text = getenv("TEMPO_MODEL_SEED").map({ String(cString: $0) }),
            let seed = UInt64(text)
        {
            return [seed]
        }
        return (0..<UInt64(count)).map { baseSeed &+ offset &+ $0 }
    }

    @Test func engineMatchesTheReferenceModel() async {
        var failures = 0
        var fronts: [Schedule.Front: Int] = [:]
        var paths: [String: Int] = [:]
        for seed in Self.seeds(10_000, offset: 0) {
            let schedule = Schedule(seed: seed)
            fronts[schedule.front, default: 0] += 1
            if schedule.lateness > 0 { paths["late timers", default: 0] += 1 }
            if schedule.groups.contains(where: { $0.duration <= 0 }) {
                paths["no duration", default: 0] += 1
            }
            for case .release in schedule.actions {
                paths["released .\(schedule.onDeinit)", default: 0] += 1
            }
            var model = runModel(schedule)
            var engine = await runEngine(schedule)
            if schedule.front == .task || schedule.front == .scopedTask {
                // Each `Task`-returning call runs in its own task: two runs of one group at the
                // same instant (a flush, then a call and another flush) run concurrently, in
                // either order. Compare the runs of each instant as a set.
                model.sortRunsWithinInstants()
                engine.sortRunsWithinInstants()
            }
            if !model.isMatched(by: engine, lateness: schedule.lateness) {
                failures += 1
                Issue.record(Comment(rawValue: timeline(schedule, model: model, engine: engine)))
                if failures >= 3 { break }
            }
        }
        if getenv("TEMPO_MODEL_SEED") == nil {
            // Every way of calling the engine was exercised, and every path the model checks.
            #expect(Schedule.Front.allCases.allSatisfy { fronts[$0, default: 0] >= 500 })
            #expect(paths.values.allSatisfy { $0 >= 100 }, "\(paths)")
        }
    }
}
