// A reference model of one rate-limited key, written from the contract (RateLimit.md and the
// doc comments of `rateLimit`, `RateLimit` and `RateLimitError`), not from the engine: a plain
// token bucket counted in whole ticks, stepped one tick at a time.
//
// The bucket holds `level` ticks of credit, at most `burst × refill`; each tick adds one. A
// call of weight `w` needs `w × refill` of credit. Waiters queue first in first out, and only
// the head is ever admitted. At each tick the bucket first refills, then the head is admitted
// while it can be, then waiters whose maximum wait has run out give up, and again.

struct RateLimitModel {
    let refill: Int
    let burst: Int
    var level: Int
    var queue: [(label: String, weight: Int, deadline: Int?)] = []

    init(refill: Int, burst: Int) {
        self.refill = refill
        self.burst = burst
        level = refill * burst
    }

    /// What happened to a waiter: admitted at a tick, or gave up with a retry-after in ticks.
    enum Event: Hashable, CustomStringConvertible {
        case admitted(String, at: Int)
        case gaveUp(String, retryAfter: Int)
        case cancelled(String)

        var description: String {
            switch self {
            case .admitted(let label, let at): "\(label)@\(at)"
            case .gaveUp(let label, let after): "\(label)!\(after)"
            case .cancelled(let label): "\(label)!cancelled"
            }
        }
    }

    var isLive: Bool { !queue.isEmpty || level < refill * burst }
    var tokens: Int { level / refill }
    /// Ticks until one permit is free, the waiters not counted.
    var nextPermitIn: Int { max(0, refill - level) }

    /// Admits the head while it can, lets go of the waiters past their deadline, and again.
    mutating func settle(at now: Int) -> [Event] {
        var events: [Event] = []
        while true {
            while let head = queue.first, level >= head.weight * refill {
                level -= head.weight * refill
                events.append(.admitted(head.label, at: now))
                queue.removeFirst()
            }
            guard let index = queue.firstIndex(where: { ($0.deadline ?? .max) <= now }) else {
                return events
            }
            let gone = queue.remove(at: index)
            events.append(.gaveUp(gone.label, retryAfter: waitForNewcomer(gone.weight)))
        }
    }

    /// One tick passes, to `now`.
    mutating func tick(to now: Int) -> [Event] {
        level = min(level + 1, refill * burst)
        return settle(at: now)
    }

    /// A call that does not wait: admitted, or the ticks a call of its weight would wait.
    mutating func take(_ weight: Int) -> Int? {
        if queue.isEmpty, level >= weight * refill {
            level -= weight * refill
            return nil
        }
        return waitForNewcomer(weight)
    }

    /// How long a newcomer of `weight` would wait behind the queue if nobody gave up.
    func waitForNewcomer(_ weight: Int) -> Int {
        var copy = self
        copy.queue = queue.map { ($0.label, $0.weight, nil) } + [("newcomer", weight, nil)]
        var ticks = 0
        if copy.settle(at: 0).contains(.admitted("newcomer", at: 0)) { return 0 }
        while true {
            ticks += 1
            if copy.tick(to: ticks).contains(.admitted("newcomer", at: ticks)) { return ticks }
        }
    }

    /// A call that waits (at most `maxWait` ticks): admitted at once, or queued.
    mutating func wait(_ label: String, weight: Int, maxWait: Int?, at now: Int) -> [Event] {
        if queue.isEmpty, level >= weight * refill {
            level -= weight * refill
            return [.admitted(label, at: now)]
        }
        if maxWait == 0 { return [.gaveUp(label, retryAfter: waitForNewcomer(weight))] }
        queue.append((label, weight, maxWait.map { now + $0 }))
        return []
    }

    /// A waiter's task is cancelled: it leaves the queue, and whoever it held up moves on.
    mutating func cancel(_ label: String, at now: Int) -> [Event] {
        guard let index = queue.firstIndex(where: { $0.label == label }) else { return [] }
        queue.remove(at: index)
        return [.cancelled(label)] + settle(at: now)
    }

    /// The bucket is filled.
    mutating func reset(at now: Int) -> [Event] {
        level = refill * burst
        return settle(at: now)
    }
}
