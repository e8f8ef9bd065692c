import Testing

@testable import Tempo

// The same random schedules as `ModelCheckTests`, driven straight through the pure state
// machines (`DebounceState`, `ThrottleState`) with *late* timers: a timer may wake any time
// after its deadline, or not before the next call, as on a busy real clock. The calls' catch-up
// path must then give the same runs, with the same operations, as the reference model, each
// run stamped with the instant it was due.

/// Drives one schedule through the state machines; returns each group's runs.
func runStateMachines(_ schedule: Schedule, lateness seed: UInt64) -> [[Trace.Run]] {
    var random = SplitMix64(seed: seed ^ 0xA5A5_A5A5)
    enum Machine {
        case debounce(DebounceState<Int>)
        case throttle(ThrottleState<Int>)
    }
    func ms(_ ticks: Int) -> Duration { .milliseconds(ticks) }
    func ticks(_ duration: Duration) -> Int { Int(duration / .milliseconds(1)) }

    var machines: [Machine] = schedule.groups.map {
        if case .debounce = $0.mode { return .debounce(DebounceState()) }
        return .throttle(ThrottleState())
    }
    /// When each group's timer wakes next, if it is armed.
    var wakes: [Int?] = Array(repeating: nil, count: machines.count)
    var runs: [[Trace.Run]] = Array(repeating: [], count: machines.count)
    var now = 0

    /// When the call a machine would run on its next wake-up was due.
    func dueInstant(_ machine: Machine) -> Int? {
        switch machine {
        case .debounce(let state): state.pendingDeadline.map(ticks)
        case .throttle(let state): state.pendingDeadline.map(ticks)
        }
    }

    func fire(_ index: Int, at time: Int) {
        let due = dueInstant(machines[index])
        let run: Int?
        let next: Duration?
        switch machines[index] {
        case .debounce(var state):
            let result = state.fire(at: ms(time))
            (run, next) = (result.run, result.next)
            machines[index] = .debounce(state)
        case .throttle(var state):
            let result = state.fire(at: ms(time))
            (run, next) = (result.run, result.next)
            machines[index] = .throttle(state)
        }
        if let run { runs[index].append(.init(time: due!, op: run)) }
        wakes[index] = next.map(ticks)
    }

    func cancel(_ index: Int) {
        let dueAt = dueInstant(machines[index])
        let due: Int?
        switch machines[index] {
        case .debounce(var state):
            due = state.cancel(at: ms(now)).due
            machines[index] = .debounce(state)
        case .throttle(var state):
            due = state.cancel(at: ms(now)).due
            machines[index] = .throttle(state)
        }
        if let due { runs[index].append(.init(time: dueAt!, op: due)) }
        wakes[index] = nil
    }

    func flush(_ index: Int) {
        let due = dueInstant(machines[index])
        let run: Int?
        switch machines[index] {
        case .debounce(var state):
            run = state.flush(at: ms(now))
            machines[index] = .debounce(state)
        case .throttle(var state):
            run = state.flush(at: ms(now))
            machines[index] = .throttle(state)
        }
        // A flush of a call whose instant had passed runs it as of that instant.
        if let run { runs[index].append(.init(time: min(due!, now), op: run)) }
    }

    for action in schedule.actions {
        switch action {
        case .call(let index, let op) where schedule.groups[index].duration <= 0:
            // The registry runs a call of no duration at once; its group's machine never sees it.
            runs[index].append(.init(time: now, op: op))
        case .call(let index, let op):
            let group = schedule.groups[index]
            let due = dueInstant(machines[index])
            let catchUp: Int?
            let runNow: Int?
            let wake: Duration
            switch (machines[index], group.mode) {
            case (.debounce(var state), .debounce(let option, let maxWait)):
                let result = state.call(
                    at: ms(now), duration: ms(group.duration), option: option,
                    maxWait: maxWait.map(ms), payload: op)
                (catchUp, runNow, wake) = (result.catchUp, result.runNow, result.wake)
                machines[index] = .debounce(state)
            case (.throttle(var state), .throttle(let option)):
                let result = state.call(
                    at: ms(now), duration: ms(group.duration), option: option, payload: op)
                (catchUp, runNow, wake) = (result.catchUp, result.runNow, result.wake)
                machines[index] = .throttle(state)
            default: fatalError("mode and machine disagree")
            }
            if let catchUp { runs[index].append(.init(time: due!, op: catchUp)) }
            if let runNow { runs[index].append(.init(time: now, op: runNow)) }
            // The registry re-arms only to an earlier instant.
            wakes[index] = min(wakes[index] ?? .max, ticks(wake))
        case .advance(let step):
            let end = now + step
            for index in machines.indices {
                // Each wake-up that comes due may happen late, or not before `end`.
                while let wake = wakes[index], wake <= end,
                    Int.random(in: 0..<4, using: &random) > 0
                {
                    fire(index, at: Int.random(in: max(wake, now)...end, using: &random))
                }
            }
            now = end
        case .flush(let index):
            flush(index)
        case .flushAll, .drain:
            for index in machines.indices { flush(index) }
        case .cancel(let index):
            cancel(index)
        case .cancelAll:
            for index in machines.indices { cancel(index) }
        case .release(let index):
            // A `Debouncer` or `Throttler` goes away: its deinit flushes (when asked), then
            // cancels; the object that takes its place is a new group.
            if schedule.onDeinit == .flush { flush(index) }
            cancel(index)
            machines[index] =
                schedule.groups[index].mode.isDebounce
                ? .debounce(DebounceState()) : .throttle(ThrottleState())
            wakes[index] = nil
        }
    }
    // Let every timer wake, late, until nothing is left.
    for index in machines.indices {
        while let wake = wakes[index] {
            fire(index, at: wake + Int.random(in: 0...3, using: &random))
        }
    }
    return runs
}

extension Schedule.Mode {
    var isDebounce: Bool {
        if case .debounce = self { return true }
        return false
    }
}

@Suite struct StateMachineModelTests {
    @Test func lateTimersGiveTheSameRunsAsTheModel() async {
        var failures = 0
        for (index, seed) in ModelCheckTests.seeds(20_000, offset: 1_000_000).enumerated() {
            // Seconds of work with no suspension: every 100 seeds (about 15 ms), give the
            // thread of the task pool back to the rest of a parallel run.
            if index % 100 == 0 { await Task.yield() }
            let schedule = Schedule(seed: seed)
            let model = runModel(schedule).runs
            let machines = runStateMachines(schedule, lateness: seed)
            if model != machines {
                failures += 1
                var lines = ["State machines with late timers disagree with the model: \(schedule)"]
                for index in schedule.groups.indices {
                    lines.append("  #\(index) model:    \(model[index])")
                    lines.append("  #\(index) machines: \(machines[index])")
                }
                lines.append("  actions: \(schedule.actions)")
                Issue.record(Comment(rawValue: lines.joined(separator: "\n")))
                if failures >= 3 { break }
            }
        }
    }
}
