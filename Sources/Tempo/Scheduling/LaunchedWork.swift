import Synchronization

/// The operations a registry has launched and that have not finished yet, and the drains that
/// wait for them.
///
/// Every operation the engine starts in a task of its own (a trailing call's run on its actor, a
/// `Task`-returning call it grants, an awaited call's run and the handover of its outcome) holds
/// a ``SettleToken`` that counts here from its launch until it finishes. An operation that runs
/// in its caller (a leading `.taskContext` call) has finished before the call returns, and is
/// not counted.
///
/// An operation that calls `drain` counts as *draining* while that drain lasts (see
/// ``SettleToken/beginDraining()``): a drain called from an operation does not wait for it,
/// since it is itself waiting for everything else (two operations that each drained would
/// otherwise wait for each other for ever). The two counts share one atomic word, so a drain
/// reads both at one instant; each operation's token makes its changes one at a time, in the
/// order of its own state.
///
/// A drain waits for a *pulse*: a count it waits for falling while a drain is in progress, a
/// timer of the registry firing, an entry cancelled, or the drain's own time limit. Each pulse
/// moves ``Pulses/epoch`` on; a drain reads the epoch before it looks at the registry and sleeps only
/// if no pulse came since, so no pulse between the look and the sleep is lost.
final class LaunchedWork: Sendable {
    /// Operations launched and not yet finished: the low 32 bits count those running and not
    /// draining, the bits above those draining (far more than a process has tasks, either).
    private let operations = Atomic<Int>(0)
    /// One draining operation in ``operations``.
    private static let drainingShift = 32
    private static let drainingUnit = 1 << drainingShift
    private static let runningMask = drainingUnit - 1
    /// Drains in progress.
    private let drains = Atomic<Int>(0)
    private let pulses = Lock<Pulses>(Pulses())

    struct Pulses {
        var epoch: UInt64 = 0
        var sleepers: [Sleeper] = []
    }

    /// A drain asleep until the next pulse, with the work token of its task when a manual
    /// clock tracks that task (it counts as asleep on the clock meanwhile).
    struct Sleeper {
        let continuation: CheckedContinuation<Void, Never>
        let caller: SettleToken?
    }

    /// How many launched operations are still running, draining ones included.
    var runningCount: Int {
        let operations = operations.load(ordering: .sequentiallyConsistent)
        return (operations & Self.runningMask) + (operations >> Self.drainingShift)
    }

    /// How many launched operations are still running and not draining: what a drain waits
    /// for.
    var waitedForCount: Int {
        operations.load(ordering: .sequentiallyConsistent) & Self.runningMask
    }

    func begin() {
        operations.add(1, ordering: .sequentiallyConsistent)
    }

    /// An operation finished; `draining`: while a drain it started was still in progress.
    func end(draining: Bool) {
        operations.subtract(draining ? Self.drainingUnit : 1, ordering: .sequentiallyConsistent)
        pulseIfDraining()
    }

    /// A running operation started draining: drains stop waiting for it.
    func startDraining() {
        operations.add(Self.drainingUnit - 1, ordering: .sequentiallyConsistent)
        pulseIfDraining()
    }

    /// A draining operation's drain ended: it is waited for again, until it finishes.
    func stopDraining() {
        operations.subtract(Self.drainingUnit - 1, ordering: .sequentiallyConsistent)
    }

    /// Sequentially consistent with the drain's own increment and read of `operations`: either
    /// the drain sees this change, or this sees the drain and pulses.
    private func pulseIfDraining() {
        if drains.load(ordering: .sequentiallyConsistent) != 0 { pulse() }
    }

    /// Marks a drain as started; its reads of the registry come after this.
    func beginDrain() {
        drains.add(1, ordering: .sequentiallyConsistent)
    }

    func endDrain() {
        drains.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// The current epoch: read before a drain looks at the registry.
    var epoch: UInt64 { pulses.withLock { $0.epoch } }

    /// Something a drain waits for may have changed: every sleeping drain looks again.
    func pulse() {
        let sleepers = pulses.withLock { pulses -> [Sleeper] in
            pulses.epoch &+= 1
            defer { pulses.sleepers = [] }
            return pulses.sleepers
        }
        for sleeper in sleepers {
            // Running again before it is resumed, so a manual clock's advance that is waiting
            // for its work never sees it neither asleep nor running.
            sleeper.caller?.unpark()
            sleeper.continuation.resume()
        }
    }

    /// Sleeps until the first pulse after `epoch`; returns at once if there was one already.
    /// `caller` (the drain's task's token on a manual clock) counts as asleep meanwhile.
    func sleep(after epoch: UInt64, caller: SettleToken?) async {
        await withCheckedContinuation { continuation in
            // Parked before it is listed: a pulse that takes it from the list unparks it.
            caller?.park()
            let slept = pulses.withLock { pulses -> Bool in
                guard pulses.epoch == epoch else { return false }
                pulses.sleepers.append(Sleeper(continuation: continuation, caller: caller))
                return true
            }
            if !slept {
                caller?.unpark()
                continuation.resume()
            }
        }
    }
}
