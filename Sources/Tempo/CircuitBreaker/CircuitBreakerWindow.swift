// The sliding window of a closed circuit breaker: the outcomes of its last N calls, or of
// its calls of the last T, with their failure count kept as calls come and go.

/// The outcomes a closed breaker judges its failure ratio by. It holds no clock: the caller
/// passes the time of each call and of each reading.
struct CircuitBreakerWindow: Sendable {
    /// At most this many outcomes (a count window); `Int.max` for a time window.
    private let limit: Int
    /// Outcomes older than this leave (a time window); `nil` for a count window.
    private let span: Duration?
    /// The outcomes, oldest at `head`: a ring once a count window is full, a queue whose
    /// front is dropped as it expires for a time window.
    private var failed: [Bool] = []
    private var times: [Duration] = []
    private var head = 0
    /// Outcomes held, and how many of them are failures.
    private(set) var calls = 0
    private(set) var failures = 0
    /// A time window's newest failure: when it ended (kept after it leaves; read only while
    /// `failures` is not zero, when it is still in the window).
    private var newestFailure: Duration = .zero

    init(_ window: CircuitBreakerPolicy.Window) {
        switch window {
        case .lastCalls(let count):
            limit = max(count, 1)
            span = nil
        case .lastDuration(let duration):
            limit = .max
            span = duration
        }
    }

    /// Adds the outcome of a call that ended at `now` (read only by a time window); the
    /// oldest leaves a full count window. Always inlined, as the entry's `record` is.
    @inline(__always)
    mutating func record(failure: Bool, at now: () -> Duration) {
        if span == nil {
            if calls == limit {
                if failed[head] { failures -= 1 }
                failed[head] = failure
                head = head == limit - 1 ? 0 : head + 1
            } else {
                failed.append(failure)
                calls += 1
            }
        } else {
            let now = now()
            expire(at: now)
            failed.append(failure)
            times.append(now)
            calls += 1
            if failure { newestFailure = now }
        }
        if failure { failures += 1 }
    }

    /// Forgets every outcome, keeping the storage (a breaker kept idle, as a new one).
    mutating func forget() {
        // An empty window, the usual case (a fresh breaker's successes are not stored), costs
        // two reads: `removeAll` on an empty array still checks and rebuilds its storage.
        if !failed.isEmpty { failed.removeAll(keepingCapacity: true) }
        if !times.isEmpty { times.removeAll(keepingCapacity: true) }
        head = 0
        calls = 0
        failures = 0
    }

    /// Drops the outcomes of a time window that are `span` or more old at `now`.
    mutating func expire(at now: Duration) {
        guard let span else { return }
        let oldest = now.subtracting(span)
        while head < times.count, times[head] <= oldest {
            if failed[head] { failures -= 1 }
            calls -= 1
            head += 1
        }
        if head == times.count {
            failed.removeAll(keepingCapacity: true)
            times.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64, head * 2 > times.count {
            failed.removeFirst(head)
            times.removeFirst(head)
            head = 0
        }
    }

    /// When the newest failure of a time window leaves it, and the window holds no failure
    /// again: `nil` for a count window (its outcomes never leave by age) and for a window with
    /// no failure.
    var failureFreeAt: Duration? {
        guard let span, failures > 0 else { return nil }
        return newestFailure.adding(span)
    }

    /// The calls and failures in the window at `now`, without changing it (for the snapshot).
    func counts(at now: Duration) -> (calls: Int, failures: Int) {
        guard let span else { return (calls, failures) }
        let oldest = now.subtracting(span)
        var calls = self.calls
        var failures = self.failures
        var index = head
        while index < times.count, times[index] <= oldest {
            calls -= 1
            if failed[index] { failures -= 1 }
            index += 1
        }
        return (calls, failures)
    }
}
