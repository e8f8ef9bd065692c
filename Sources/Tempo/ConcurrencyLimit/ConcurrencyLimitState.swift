// The state of one concurrency-limited key: how many of its calls run, and who waits, in order.
// A pure value: it holds no clock, no lock and no task, so tests drive it directly. The
// registry applies its transitions under the shard's lock and wakes the waiters they name
// outside it.

/// One key of `concurrencyLimit`: the calls running now and the calls waiting for a slot, first
/// come first served. `Waiter` is what wakes a waiting call (the registry's ``LimitWaiter``; a
/// plain value in tests).
///
/// Rules (the contract of ``Tempo/concurrencyLimit(_:queue:queueTimeout:identifier:fileID:line:column:operation:)``):
/// - A call runs at once when nobody waits and fewer than its `limit` run. Nobody overtakes a
///   waiter: while one waits, a new call waits behind it even if a slot is free for a moment.
/// - Otherwise it waits, when fewer than its `queueLimit` wait and its queue deadline is still
///   ahead; a call that finds the queue full, or whose deadline has already come, is turned away.
/// - A slot that frees goes to the head of the queue in the same transition (``release()``), so
///   no call made meanwhile can take it.
struct ConcurrencyLimitState<Waiter: Sendable>: Sendable {
    /// A call waiting for a slot.
    struct Queued: Sendable {
        let id: UInt64
        /// The caller's limit: it runs once fewer than this many run.
        let limit: Int
        /// When it gives up waiting (`nil`: never).
        let deadline: Duration?
        let waiter: Waiter
    }

    /// What a call gets.
    enum Admission: Sendable, Equatable {
        /// It runs now: it holds a slot until it calls ``release()``.
        case run
        /// It waits, under `id`; its waiter will be named by a later transition.
        case queued(id: UInt64)
        /// Turned away: the queue was full.
        case queueFull(running: Int, queued: Int)
        /// Turned away: it would have to wait, and its queue deadline has already come.
        case timedOut
    }

    /// The calls holding a slot.
    private(set) var running = 0
    /// The waiting calls, first in line at `head`.
    private var queue: [Queued] = []
    private var head = 0
    private var lastID: UInt64 = 0

    /// How many calls wait.
    var queuedCount: Int { queue.count - head }

    /// The waiting calls, first in line first.
    var waiting: ArraySlice<Queued> { queue[head...] }

    /// Nothing runs and nobody waits: the key can leave its table.
    var isIdle: Bool { running == 0 && head == queue.count }

    /// The earliest queue deadline, if any waiter has one.
    var nextDeadline: Duration? {
        var earliest: Duration?
        for call in waiting {
            guard let deadline = call.deadline else { continue }
            if earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
        }
        return earliest
    }

    /// A call arrives at `now` (read only when it would wait with a timeout). `waiter` is made
    /// only for a call that waits.
    mutating func call(
        limit: Int, queueLimit: Int, queueTimeout: Duration?, now: () -> Duration,
        waiter: () -> Waiter
    ) -> Admission {
        if head == queue.count, running < limit {
            running += 1
            return .run
        }
        let queued = queuedCount
        guard queued < queueLimit else { return .queueFull(running: running, queued: queued) }
        var deadline: Duration?
        if let queueTimeout {
            guard queueTimeout > .zero else { return .timedOut }
            deadline = now().adding(queueTimeout)
        }
        lastID &+= 1
        queue.append(Queued(id: lastID, limit: limit, deadline: deadline, waiter: waiter()))
        return .queued(id: lastID)
    }

    /// A running call ended (returned, threw or was cancelled): its slot goes straight to the
    /// head of the queue. Returns the waiters that now run, in queue order (one, unless the
    /// callers passed different limits).
    mutating func release() -> [Waiter] {
        running = max(running - 1, 0)
        // Nobody waits (the usual case): nothing to admit, and the empty queue is left as it is.
        guard head < queue.count else { return [] }
        return admitHeads()
    }

    /// ``release()``, and whether the key is now idle, in one access.
    mutating func releaseAndCheckIdle() -> (admitted: [Waiter], isIdle: Bool) {
        let admitted = release()
        return (admitted, isIdle)
    }

    /// The waiter `id` leaves the queue (its task was cancelled). Returns it, `nil` when it no
    /// longer waits, and the waiters behind it that run now that it has gone.
    mutating func withdraw(_ id: UInt64) -> (removed: Waiter?, admitted: [Waiter]) {
        guard let index = queue[head...].firstIndex(where: { $0.id == id }) else {
            return (nil, [])
        }
        let removed = queue.remove(at: index).waiter
        return (removed, admitHeads())
    }

    /// The clock reached `now`: every waiter whose deadline has come leaves the queue.
    mutating func expire(at now: Duration) -> (expired: [Waiter], admitted: [Waiter]) {
        var expired: [Waiter] = []
        var kept: [Queued] = []
        for call in waiting {
            if let deadline = call.deadline, deadline <= now {
                expired.append(call.waiter)
            } else {
                kept.append(call)
            }
        }
        guard !expired.isEmpty else { return ([], []) }
        queue = kept
        head = 0
        return (expired, admitHeads())
    }

    /// Empties the queue (reset): returns every waiter, in order. Running calls keep their slots.
    mutating func removeWaiters() -> [Waiter] {
        defer {
            queue = []
            head = 0
        }
        return waiting.map(\.waiter)
    }

    /// Admits waiters from the head while their limit allows.
    private mutating func admitHeads() -> [Waiter] {
        var admitted: [Waiter] = []
        while head < queue.count, running < queue[head].limit {
            admitted.append(queue[head].waiter)
            running += 1
            head += 1
        }
        if head == queue.count {
            queue.removeAll(keepingCapacity: queue.count <= 64)
            head = 0
        } else if head >= 32, head * 2 >= queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return admitted
    }
}
