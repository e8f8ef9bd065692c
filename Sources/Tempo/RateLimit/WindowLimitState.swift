/// The starts a window-limited key remembers: runs of starts at one instant, oldest first, at
/// most `permits` starts in all (an older one can never decide an admission again), and none
/// that has left the window once ``expire(at:span:)`` has run; and the starts admitted whose
/// operations have not started yet (``inFlight``).
///
/// A start is recorded at the instant its operation starts, not at its admission: a waiter
/// admitted by the key's timer resumes later (its task must be scheduled, its actor free), and
/// a service counts the request when it arrives. Between the two its starts are in flight:
/// they count in every window from the admission on, as if they started at each instant
/// asked about, so they never leave a window before they are recorded (``begin(_:)``,
/// ``start(_:at:permits:)``).
struct WindowLog: Sendable {
    struct Run: Sendable {
        var at: Duration
        var count: Int
    }

    /// The runs; those before `head` are dropped, kept until compaction.
    private var runs: [Run] = []
    private var head = 0
    /// The starts held, in all runs from `head`.
    private(set) var total = 0
    /// Nothing is held and nothing is in flight.
    var isEmpty: Bool { total == 0 && inFlight == 0 }
    /// The starts admitted whose operations have not started: in every window until they do.
    private(set) var inFlight = 0

    /// Whether a start at `at` has left a window of `span` by `now`: `at + span <= now`, exact
    /// at both ends of `Duration`'s range (no sum is formed, so nothing saturates).
    static func hasLeft(_ at: Duration, span: Duration, by now: Duration) -> Bool {
        let (gap, overflow) = now.attoseconds.subtractingReportingOverflow(at.attoseconds)
        // A gap beyond Int128's range is beyond any span when `now` is the later instant.
        if overflow { return now.attoseconds > at.attoseconds }
        return gap >= span.attoseconds
    }

    /// The instant the newest start leaves a window of `span`; `nil` when that is past the
    /// clock's end, when nothing is held, or while a start is in flight (no instant is known
    /// until it starts).
    func emptyAt(span: Duration) -> Duration? {
        guard total > 0, inFlight == 0, let last = runs.last else { return nil }
        return Self.leaves(last.at, span: span)
    }

    /// `at + span`, or `nil` when that is past the end of `Duration`'s range.
    static func leaves(_ at: Duration, span: Duration) -> Duration? {
        let (sum, overflow) = at.attoseconds.addingReportingOverflow(span.attoseconds)
        return overflow ? nil : Duration(attoseconds: sum)
    }

    /// The starts held that are still in a window of `span` at `now`, those in flight included.
    func inWindow(at now: Duration, span: Duration) -> Int {
        var count = total + inFlight
        var index = head
        while index < runs.count, Self.hasLeft(runs[index].at, span: span, by: now) {
            count -= runs[index].count
            index += 1
        }
        return count
    }

    /// Drops the starts that have left a window of `span` by `now`.
    mutating func expire(at now: Duration, span: Duration) {
        while head < runs.count, Self.hasLeft(runs[head].at, span: span, by: now) {
            total -= runs[head].count
            head += 1
        }
        compact()
    }

    /// When `weight` more starts fit, at most `permits` in any window of `span`, from `now` on
    /// (the log expired at `now`): `now` when they fit now, the instant the start that is in
    /// the way leaves otherwise, `nil` when that is past the clock's end. `weight` is from 1
    /// to `permits`. A start in flight that is in the way is taken as starting at `now` (the
    /// earliest it can): the answer is then an estimate, made exact when it starts.
    func admission(weight: Int, permits: Int, span: Duration, at now: Duration) -> Duration? {
        // The starts that must leave first: held + in flight + weight - permits, without
        // overflow (each term is at most `permits`).
        var excess = total + inFlight - (permits - weight)
        guard excess > 0 else { return now }
        guard excess <= total else { return Self.leaves(now, span: span) }
        var index = head
        while excess > runs[index].count {
            excess -= runs[index].count
            index += 1
        }
        guard let leaves = Self.leaves(runs[index].at, span: span) else { return nil }
        return max(leaves, now)
    }

