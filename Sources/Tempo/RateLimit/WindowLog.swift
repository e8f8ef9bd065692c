/// The starts a window-limited key remembers: runs of starts at one instant, oldest first, at
/// most `permits` starts in all (an older one can never decide an admission again), and none
/// that has left the window once ``expire(at:span:)`` has run; and the starts admitted that are
/// not recorded yet (``inFlight``).
///
/// A start is recorded at the instant its operation starts, not at its admission, or, for an
/// operation the limit wraps, at the instant that operation ends: a waiter admitted by the
/// key's timer resumes later (its task must be scheduled, its actor free), and a service counts
/// the request when it arrives, which can be any instant before the operation returns. Until
/// it is recorded a start is in flight: it counts in every window from the admission on, as if
/// it started at each instant asked about, so it never leaves a window before it is recorded
/// (``begin(_:)``, ``complete(_:at:permits:)``).
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
    /// The starts admitted and not recorded yet (their operations have not started, or, for an
    /// operation the limit wraps, not ended): in every window until they are recorded.
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
    /// until it is recorded).
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

    /// Counts `weight` starts admitted that are not recorded yet.
    mutating func begin(_ weight: Int) {
        inFlight += weight
    }

    /// Gives back `weight` starts in flight that will never be made.
    mutating func cancel(_ weight: Int) {
        inFlight -= min(weight, inFlight)
    }

    /// Records `weight` starts in flight at `now` (as ``record(_:at:permits:)``): the instant
    /// their operation started, or the instant it ended.
    mutating func complete(_ weight: Int, at now: Duration, permits: Int) {
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

    /// Forgets the starts recorded (a reset); those in flight stay, until their operations
    /// start or end and record them, or their calls give them back.
    mutating func removeRecorded() {
        runs = []
        head = 0
        total = 0
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
