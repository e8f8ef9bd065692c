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
/// // In a test:
/// let clock = ManualClock()
/// let registry =
///     TempoRegistry(clock: clock)
/// let queries = Queries()
/// let typed = ["s", "sw", "swi"]
/// await registry.withCurrent {
///     for text in typed {
///         debounce(
///             .milliseconds(300),
///             by: .taskContext
///         ) { queries.append(text) }
///         await clock.advance(
///             by: .milliseconds(100)
///         )
///     }
///     await clock.advance(
///         by: .milliseconds(300)
///     )
/// }
/// #expect(queries.all == ["swi"])
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
    enum Waiter {
        case timer(@Sendable (Duration) -> Duration?)
        case sleeper(CheckedContinuation<Void, any Error>, parked: SettleToken?)
    }

    struct Entry {
        var deadline: Duration
        var order: UInt64
        var waiter: Waiter
    }

    struct State {
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

    let state: Lock<State>

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
}
