import Synchronization
import Tempo

/// A clock that moves only when a test moves it, so timing code can be tested without
/// sleeping and without flakiness.
///
/// Build a ``Tempo/TempoRegistry`` on it and make that registry current: the free functions
/// (`debounce`, `throttle`, `delay`, `execute`, `sleep`) then run on this clock.
/// ``advance(by:)`` is deterministic for Tempo's scheduled work: when it returns, every timer
/// that came due has fired, in deadline order, and every operation it started has finished (or
/// is itself asleep on this clock). Inside such an operation, Tempo work of this clock that it
/// awaits (an awaited debounce or throttle call, a hedge, a nested `delay`'s `value`, a limiter's
/// wait, a retry's wait) counts as the operation asleep until that work hands it its outcome.
///
/// ```swift
/// @Test func searchRunsOnceAfterTyping() async {
///     let clock = ManualClock()
///     let registry = TempoRegistry(clock: clock)
///     let queries = Queries()
///     await registry.withCurrent {
///         for text in ["s", "sw", "swi"] {
///             debounce(.milliseconds(300), by: .taskContext) { queries.append(text) }
///             await clock.advance(by: .milliseconds(100))
///         }
///         await clock.advance(by: .milliseconds(300))
///     }
///     #expect(queries.all == ["swi"])
/// }
/// ```
///
/// `repeat` is driven by ``advance(by:)`` alone, like debounce and throttle. `retry`,
/// `timeout`, `time`, `sleep`, and any code that sleeps on the clock directly
/// (`try await clock.sleep(for:)`) run in their caller's task: ``advance(by:)`` resumes them but
/// does not wait for what they do next. Start such work in a task and call
/// ``waitForSleepers(_:)`` before each advance:
///
/// ```swift
/// let call = Task {
///     try await retry(3, every: .seconds(1), clock: clock) { try await api.ping() }
/// }
/// await clock.waitForSleepers(1)      // the first attempt failed; the retry waits
/// await clock.advance(by: .seconds(1))
/// ```
///
/// Its ``minimumResolution`` is one nanosecond, so arithmetic that divides by a clock's
/// resolution stays finite.
public final class ManualClock: Clock, Sendable {
    private enum Waiter {
        case timer(@Sendable (Duration) -> Duration?)
        case sleeper(CheckedContinuation<Void, any Error>, parked: SettleToken?)
    }

    private struct Entry {
        var deadline: Duration
        var order: UInt64
        var waiter: Waiter
    }

    private struct State {
        var now: Duration
        var entries: [UInt64: Entry] = [:]
        var lastID: UInt64 = 0
        var activeWork: Set<UInt64> = []
        /// How many waits each parked piece of work is in (a sleep on this clock, or Tempo work
        /// of this clock it waits for): it is active again only once none is left.
        var parkCounts: [UInt64: Int] = [:]
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// Tasks waiting for one piece of work to settle (``start(_:)``), by its identifier.
        var workWaiters: [UInt64: [CheckedContinuation<Void, Never>]] = [:]
        /// How many times the clock has moved or fired: a stuck test is one where this stays.
        var moves: UInt64 = 0
        /// The registries built on this clock, for the report of a stuck test.
        var registries: [WeakRegistry] = []
        var sleeperWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        mutating func nextID() -> UInt64 {
            lastID &+= 1
            return lastID
        }

