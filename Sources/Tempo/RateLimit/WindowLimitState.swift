/// The state of one window-limited key, and its transitions; like ``RateLimitState`` it holds no
/// clock and no task, so tests drive it directly, and it follows the same queue rules.
///
/// A call of weight `w` is admitted at `t` when the starts held in `(t - span, t]`, plus those
/// in flight, plus `w` are at most `permits`. A call admitted as it is made records `w` starts
/// at `t` (it starts its operation at once); a waiter admitted by ``settle(at:)`` puts them in
/// flight, and ``started(_:at:)`` records them when its task resumes to start the operation.
/// A call that wraps an operation (``call(at:ask:untilEnd:)`` with `untilEnd`, and its waiter)
/// holds its starts in flight until the operation ends instead, and ``ended(_:at:)`` records
/// them then: a service counts a request when it arrives, at the latest when the operation
/// returns, so the slot is held until then. Waiters queue first in first out:
/// only the head can be admitted, and a call made while someone waits is not admitted before
/// them, even when its starts would fit.
struct WindowLimitState<Waiter> {
    /// What a call asks for: its weight, and the limit it is measured against.
    struct Ask: Sendable, Hashable {
        /// From 1 to `permits`.
        var weight: Int
        var permits: Int
        var span: Duration
    }

    struct Queued {
        var id: UInt64
        var ask: Ask
        /// When the waiter gives up; `nil`: never.
        var deadline: Duration?
        var waiter: Waiter
    }

    typealias Decision = RateLimitState<Waiter>.Decision
    typealias Settled = RateLimitState<Waiter>.Settled

    private(set) var log = WindowLog()
    /// The limit of the latest call, for the snapshot and for when the key is idle.
    private(set) var permits: Int
    private(set) var span: Duration
    /// The waiters, first in first out.
    private(set) var queue: [Queued] = []
    private var lastID: UInt64 = 0
    /// No start is admitted before this instant (a service's retry-after); `nil`: no hold.
    private(set) var heldUntil: Duration?

    /// A key with nothing in its window.
    init(permits: Int, span: Duration) {
        self.permits = permits
        self.span = span
    }

    /// A call at `now`: admitted at once when nobody waits and they fit, its starts recorded at
    /// `now`, or, with `untilEnd` (it wraps an operation), in flight until ``ended(_:at:)``;
    /// otherwise nothing changes and the answer says how long it would wait.
    mutating func call(at now: Duration, ask: Ask, untilEnd: Bool = false) -> Decision {
        permits = ask.permits
        span = ask.span
        log.expire(at: now, span: ask.span)
        guard queue.isEmpty, !isHeld(at: now) else {
            return .limited(retryAfter: Self.wait(admissionForNewcomer(ask, at: now), now))
        }
        let admission = log.admission(
            weight: ask.weight, permits: ask.permits, span: ask.span, at: now)
        guard admission == now else { return .limited(retryAfter: Self.wait(admission, now)) }
        if untilEnd {
            log.begin(ask.weight)
        } else {
            log.record(ask.weight, at: now, permits: ask.permits)
        }
        return .admitted
    }

    /// How long from `now` until `admission`; `Duration`'s largest value when that is past
    /// the clock's end (never).
    private static func wait(_ admission: Duration?, _ now: Duration) -> Duration {
        admission?.subtracting(now) ?? .saturatedMax
    }

    /// When a call asking `ask` at `now` is admitted if it joins the back of the queue and
    /// nobody ahead gives up; `nil`: past the clock's end.
    func admissionForNewcomer(_ ask: Ask, at now: Duration) -> Duration? {
        var log = log
        var at = max(now, heldUntil ?? now)
        for queued in queue {
            log.expire(at: at, span: queued.ask.span)
            guard
                let admission = log.admission(
                    weight: queued.ask.weight, permits: queued.ask.permits,
                    span: queued.ask.span, at: at)
            else { return nil }
            at = admission
            log.expire(at: at, span: queued.ask.span)
            log.record(queued.ask.weight, at: at, permits: queued.ask.permits)
        }
        log.expire(at: at, span: ask.span)
        return log.admission(weight: ask.weight, permits: ask.permits, span: ask.span, at: at)
    }

    /// Queues a waiter (after ``call(at:ask:)`` said `.limited`); returns its id.
    mutating func enqueue(_ waiter: Waiter, ask: Ask, deadline: Duration?) -> UInt64 {
        lastID &+= 1
        queue.append(Queued(id: lastID, ask: ask, deadline: deadline, waiter: waiter))
        return lastID
    }

    /// The head's admission at `now`, if it is due.
    private mutating func headIsDue(at now: Duration) -> Bool {
        guard let head = queue.first, !isHeld(at: now) else { return false }
        log.expire(at: now, span: head.ask.span)
        let admission = log.admission(
            weight: head.ask.weight, permits: head.ask.permits, span: head.ask.span, at: now)
        return admission == now
    }

