import Synchronization

/// A clock that lets Tempo's engine hand it timers and report the work they start, so that
/// advancing it is deterministic. `TempoTesting.ManualClock` is the one conformer.
///
/// Timers are callbacks, not sleeping tasks: the clock calls `fire` while it is being advanced,
/// on the advancing task, once its time reaches the deadline. `fire` gets the clock's time and
/// returns the next deadline to call it again at, or `nil` when the timer is done.
package protocol DeterministicClock: AnyObject, Sendable {
    /// The time elapsed since the clock's origin.
    var offset: Duration { get }
    /// Registers a timer; returns an identifier for ``cancelTimer(_:)``.
    func scheduleTimer(at deadline: Duration, _ fire: @escaping @Sendable (Duration) -> Duration?)
        -> UInt64
    /// Removes a timer that has not fired yet; does nothing for an unknown identifier.
    func cancelTimer(_ id: UInt64)
    /// Marks the start of work that an advance must wait for.
    func beginWork() -> UInt64
    /// Marks the end of work started with ``beginWork()``.
    func endWork(_ id: UInt64)
    /// Counts started work as asleep while it waits for work that is (a turn on `TempoActor`
    /// held by an operation asleep on the clock): an advance does not wait for it.
    func park(_ work: WorkToken)
    /// Counts parked work as running again, unless it has ended.
    func unpark(_ work: WorkToken)
}

extension DeterministicClock {
    package func park(_ work: WorkToken) {}
    package func unpark(_ work: WorkToken) {}
}

/// Work started by a timer of a ``DeterministicClock`` (an operation on another actor, or the
/// task behind a `Task`-returning call). Advancing the clock waits until every token is
/// finished or parked in a sleep on that clock.
package final class WorkToken: Sendable {
    package let host: any DeterministicClock
    /// The identifier ``DeterministicClock/beginWork()`` gave this work.
    package let id: UInt64
    private let finished = Atomic<Bool>(false)

    /// The work the current task is doing, if a deterministic clock tracks it.
    @TaskLocal package static var current: WorkToken?

    init(host: any DeterministicClock) {
        self.host = host
        self.id = host.beginWork()
    }

    /// Ends the work; later calls do nothing.
    package func finish() {
        if !finished.exchange(true, ordering: .acquiringAndReleasing) { host.endWork(id) }
    }

    /// Whether ``finish()`` has been called.
    package var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// See ``DeterministicClock/park(_:)``.
    func park() { host.park(self) }

    /// See ``DeterministicClock/unpark(_:)``.
    func unpark() { host.unpark(self) }
}

/// A timer armed by the engine: an entry of the registry's ``TimerDriver`` on an ordinary clock,
/// or a callback held by a deterministic clock.
enum TimerRef: Sendable {
    case driver(TimerDriver, UInt64)
    case manual(any DeterministicClock, UInt64)

    func cancel() {
        switch self {
        case .driver(let driver, let id): driver.cancel(id)
        case .manual(let host, let id): host.cancelTimer(id)
        }
    }
}

/// The engine's view of a clock: time as a `Duration` since the clock's origin, sleeping in
/// bounded steps, and timers.
struct EngineClock: Sendable {
    /// The longest single sleep handed to the underlying clock. Longer waits are made of steps
    /// of this size, so no deadline passed to a clock can overflow its instant arithmetic.
    static let maximumStep: Duration = .seconds(3_600)

    let now: @Sendable () -> Duration
    private let sleepStep: @Sendable (Duration) async throws -> Void
    let host: (any DeterministicClock)?
    /// The timers, on an ordinary clock.
    let driver: TimerDriver?

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        if let host = clock as? any DeterministicClock {
            // Deterministic clocks take timers at their own offsets, so the engine reads them.
            // The instant at offset zero, reached in two halves so that no step overflows even
            // when the clock starts at an extreme offset; an offset `d` is then `d` after it.
            let originOffset = host.offset
            let half = originOffset / 2
            let zero = origin.advanced(by: .zero.subtracting(half))
                .advanced(by: .zero.subtracting(originOffset.subtracting(half)))
            self.host = host
            driver = nil
            now = { host.offset }
            sleepStep = { try await clock.sleep(until: zero.advanced(by: $0), tolerance: nil) }
        } else {
            let now: @Sendable () -> Duration = { origin.duration(to: clock.now) }
            let sleepStep: @Sendable (Duration) async throws -> Void = {
                try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil)
            }
            self.now = now
            self.sleepStep = sleepStep
            host = nil
            driver = TimerDriver(now: now, sleep: sleepStep)
        }
    }

    /// Sleeps until `deadline` (an offset from the origin). Throws `CancellationError` when the
    /// task is cancelled. Any deadline is safe, `Duration`'s largest included.
    func sleep(until deadline: Duration) async throws {
        while true {
            let current = now()
            if current >= deadline { return }
            try await sleepStep(min(deadline, current.adding(Self.maximumStep)))
        }
    }

    /// Arms a timer at `deadline`. `fire` runs once the deadline has passed and returns the next
    /// deadline to wake for, or `nil` to end the timer. Re-arming to a later deadline through
    /// the return value costs no new task and no new timer.
    func startTimer(at deadline: Duration, _ fire: @escaping @Sendable (Duration) -> Duration?)
        -> TimerRef
    {
        if let host { return .manual(host, host.scheduleTimer(at: deadline, fire)) }
        return .driver(driver!, driver!.schedule(at: deadline, fire))
    }

    /// Starts tracked work when the clock is deterministic.
    func beginWork() -> WorkToken? {
        host.map { WorkToken(host: $0) }
    }
}
