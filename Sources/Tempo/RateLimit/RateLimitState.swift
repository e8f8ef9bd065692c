/// The state of one rate-limited key, and its transitions; like ``ThrottleState`` it holds no
/// clock and no task, so tests drive it directly.
///
/// It is a GCRA bucket: `fullAt` is the instant the bucket is full again (at or before now:
/// full). A call of cost `c` (its weight times the refill of one permit) against a bucket of
/// tolerance `τ` (the burst times the refill) is admitted at `t` when
/// `max(fullAt, t) + c - t <= τ`, and then moves `fullAt` to `max(fullAt, t) + c`. So a call
/// is admitted at once when `fullAt - (τ - c) <= now`, and otherwise at exactly that instant.
///
/// `fullAt` is kept as the bucket's debt at an instant: how long after `base` it is full. At
/// the top of `Duration`'s range the bucket may be full only past the last representable
/// instant; the debt still says how far, so the bound holds there as anywhere (an absolute
/// `fullAt` would saturate at the maximum and call the bucket full). `RateLimit.bucket` keeps
/// `τ` within half of `Duration`'s range, so a debt, at most `τ`, never saturates; the instants
/// worked out from it (a wake, the next permit) do, at the end of the range.
///
/// Waiters queue first in first out: only the head can be admitted, and a call made while
/// someone waits is not admitted before them, even when its permit is free.
struct RateLimitState<Waiter> {
    /// What a call asks for, in time: the permits it takes and the bucket it is measured against.
    struct Ask: Sendable, Hashable {
        /// The call's weight times the refill of one permit.
        var cost: Duration
        /// The room the bucket must have left after the call: `τ - c`, the burst less the
        /// weight, times the refill.
        var room: Duration

        /// `weight` from 1 to `burst`, and `refill × burst` within `Duration`'s range (as
        /// `RateLimit` caps the burst): neither product can overflow.
        init(weight: Int, burst: Int, refill: Duration) {
            cost = Duration(attoseconds: refill.attoseconds &* Int128(weight))
            room = Duration(attoseconds: refill.attoseconds &* Int128(burst - weight))
        }

        /// How long after now a call asking this is admitted against a bucket whose debt is
        /// `debt` (full `debt` after now).
        func wait(debt: Duration) -> Duration {
            max(debt.subtracting(room), .zero)
        }
    }

    struct Queued {
        var id: UInt64
        var ask: Ask
        /// When the waiter gives up; `nil`: never.
        var deadline: Duration?
        var waiter: Waiter
    }

    /// The instant the bucket's debt was last worked out at.
    private var base: Duration
    /// How long after `base` the bucket is full again: zero or more, at most the whole bucket
    /// or, after a hold, the hold plus a bucket less one permit (both at most half the range).
    private var ahead: Duration = .zero
    /// The refill and burst of the latest call, for the snapshot.
    private(set) var refill: Duration
    private(set) var burst: Int
    /// `refill × burst`: the time a whole bucket takes to refill.
    private var whole: Duration
    /// The waiters, first in first out.
    private(set) var queue: [Queued] = []
    private var lastID: UInt64 = 0

    /// The instant the bucket is full again (saturating at the end of the range; for tests).
    var fullAt: Duration { base.adding(ahead) }

    /// A full bucket at `now`.
    init(now: Duration, refill: Duration, burst: Int) {
        base = now
        self.refill = refill
        self.burst = burst
        whole = Duration(attoseconds: refill.attoseconds &* Int128(burst))
    }

    /// What a call found.
    enum Decision: Equatable {
        case admitted
        /// Not admitted: a call made now would wait this long (the waiters ahead counted).
        case limited(retryAfter: Duration)
    }

    /// A call at `now`: admitted at once (and the bucket debited) when nobody waits and its
    /// permits are free; otherwise nothing changes and the answer says how long it would wait.
    /// Always inlined, as are the steps of its admitted path: as calls of their own they made
    /// the admitted `takeRatePermit` an eighth dearer (the "admitted" rate-limit row).
    @inline(__always)
    mutating func call(at now: Duration, ask: Ask, refill: Duration, burst: Int) -> Decision {
        self.refill = refill
        self.burst = burst
        whole = Duration(attoseconds: ask.cost.attoseconds &+ ask.room.attoseconds)
        guard queue.isEmpty else {
            return .limited(retryAfter: waitForNewcomer(ask, at: now))
        }
        // Nobody waits: the call's own admission decides (the common case, kept short).
        // (As attosecond counts: one subtraction without an overflow check, and one compare.)
        let owed = debt(at: now)
        let over = owed.attoseconds &- ask.room.attoseconds
        guard over <= 0 else { return .limited(retryAfter: Duration(attoseconds: over)) }
        take(ask, debt: owed, at: now)
        return .admitted
    }

    /// How long after `now` the bucket is full: zero when it is full.
    @inline(__always)
    func debt(at now: Duration) -> Duration {
        // Both are within the range, and `ahead` at most half of it: `ahead - elapsed` (at
        // least `-ahead` wherever it does not saturate) is exact when positive.
        let owed = ahead.subtracting(now.subtracting(base))
        return owed.attoseconds > 0 ? owed : .zero
    }

    /// Debits `ask` from a bucket that owes `debt` at `now` (its admission is due).
    @inline(__always)
    private mutating func take(_ ask: Ask, debt: Duration, at now: Duration) {
        base = now
        ahead = Duration(attoseconds: debt.attoseconds &+ ask.cost.attoseconds)
    }