    /// The clock reached `now`: admits the head while its starts fit, then lets go of the
    /// waiters whose maximum wait has run out (one admitted at its deadline is admitted), and
    /// again, until nothing changes.
    mutating func settle(at now: Duration) -> Settled {
        var settled = Settled()
        log.expire(at: now, span: span)
        while true {
            while headIsDue(at: now) {
                // In flight until its task resumes and starts the operation (``started``).
                let head = queue.removeFirst()
                log.begin(head.ask.weight)
                settled.admitted.append(head.waiter)
            }
            guard let index = queue.firstIndex(where: { $0.deadline.map { $0 <= now } ?? false })
            else { return settled }
            let expired = queue.remove(at: index)
            let after = Self.wait(admissionForNewcomer(expired.ask, at: now), now)
            settled.expired.append((expired.waiter, after))
        }
    }

    /// A waiter admitted by ``settle(at:)`` starts its operation at `now`: its starts, in flight
    /// since, are recorded at `now`. (A start only moves later, so nobody is admitted by it.)
    mutating func started(_ ask: Ask, at now: Duration) {
        log.complete(ask.weight, at: now, permits: ask.permits)
    }

    /// The operation of a call admitted with `untilEnd` (at once, or as a waiter) ended, returned
    /// or threw, at `now`: its starts, in flight since the admission, are recorded at `now` (or
    /// at the newest instant recorded, if `now` was read before it). A record only moves later,
    /// so nobody is admitted by it.
    mutating func ended(_ ask: Ask, at now: Duration) {
        log.complete(ask.weight, at: now, permits: ask.permits)
    }

    /// A waiter admitted by ``settle(at:)`` was cancelled before its operation started: its
    /// starts, in flight, are given back (with `untilEnd` too: no request was made), and
    /// whoever they held up is admitted.
    mutating func withdrawStart(_ ask: Ask, at now: Duration) -> Settled {
        log.cancel(ask.weight)
        return settle(at: now)
    }

    /// Removes waiter `id` (its task was cancelled), if it still waits, and admits whoever it
    /// held up. `nil` when it no longer waits.
    mutating func withdraw(_ id: UInt64, at now: Duration) -> (Waiter, Settled)? {
        guard let index = queue.firstIndex(where: { $0.id == id }) else { return nil }
        let removed = queue.remove(at: index)
        return (removed.waiter, settle(at: now))
    }

    /// Ends the key: every waiter is let go (returned, to be told). The starts stay counted.
    mutating func removeAll(at now: Duration) -> [Waiter] {
        defer { queue = [] }
        return queue.map(\.waiter)
    }

    /// Empties the window of the starts it recorded at `now`, and admits the waiters it lets
    /// through. Starts in flight keep their slots (an operation still running, a waiter
    /// admitted that has not resumed yet): each is recorded when its operation starts or ends,
    /// as without the reset, so no more than `permits` slots are ever taken.
    mutating func reset(at now: Duration) -> Settled {
        log.removeRecorded()
        heldUntil = nil
        return settle(at: now)
    }

    /// When the timer must wake: with waiters, the head's admission or the first deadline,
    /// whichever is first; with nobody waiting, when the newest start leaves the window (the
    /// key is then idle). `nil` when that is past the clock's end: the key stays, with no
    /// timer. (A key in steady use pushes the instant its window empties back with each call;
    /// the timer armed for the first of them is moved once it fires, not on every call.)
    func wake(at now: Duration) -> Duration? {
        let held = isHeld(at: now) ? heldUntil : nil
        guard let head = queue.first else {
            guard let held else { return log.emptyAt(span: span) }
            return log.emptyAt(span: span).map { max($0, held) } ?? (log.isEmpty ? held : nil)
        }
        var log = log
        log.expire(at: now, span: head.ask.span)
        var wake = log.admission(
            weight: head.ask.weight, permits: head.ask.permits, span: head.ask.span, at: now
        ).map { max($0, held ?? $0) }
        for queued in queue {
            if let deadline = queued.deadline { wake = min(wake ?? deadline, deadline) }
        }
        return wake
    }

    /// Nobody waits and nothing is in the window.
    func isIdle(at now: Duration) -> Bool {
        queue.isEmpty && log.inWindow(at: now, span: span) == 0 && !isHeld(at: now)
    }

    /// Whether a hold keeps every start out at `now`.
    func isHeld(at now: Duration) -> Bool { heldUntil.map { $0 > now } ?? false }

    /// Holds every start until `instant` (a later hold extends it, an earlier one does nothing).
    mutating func hold(until instant: Duration) {
        heldUntil = max(heldUntil ?? instant, instant)
    }

    /// The starts free at `now` (the waiters not counted), by the latest call's limit; none
    /// while held.
    func tokens(at now: Duration) -> Int {
        isHeld(at: now) ? 0 : max(permits - log.inWindow(at: now, span: span), 0)
    }

    /// When the next single start is free, at `now` or later (the waiters not counted);
    /// `Duration`'s largest value when that is past the clock's end.
    func nextPermit(at now: Duration) -> Duration {
        guard permits > 0 else { return .saturatedMax }
        var log = log
        log.expire(at: now, span: span)
        let at = isHeld(at: now) ? heldUntil ?? now : now
        log.expire(at: at, span: span)
        return log.admission(weight: 1, permits: permits, span: span, at: at) ?? .saturatedMax
    }
}

extension WindowLimitState: Sendable where Waiter: Sendable {}
extension WindowLimitState.Queued: Sendable where Waiter: Sendable {}
