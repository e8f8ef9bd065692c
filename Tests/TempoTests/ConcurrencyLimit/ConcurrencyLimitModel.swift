// A reference model of one concurrency limit, written from the contract (the doc comment of
// `concurrencyLimit` and ConcurrencyLimit.md), not from the engine: a list of running calls and
// a list of waiting ones, in milliseconds.

struct ConcurrencyLimitModel {
    /// A call of the schedule: how long its operation sleeps, and its queue timeout.
    struct Call {
        var seconds: Int
        var timeoutMilliseconds: Int?
    }

    let limit: Int
    let queueLimit: Int
    var calls: [Call] = []
    var now = 0
    var running: [(call: Int, endsAt: Int)] = []
    var queue: [(call: Int, deadline: Int?)] = []
    /// "start 3@1000", "end 3@2000".
    var log: [String] = []
    /// How each call ended: "ran", "queueFull", "timedOut", "reset", "cancelled".
    var outcomes: [Int: String] = [:]
    /// What the registry's observer is told, with the instant: "queued 1 2@0" (running and
    /// queued after it), "admitted 1000@1000" (the wait), "refused 1 2@0", "timedOut 500@500".
    var events: [String] = []
    /// When each waiter joined the queue.
    var queuedAt: [Int: Int] = [:]

    init(limit: Int, queueLimit: Int) {
        self.limit = limit
        self.queueLimit = queueLimit
    }

    var counts: (running: Int, queued: Int) { (running.count, queue.count) }

    /// Call `index` arrives now.
    mutating func call(_ index: Int) {
        let call = calls[index]
        if queue.isEmpty, running.count < limit { return start(index) }
        if queue.count >= queueLimit {
            outcomes[index] = "queueFull"
            events.append("refused \(running.count) \(queue.count)@\(now)")
            return
        }
        if let timeout = call.timeoutMilliseconds, timeout <= 0 {
            outcomes[index] = "timedOut"
            events.append("timedOut 0@\(now)")
            return
        }
        queue.append((index, call.timeoutMilliseconds.map { now + $0 }))
        queuedAt[index] = now
        events.append("queued \(running.count) \(queue.count)@\(now)")
    }

    /// The task of call `index` is cancelled: a waiter leaves the queue; a running operation
    /// ends at once (its sleep throws) and its slot goes to the first waiter.
    mutating func cancel(_ index: Int) {
        if let position = queue.firstIndex(where: { $0.call == index }) {
            queue.remove(at: position)
            outcomes[index] = "cancelled"
        } else if let position = running.firstIndex(where: { $0.call == index }) {
            running.remove(at: position)
            outcomes[index] = "cancelled"
        }
        admit()
    }

    /// Every waiter is turned away; running calls go on.
    mutating func reset() {
        for waiter in queue { outcomes[waiter.call] = "reset" }
        queue = []
    }

    /// The clock moves to `end`, instant by instant: deadlines that come pass, operations that
    /// end free their slots for the first waiters.
    mutating func advance(to end: Int) {
        while true {
            let nextEnd = running.map(\.endsAt).min()
            let nextDeadline = queue.compactMap(\.deadline).min()
            guard let next = [nextEnd, nextDeadline].compactMap({ $0 }).min(), next <= end else {
                break
            }
            now = next
            for waiter in queue where waiter.deadline == now {
                outcomes[waiter.call] = "timedOut"
                events.append("timedOut \(now - queuedAt[waiter.call]!)@\(now)")
            }
            queue.removeAll { $0.deadline == now }
            for call in running where call.endsAt == now {
                log.append("end \(call.call)@\(now)")
                outcomes[call.call] = "ran"
            }
            running.removeAll { $0.endsAt == now }
            admit()
        }
        now = end
    }

    private mutating func admit() {
        while !queue.isEmpty, running.count < limit {
            let index = queue.removeFirst().call
            events.append("admitted \(now - queuedAt[index]!)@\(now)")
            start(index)
        }
    }

    private mutating func start(_ index: Int) {
        log.append("start \(index)@\(now)")
        running.append((index, now + calls[index].seconds * 1_000))
    }
}
