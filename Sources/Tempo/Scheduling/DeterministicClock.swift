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
    /// ``finishedBit``, ``busyBit``, and above them how many drains of `work`'s registry are
    /// in progress in this work's tasks (see ``beginDraining()``).
    private let state = Atomic<Int>(0)
    private static let finishedBit = 1
    /// A drain's start or end is changing `work`'s counts: the next waits, and a ``finish()``
    /// meanwhile leaves its own change to the one in progress, so the counts change in the
    /// order the state did.
    private static let busyBit = 2
    private static let drainUnit = 4

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
        let old = state.bitwiseOr(Self.finishedBit, ordering: .acquiringAndReleasing).oldValue
        guard old & Self.finishedBit == 0 else { return }
        host?.closeSettleToken(id)
        // A drain starting or ending here counts the end once it has changed the counts.
        guard old & Self.busyBit == 0 else { return }
        // Finished while a drain it started goes on (in a task that inherited the token): it
        // leaves the draining count, and that drain's end changes nothing.
        work?.end(draining: old >= Self.drainUnit)
    }

    /// Whether ``finish()`` has been called.
    package var isFinished: Bool {
        state.load(ordering: .acquiring) & Self.finishedBit != 0
    }

    /// A drain of `work`'s registry starts in this work: from then until ``endDraining()`` the
    /// operation counts as draining (``LaunchedWork/waitedForCount``). Returns `false`, and
    /// changes nothing, when the work has finished.
    func beginDraining() -> Bool {
        guard let old = claim(adding: Self.drainUnit, unlessFinished: true) else { return false }
        // The first drain in progress here: the operation moves to the draining count.
        if old < Self.drainUnit { work?.startDraining() }
        release(claimed: old)
        return true
    }

    /// The drain that ``beginDraining()`` announced has ended: the operation counts as
    /// running again when it was the last and the operation has not finished.
    func endDraining() {
        guard let old = claim(adding: -Self.drainUnit, unlessFinished: false) else { return }
        if old == Self.drainUnit { work?.stopDraining() }
        release(claimed: old)
    }

    /// Adds `delta` to the drains and sets ``busyBit``, once no other start or end is busy;
    /// returns the state before, or `nil` when `unlessFinished` and the work has finished.
    private func claim(adding delta: Int, unlessFinished: Bool) -> Int? {
        var old = state.load(ordering: .acquiring)
        while true {
            if unlessFinished, old & Self.finishedBit != 0 { return nil }
            if old & Self.busyBit != 0 {
                // Another task of this work is between the two steps of its own change, an
                // atomic addition (and a pulse) away from its end.
                old = state.load(ordering: .acquiring)
                continue
            }
            let (exchanged, seen) = state.compareExchange(
                expected: old, desired: (old + delta) | Self.busyBit,
                ordering: .acquiringAndReleasing)
            if exchanged { return old }
            old = seen
        }
    }

    /// Clears ``busyBit``; counts the work's end if it finished meanwhile.
    private func release(claimed: Int) {
        let old = state.bitwiseAnd(~Self.busyBit, ordering: .acquiringAndReleasing).oldValue
        if claimed & Self.finishedBit == 0, old & Self.finishedBit != 0 {
            work?.end(draining: old >= Self.drainUnit)
        }
    }

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