    /// Counts `weight` starts admitted whose operations have not started yet.
    mutating func begin(_ weight: Int) {
        inFlight += weight
    }

    /// Gives back `weight` starts in flight that will not start (after ``removeAll()``,
    /// nothing is in flight: nothing changes).
    mutating func cancel(_ weight: Int) {
        inFlight -= min(weight, inFlight)
    }

    /// Records `weight` starts in flight as started at `now` (as ``record(_:at:permits:)``).
    /// After ``removeAll()`` nothing is in flight: the starts are recorded all the same.
    mutating func start(_ weight: Int, at now: Duration, permits: Int) {
        inFlight -= min(weight, inFlight)
        record(weight, at: now, permits: permits)
    }

    /// Records `weight` starts at `now` (or at the newest start held, if a caller's clock read
    /// came before it: instants stay in order), and keeps at most `permits`.
    mutating func record(_ weight: Int, at now: Duration, permits: Int) {
        if head < runs.count, runs[runs.count - 1].at >= now {
            runs[runs.count - 1].count += weight
        } else {
            runs.append(Run(at: now, count: weight))
        }
        total += weight
        var over = total - permits
        while over > 0 {
            let dropped = min(over, runs[head].count)
            runs[head].count -= dropped
            total -= dropped
            over -= dropped
            if runs[head].count == 0 { head += 1 }
        }
        compact()
    }

    mutating func removeAll() {
        runs = []
        head = 0
        total = 0
        inFlight = 0
    }

    /// Removes the dropped runs once they are most of the array, so that memory stays within
    /// twice the runs held (and a call costs amortized constant time).
    private mutating func compact() {
        if head == runs.count {
            if head > 0 { runs.removeAll(keepingCapacity: runs.capacity <= 64) }
            head = 0
        } else if head > 32, head * 2 > runs.count {
            runs.removeFirst(head)
            head = 0
        }
    }

    /// The runs held (for tests): instants and counts, oldest first.
    var held: [Run] { Array(runs[head...]) }
}

/// The state of one window-limited key, and its transitions; like ``RateLimitState`` it holds no
/// clock and no task, so tests drive it directly, and it follows the same queue rules.
///
/// A call of weight `w` is admitted at `t` when the starts held in `(t - span, t]`, plus those
/// in flight, plus `w` are at most `permits`. A call admitted as it is made records `w` starts
/// at `t` (it starts its operation at once); a waiter admitted by ``settle(at:)`` puts them in
/// flight, and ``started(_:at:)`` records them when its task resumes to start the operation. Waiters queue first in first out:
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

    /// A call at `now`: admitted at once (and its starts recorded) when nobody waits and they
    /// fit; otherwise nothing changes and the answer says how long it would wait.
    mutating func call(at now: Duration, ask: Ask) -> Decision {
        permits = ask.permits
        span = ask.span
        log.expire(at: now, span: ask.span)
        guard queue.isEmpty, !isHeld(at: now) else {
            return .limited(retryAfter: Self.wait(admissionForNewcomer(ask, at: now), now))
        }
        let admission = log.admission(
            weight: ask.weight, permits: ask.permits, span: ask.span, at: now)
        guard admission == now else { return .limited(retryAfter: Self.wait(admission, now)) }
        log.record(ask.weight, at: now, permits: ask.permits)
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
        log.start(ask.weight, at: now, permits: ask.permits)
    }

    /// A waiter admitted by ``settle(at:)`` was cancelled before its operation started: its
    /// starts, in flight, are given back, and whoever they held up is admitted.
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

    /// Empties the window at `now`, and admits the waiters it lets through.
    mutating func reset(at now: Duration) -> Settled {
        log.removeAll()
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
