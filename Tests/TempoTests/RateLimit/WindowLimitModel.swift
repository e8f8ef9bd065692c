// A reference model of one window-limited key, written from the contract (the doc comment of
// `RateLimit.window` and Guarantees.md), not from the engine: every start ever admitted, in
// whole ticks, and a count over the window at each question.
//
// A start at tick `s` occupies the window `[s, s + span)`. A call of weight `w` is admitted at
// `t` when the starts with `s + span > t`, plus `w`, are at most `permits`. Waiters queue first
// in first out, and only the head is ever admitted. At each tick the head is admitted while it
// can be, then waiters whose maximum wait has run out give up, and again.
//
// An operation the limit wraps counts from its end, held in flight from its admission until
// then; the model's operations end at the tick they start (the model check's do nothing), so
// each counts at that tick, as a start. `WindowLimitUntilEndTests` checks operations that run.

struct WindowLimitModel {
    let permits: Int
    let span: Int
    var starts: [Int] = []
    var queue: [(label: String, weight: Int, deadline: Int?)] = []

    typealias Event = RateLimitModel.Event

    func inWindow(at now: Int) -> Int { starts.filter { $0 + span > now }.count }
    func isLive(at now: Int) -> Bool { !queue.isEmpty || inWindow(at: now) > 0 }
    func tokens(at now: Int) -> Int { permits - inWindow(at: now) }
    func fits(_ weight: Int, at now: Int) -> Bool { inWindow(at: now) + weight <= permits }

    /// Ticks until one start is free, the waiters not counted.
    func nextPermitIn(at now: Int) -> Int {
        var t = now
        while !fits(1, at: t) { t += 1 }
        return t - now
    }

    mutating func settle(at now: Int) -> [Event] {
        var events: [Event] = []
        while true {
            while let head = queue.first, fits(head.weight, at: now) {
                starts += Array(repeating: now, count: head.weight)
                events.append(.admitted(head.label, at: now))
                queue.removeFirst()
            }
            guard let index = queue.firstIndex(where: { ($0.deadline ?? .max) <= now }) else {
                return events
            }
            let gone = queue.remove(at: index)
            events.append(.gaveUp(gone.label, retryAfter: waitForNewcomer(gone.weight, at: now)))
        }
    }

    /// How long a newcomer of `weight` would wait behind the queue if nobody gave up.
    func waitForNewcomer(_ weight: Int, at now: Int) -> Int {
        var copy = self
        copy.queue = queue.map { ($0.label, $0.weight, nil) } + [("newcomer", weight, nil)]
        var t = now
        while !copy.settle(at: t).contains(.admitted("newcomer", at: t)) { t += 1 }
        return t - now
    }

    mutating func take(_ weight: Int, at now: Int) -> Int? {
        if queue.isEmpty, fits(weight, at: now) {
            starts += Array(repeating: now, count: weight)
            return nil
        }
        return waitForNewcomer(weight, at: now)
    }

    mutating func wait(_ label: String, weight: Int, maxWait: Int?, at now: Int) -> [Event] {
        if queue.isEmpty, fits(weight, at: now) {
            starts += Array(repeating: now, count: weight)
            return [.admitted(label, at: now)]
        }
        if maxWait == 0 { return [.gaveUp(label, retryAfter: waitForNewcomer(weight, at: now))] }
        queue.append((label, weight, maxWait.map { now + $0 }))
        return []
    }

    mutating func cancel(_ label: String, at now: Int) -> [Event] {
        guard let index = queue.firstIndex(where: { $0.label == label }) else { return [] }
        queue.remove(at: index)
        return [.cancelled(label)] + settle(at: now)
    }

    mutating func reset(at now: Int) -> [Event] {
        starts = []
        return settle(at: now)
    }
}