        /// Resumes the tasks waiting for enough sleepers; returns them to resume outside the lock.
        mutating func takeSatisfiedSleeperWaiters() -> [CheckedContinuation<Void, Never>] {
            let count = entries.count
            var ready: [CheckedContinuation<Void, Never>] = []
            sleeperWaiters.removeAll { waiter in
                guard count >= waiter.count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
    }

    private let state: Lock<State>

    /// A clock reading `now`, zero by default. It moves only when ``advance(by:)``,
    /// ``advance(to:)`` or ``runUntilIdle(limit:)`` moves it.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let registry = TempoRegistry(clock: clock)
    /// ```
    ///
    /// - Parameter now: The clock's first reading. Defaults to the origin, offset zero.
    public init(now: Instant = Instant(offset: .zero)) {
        state = Lock(State(now: now.offset))
    }

    /// The current time: where the last advance left the clock.
    ///
    /// ```swift
    /// await clock.advance(by: .seconds(1))
    /// let offset = clock.now.offset   // one second more than before
    /// ```
    public var now: Instant { Instant(offset: state.withLock { $0.now }) }

    /// One nanosecond.
    ///
    /// ```swift
    /// let resolution = clock.minimumResolution   // .nanoseconds(1)
    /// ```
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many sleepers wait: Tempo timers and tasks asleep on this clock.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// TempoRegistry(clock: clock).withCurrent {
    ///     debounce(.seconds(1), by: .taskContext) { save() }
    /// }
    /// let waiting = clock.sleeperCount   // 1: the debounce group's timer
    /// ```
    public var sleeperCount: Int { state.withLock { $0.entries.count } }

    /// Suspends until `deadline`, or throws `CancellationError` when the task is cancelled.
    ///
    /// The sleeper wakes when an advance reaches `deadline`, in deadline order with the
    /// clock's timers; a deadline already reached returns at once. Work Tempo started on this
    /// clock (an operation a timer ran) counts as settled while it sleeps here, so an advance
    /// does not wait for it.
    ///
    /// ```swift
    /// let wake = clock.now.advanced(by: .seconds(1))
    /// let sleeper = Task { try await clock.sleep(until: wake) }
    /// await clock.waitForSleepers(1)
    /// await clock.advance(by: .seconds(1))   // wakes it
    /// ```
    ///
    /// - Parameters:
    ///   - deadline: The instant to wake at.
    ///   - tolerance: Ignored: a manual clock wakes its sleepers exactly at their deadline.
    /// - Throws: `CancellationError` when the task is cancelled before the deadline is reached
    ///   (a cancelled task whose deadline has come returns instead).
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { $0.nextID() }
        let token = SettleToken.current(of: self)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome {
                    case due, cancelled
                    case asleep([CheckedContinuation<Void, Never>])
                }
                let outcome = state.withLock { state -> Outcome in
                    if deadline.offset <= state.now { return .due }
                    if Task.isCancelled { return .cancelled }
                    state.entries[id] = Entry(
                        deadline: deadline.offset, order: id,
                        waiter: .sleeper(continuation, parked: token))
                    var waiters = state.takeSatisfiedSleeperWaiters()
                    if let token { waiters += parkLocked(&state, token) }
                    return .asleep(waiters)
                }
                switch outcome {
                case .due: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .asleep(let waiters): for waiter in waiters { waiter.resume() }
                }
            }
        } onCancel: {
            let entry = state.withLock { state -> Entry? in
                guard let entry = state.entries.removeValue(forKey: id) else { return nil }
                if case .sleeper(_, let token?) = entry.waiter { unparkLocked(&state, token) }
                return entry
            }
            if case .sleeper(let continuation, _)? = entry?.waiter {
                continuation.resume(throwing: CancellationError())
            }
        }
    }

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
                    if let next = fire(now) {
                        state.withLock { state in
                            state.entries[entry.order] = Entry(
                                deadline: max(next, now), order: entry.order, waiter: entry.waiter)
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

    /// Work asleep on this clock counts as settled: `advance` must not wait for it, or an
    /// operation that sleeps on the clock would wait for an advance that waits for it.
    private func parkLocked(_ state: inout State, _ token: SettleToken)
        -> [CheckedContinuation<Void, Never>]
    {
        if token.isFinished { return [] }
        state.parkCounts[token.id, default: 0] += 1
        return settledLocked(&state, token.id)
    }

    /// Work `id` settled (ended, or parked in a sleep): when none is left, the waiters of
    /// `settle()` go on.
    private func settledLocked(_ state: inout State, _ id: UInt64)
        -> [CheckedContinuation<Void, Never>]
    {
        state.activeWork.remove(id)
        let forThis = state.workWaiters.removeValue(forKey: id) ?? []
        guard state.activeWork.isEmpty else { return forThis }
        defer { state.idleWaiters = [] }
        return forThis + state.idleWaiters
    }

    /// Waits until the work `id` has finished or is asleep on this clock.
    func waitUntilSettled(_ id: UInt64) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if !state.activeWork.contains(id) { return true }
                state.workWaiters[id, default: []].append(continuation)
                return false
            }
            if ready { continuation.resume() }
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

    /// One wait of the parked work has ended: once it is in none, and has not ended, `advance`
    /// waits for it once more.
    private func unparkLocked(_ state: inout State, _ token: SettleToken) {
        guard let count = state.parkCounts[token.id] else { return }
        if count > 1 {
            state.parkCounts[token.id] = count - 1
            return
        }
        state.parkCounts[token.id] = nil
        if !token.isFinished { state.activeWork.insert(token.id) }
    }
}

extension ManualClock: DeterministicClock {
    package var offset: Duration { state.withLock { $0.now } }

    package func scheduleTimer(
        at deadline: Duration, _ fire: @escaping @Sendable (Duration) -> Duration?
    ) -> UInt64 {
        let (id, waiters) = state.withLock {
            state -> (UInt64, [CheckedContinuation<Void, Never>]) in
            let id = state.nextID()
            state.entries[id] = Entry(deadline: deadline, order: id, waiter: .timer(fire))
            return (id, state.takeSatisfiedSleeperWaiters())
        }
        for waiter in waiters { waiter.resume() }
        return id
    }

    package func attach(_ registry: TempoRegistry) {
        state.withLock { state in
            state.registries.removeAll { $0.registry == nil }
            state.registries.append(WeakRegistry(registry))
        }
    }

    package func cancelTimer(_ id: UInt64) {
        state.withLock { _ = $0.entries.removeValue(forKey: id) }
    }

    package func openSettleToken() -> UInt64 {
        state.withLock { state in
            let id = state.nextID()
            state.activeWork.insert(id)
            return id
        }
    }

    package func closeSettleToken(_ id: UInt64) {
        let waiters = state.withLock { state in
            state.parkCounts[id] = nil
            return settledLocked(&state, id)
        }
        for waiter in waiters { waiter.resume() }
    }

    package func park(_ work: SettleToken) {
        let waiters = state.withLock { parkLocked(&$0, work) }
        for waiter in waiters { waiter.resume() }
    }

    package func unpark(_ work: SettleToken) {
        state.withLock { unparkLocked(&$0, work) }
    }
}

/// A registry built on a manual clock, held weakly: the clock names what it holds when a test
/// is stuck, and never keeps it alive.
final class WeakRegistry: Sendable {
    weak let registry: TempoRegistry?

    init(_ registry: TempoRegistry) { self.registry = registry }
}