    /// How long after `now` a call asking `ask` at `now` is admitted if it joins the back of
    /// the queue and nobody ahead gives up.
    func waitForNewcomer(_ ask: Ask, at now: Duration) -> Duration {
        // Both measured from now: when the one ahead is admitted, and the bucket's debt then.
        var owed = debt(at: now)
        var at = Duration.zero
        for queued in queue {
            at = max(at, owed.subtracting(queued.ask.room))
            owed = max(owed, at).adding(queued.ask.cost)
        }
        return max(at, owed.subtracting(ask.room))
    }

    /// Queues a waiter at `now` (after ``call(at:ask:refill:burst:)`` said `.limited`);
    /// returns its id, for ``withdraw(_:at:)``.
    mutating func enqueue(_ waiter: Waiter, ask: Ask, deadline: Duration?) -> UInt64 {
        lastID &+= 1
        queue.append(Queued(id: lastID, ask: ask, deadline: deadline, waiter: waiter))
        return lastID
    }

    /// What a step of time (or a withdrawal, or a reset) decided for the waiters.
    struct Settled {
        var admitted: [Waiter] = []
        /// Waiters whose maximum wait ran out, with the wait a call of their weight made then
        /// would face.
        var expired: [(waiter: Waiter, retryAfter: Duration)] = []

        var isEmpty: Bool { admitted.isEmpty && expired.isEmpty }
    }

    /// The clock reached `now`: admits the head while its permits are free, then lets go of
    /// the waiters whose maximum wait has run out (a waiter admitted at its deadline is
    /// admitted), and again, until nothing changes.
    mutating func settle(at now: Duration) -> Settled {
        var settled = Settled()
        while true {
            while let head = queue.first, head.ask.wait(debt: debt(at: now)) == .zero {
                take(head.ask, debt: debt(at: now), at: now)
                settled.admitted.append(queue.removeFirst().waiter)
            }
            guard let index = queue.firstIndex(where: { $0.deadline.map { $0 <= now } ?? false })
            else { return settled }
            let expired = queue.remove(at: index)
            let after = waitForNewcomer(expired.ask, at: now)
            settled.expired.append((expired.waiter, after))
        }
    }

    /// Removes waiter `id` (its task was cancelled), if it still waits, and admits whoever it
    /// held up. `nil` when it no longer waits (it was admitted or let go already).
    mutating func withdraw(_ id: UInt64, at now: Duration) -> (Waiter, Settled)? {
        guard let index = queue.firstIndex(where: { $0.id == id }) else { return nil }
        let removed = queue.remove(at: index)
        return (removed.waiter, settle(at: now))
    }

    /// Ends the key: every waiter is let go (returned, to be told), the bucket is full.
    mutating func removeAll(at now: Duration) -> [Waiter] {
        defer {
            queue = []
            fill(at: now)
        }
        return queue.map(\.waiter)
    }

    /// Fills the bucket at `now`, and admits the waiters it lets through.
    mutating func reset(at now: Duration) -> Settled {
        fill(at: now)
        return settle(at: now)
    }

    /// The bucket is full at `now`.
    private mutating func fill(at now: Duration) {
        base = now
        ahead = .zero
    }

    /// When the timer must wake at `now`: with waiters, the head's admission or the first
    /// deadline, whichever is first. With nobody waiting the timer only removes the key once its
    /// bucket is full, and lazily: at the latest a whole bucket's refill after now. A key in
    /// steady use keeps its bucket just short of full, so the instant it is full keeps moving;
    /// a lazy timer is pushed back once per refill of the bucket, not once per call. At the end
    /// of the range the instant saturates: at the maximum it is the maximum, which is now.
    func wake(at now: Duration) -> Duration {
        let owed = debt(at: now)
        guard let head = queue.first else {
            return now.adding(owed.attoseconds > whole.attoseconds ? owed : whole)
        }
        var wake = now.adding(owed.subtracting(head.ask.room))
        for queued in queue { if let deadline = queued.deadline { wake = min(wake, deadline) } }
        return wake
    }

    /// Nobody waits and the bucket is full.
    func isIdle(at now: Duration) -> Bool { queue.isEmpty && debt(at: now) == .zero }

    /// The permits free at `now` (the waiters not counted), by the latest call's limit.
    func tokens(at now: Duration) -> Int {
        let free = refill.saturatingMultiplied(by: burst).subtracting(debt(at: now))
        guard free > .zero else { return 0 }
        return Int(clamping: free.attoseconds / refill.attoseconds)
    }

    /// Holds every permit until `instant` (a service's retry-after), decided at `now`: no call
    /// is admitted before it, and at that instant the bucket has one permit (the rest refill
    /// from there). A hold that ends sooner than the bucket's own debt changes nothing. The
    /// debt it leaves is capped at half of `Duration`'s range, as a whole bucket is, so that it
    /// never saturates (a hold of billions of years is no different from a longer one).
    mutating func hold(until instant: Duration, at now: Duration) {
        let held = instant.subtracting(now).adding(whole.subtracting(refill))
        let capped = Duration(attoseconds: min(held.attoseconds, Int128.max / 2))
        guard capped.attoseconds > debt(at: now).attoseconds else { return }
        base = now
        ahead = capped
    }

    /// When the next single permit is free, at `now` or later (the waiters not counted).
    func nextPermit(at now: Duration) -> Duration {
        now.adding(Ask(weight: 1, burst: burst, refill: refill).wait(debt: debt(at: now)))
    }
}

extension RateLimitState: Sendable where Waiter: Sendable {}
extension RateLimitState.Queued: Sendable where Waiter: Sendable {}
extension RateLimitState.Settled: Sendable where Waiter: Sendable {}
