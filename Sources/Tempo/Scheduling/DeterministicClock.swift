import Synchronization

/// A clock that lets Tempo's engine hand it timers and report the work they start, so that
/// advancing it is deterministic. `TempoTesting.ManualClock` is the one conformer.
///
/// Timers are callbacks, not sleeping tasks: the clock calls `fire` while it is being advanced,
/// on the advancing task, once its time reaches the deadline. `fire` gets the clock's time and
/// returns the next deadline to call it again at, or `nil` when the timer is done; a deadline
/// not later than the time it got ends the timer too, so that a timer at the clock's last
/// instant fires once there, not for ever.
package protocol DeterministicClock: AnyObject, Sendable {
    /// The time elapsed since the clock's origin.
    var offset: Duration { get }
    /// Registers a timer; returns an identifier for ``cancelTimer(_:)``.
    func scheduleTimer(at deadline: Duration, _ fire: @escaping @Sendable (Duration) -> Duration?)
        -> UInt64
    /// Removes a timer that has not fired yet; does nothing for an unknown identifier.
    func cancelTimer(_ id: UInt64)
    /// Marks the start of work that an advance must wait for.
    func openSettleToken() -> UInt64
    /// Marks the end of work started with ``openSettleToken()``.
    func closeSettleToken(_ id: UInt64)
    /// Counts started work as asleep while it waits for work that is (a turn on `TempoActor`
    /// held by an operation asleep on the clock): an advance does not wait for it.
    func park(_ work: SettleToken)
    /// Counts parked work as running again, unless it has ended.
    func unpark(_ work: SettleToken)
    /// A registry was built on this clock (the clock may hold it weakly, to say what is
    /// pending when a test is stuck).
    func attach(_ registry: TempoRegistry)
}

extension DeterministicClock {
    package func park(_ work: SettleToken) {}
    package func unpark(_ work: SettleToken) {}
    package func attach(_ registry: TempoRegistry) {}
}

/// Work started by a timer of a ``DeterministicClock`` (an operation on another actor, or the
/// task behind a `Task`-returning call). Advancing the clock waits until every token is
/// finished or parked in a sleep on that clock.
///
/// A token of an operation the engine launched also counts in its registry's
/// ``LaunchedWork`` (on any clock: on an ordinary one the token has no `host`), which is what a
/// drain waits for.
package final class SettleToken: Sendable {
    package let host: (any DeterministicClock)?
    /// The identifier ``DeterministicClock/openSettleToken()`` gave this work (0 without a
    /// host).
    package let id: UInt64
    /// The registry's count of launched work this token is part of, if any.
    let work: LaunchedWork?
    private let finished = Atomic<Bool>(false)

    /// The work the current task is doing, if a deterministic clock tracks it.
    @TaskLocal package static var current: SettleToken?

    package init(host: any DeterministicClock) {
        self.host = host
        self.id = host.openSettleToken()
        self.work = nil
    }

    /// Work a registry launched: counted in `work`, and tracked by `host` when there is one.
    init(host: (any DeterministicClock)?, work: LaunchedWork) {
        self.host = host
        self.id = host?.openSettleToken() ?? 0
        self.work = work
        work.begin()
    }

    /// Ends the work; later calls do nothing.
    package func finish() {
        if !finished.exchange(true, ordering: .acquiringAndReleasing) {
            host?.closeSettleToken(id)
            work?.end()
        }
    }

    /// Whether ``finish()`` has been called.
    package var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// The current task's token when it is work of `host` still running (the task runs an
    /// operation the engine launched on that clock); `nil` on an ordinary clock (`host` is
    /// `nil`) or for a task no token of `host` tracks.
    package static func current(of host: (any DeterministicClock)?) -> SettleToken? {
        guard let host, let token = current, token.host === host, !token.isFinished else {
            return nil
        }
        return token
    }

    /// See ``DeterministicClock/park(_:)``.
    func park() { host?.park(self) }

    /// See ``DeterministicClock/unpark(_:)``.
    func unpark() { host?.unpark(self) }
}
