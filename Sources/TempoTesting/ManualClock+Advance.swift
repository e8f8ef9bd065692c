import Tempo

// Moving a `ManualClock`: advancing it, and waiting for the work its timers started to settle
// (saying so when that work does not).

extension ManualClock {
    /// Moves the clock forward by `duration`, firing everything that comes due on the way, in
    /// deadline order. Zero or negative does nothing but let due work run.
    ///
    /// As ``advance(to:)``: when it returns, every timer that came due has fired, at its own
    /// deadline, and the work those timers started has finished or is asleep on this clock.
    /// What that covers, inside operations too, is listed in the TestingWithManualClock
    /// article.
    ///
    /// ```swift
    /// await TempoRegistry(clock: clock).withCurrent {
    ///     debounce(.milliseconds(300), by: .taskContext) { results.append("query") }
    ///     await clock.advance(by: .milliseconds(300))   // the debounced call has run
    /// }
    /// ```
    ///
    /// - Parameter duration: How far to move the clock.
    public func advance(by duration: Duration) async {
        await advance(to: now.advanced(by: max(duration, .zero)))
    }

    /// Moves the clock to `deadline` (never backwards), firing everything that comes due on the
    /// way, in deadline order, at its own deadline. Returns once the timers have fired and the
    /// work they started has finished or is asleep on this clock, as has work already running
    /// when it was called (a flushed call, a call run at once). Inside an operation a timer
    /// started, Tempo work of this clock the operation awaits — an awaited debounce or throttle
    /// call, a hedge, the `value` of a `delay`, `execute`, debounce, throttle or `repeat` task
    /// it started, a rate-limit or concurrency-limit wait, a retry's wait — counts as the
    /// operation asleep until it hands the operation its outcome (a task-returning call: from
    /// the call until its task has run, awaited or not). Inside `timeout`, the operation counts
    /// as asleep only when it itself sleeps on this clock; reaching the deadline waits until
    /// the caller has `TimeoutError` in hand.
    ///
    /// ```swift
    /// await clock.advance(to: ManualClock.Instant(offset: .seconds(30)))
    /// ```
    ///
    /// A timer fires once at an instant: one that asks to fire again at that instant or
    /// earlier ends there. So at the clock's last instant, where time cannot pass and every
    /// later deadline saturates to it, each timer due fires once and the advance returns.
    ///
    /// - Parameter deadline: Where to move the clock; an instant already passed fires what is
    ///   due and leaves the clock where it is.
    public func advance(to deadline: Instant) async {
        // Work started before this call (an operation a call ran at once on another actor)
        // runs at the time it was started, not after the clock has moved on.
        await settle()
        while true {
            let due = state.withLock { state -> [Entry]? in
                guard
                    let next = state.entries.values.min(by: {
                        ($0.deadline, $0.order) < ($1.deadline, $1.order)
                    }),
                    next.deadline <= deadline.offset
                else {
                    if deadline.offset > state.now { state.moves &+= 1 }
                    state.now = max(state.now, deadline.offset)
                    return nil
                }
                state.moves &+= 1
                state.now = max(state.now, next.deadline)
                let now = state.now
                var due: [Entry] = []
                for (id, entry) in state.entries where entry.deadline <= now {
                    due.append(entry)
                    state.entries[id] = nil
                    if case .sleeper(_, let token?) = entry.waiter { unparkLocked(&state, token) }
                }
                due.sort { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
                return due
            }
            guard let due else { break }
            let now = state.withLock { $0.now }
            for entry in due {
                switch entry.waiter {
                case .timer(let fire):
                    // A timer fires once at an instant: one that asks to fire again at `now`
                    // or earlier ends, or at the last instant it would fire for ever.
                    if let next = fire(now), next > now {
                        state.withLock { state in
                            state.entries[entry.order] = Entry(
                                deadline: next, order: entry.order, waiter: entry.waiter)
                        }
                    }
                case .sleeper(let continuation, _):
                    continuation.resume()
                }
            }
            await settle()
        }
        await settle()
    }

    /// Advances from one deadline to the next until nothing is left to fire, or until
    /// `limit` has passed, whichever comes first. A repeating timer would otherwise never let
    /// it stop.
    ///
    /// It settles as ``advance(to:)`` does: it first waits for work already running (a flushed
    /// call, a call run at once), even when no timer is left, and returns once the work the
    /// timers started has finished or is asleep on this clock. The clock stops at the last
    /// deadline it fired, not at `limit`.
    ///
    /// ```swift
    /// await TempoRegistry(clock: clock).withCurrent {
    ///     delay(.seconds(5), by: .taskContext) { save() }
    ///     await clock.runUntilIdle()   // the clock reads 5 s more, and the delay has run
    /// }
    /// ```
    ///
    /// - Parameter limit: How far past the current time deadlines may still be fired.
    ///   Defaults to 365 days.
    public func runUntilIdle(limit: Duration = .seconds(86_400 * 365)) async {
        let end = now.advanced(by: limit)
        // Work already running (a call flushed or run at once) is waited for first, as
        // `advance(by: .zero)` does, even when no timer is left.
        await settle()
        while let next = state.withLock({ $0.entries.values.map(\.deadline).min() }),
            next <= end.offset
        {
            await advance(to: Instant(offset: next))
        }
    }

    /// Suspends until at least `count` sleepers wait on this clock: Tempo timers, or tasks
    /// asleep in ``sleep(until:tolerance:)``. Use it to let a task reach its next sleep before
    /// advancing.
    ///
    /// It returns at once when enough sleepers already wait. It never gives up: a task that
    /// never sleeps on this clock leaves it waiting.
    ///
    /// ```swift
    /// let call = Task {
    ///     try await retry(2, every: .seconds(1), clock: clock) { try await ping() }
    /// }
    /// await clock.waitForSleepers(1)   // the first attempt failed; the retry waits
    /// await clock.advance(by: .seconds(1))
    /// ```
    ///
    /// - Parameter count: How many sleepers to wait for, at least. Defaults to 1.
    public func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.entries.count >= count { return true }
                state.sleeperWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Waits until every piece of work started by a timer has finished or sleeps on this clock.
    ///
    /// Work that neither finishes nor sleeps on the clock (it awaits something only the test
    /// could give, off the clock) would keep an advance waiting for ever: after
    /// ``stuckReportDelay`` of real time the wait says so, once, with what is pending, and goes
    /// on waiting.
    private func settle() async {
        await Task.yield()
        let settled = StartedFlag()
        let ready = state.withLock { $0.activeWork.isEmpty }
        if !ready { watch(settled) }
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.activeWork.isEmpty { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
        settled.set()
    }

    /// How long an advance waits for work that does not settle before it says so.
    static let stuckReportDelay: Duration = .seconds(5)

    /// Prints what is pending if `settled` is not set after ``stuckReportDelay``.
    private func watch(_ settled: StartedFlag) {
        Task.detached(priority: .utility) { [weak self] in
            try? await ContinuousClock().sleep(for: Self.stuckReportDelay)
            guard !settled.isSet, let self else { return }
            print(
                """
                [TempoTesting] ManualClock: an advance has waited \(Self.stuckReportDelay) of \
                real time for work that neither finishes nor sleeps on the clock (an operation a \
                timer started, or a task started with start(_:), awaiting something off the \
                clock). It goes on waiting.
                \(self.pendingReport)
                """)
        }
    }

    /// How many times the clock has moved or fired a timer so far.
    var moveCount: UInt64 { state.withLock { $0.moves } }

    /// What is pending on this clock, in words: its time, its timers and sleepers, the work it
    /// waits for, and what the registries built on it hold.
    var pendingReport: String {
        let (now, deadlines, active, parked, registries) = state.withLock { state in
            (
                state.now, state.entries.values.map(\.deadline).sorted(), state.activeWork.count,
                state.parkCounts.count, state.registries.compactMap(\.registry)
            )
        }
        var lines = ["The clock reads \(now)."]
        if let next = deadlines.first {
            let count =
                deadlines.count == 1
                ? "1 timer or sleeper waits" : "\(deadlines.count) timers or sleepers wait"
            lines.append("\(count); the next is due at \(next) (in \(next - now)).")
        } else {
            lines.append("No timer or sleeper waits on it.")
        }
        lines.append("Work the clock tracks: \(active) running, \(parked) asleep on the clock.")
        for registry in registries {
            let snapshot = registry.snapshot()
            if snapshot.isEmpty { continue }
            lines.append("Live in a registry on this clock:")
            lines += snapshot.description.split(separator: "\n").map { "  " + $0 }
        }
        return lines.joined(separator: "\n")
    }
}
