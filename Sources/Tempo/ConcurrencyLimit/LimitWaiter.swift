/// A call of `concurrencyLimit` waiting in a key's queue, and how it learns its fate.
///
/// The engine decides (``decide(_:token:)``), under no lock of its own, after the shard's lock
/// is released; the waiting task waits (``wait()``). The decision may come before the task has
/// started waiting: it is kept until it does.
final class LimitWaiter: Sendable {
    /// Why the waiting ended.
    enum Verdict: Sendable {
        /// A slot is the call's: it runs and must release the slot when it ends.
        case admitted
        /// Its queue timeout passed.
        case timedOut
        /// The key was reset.
        case reset
        /// Its task was cancelled.
        case cancelled
    }

    private enum State {
        case undecided
        case waiting(CheckedContinuation<(Verdict, SettleToken?), Never>)
        case decided(Verdict, SettleToken?)
        case done
    }

    private let state = Lock<State>(.undecided)

    /// The work token of the waiting task, when a deterministic clock tracks it: parked while
    /// the call waits, unparked when it is decided.
    let callerToken: SettleToken?
    /// When the call joined the queue, on the registry's clock, if someone observed the
    /// registry then: its admission or timeout is reported with the wait.
    let queuedAt: Duration?

    init(callerToken: SettleToken?, queuedAt: Duration? = nil) {
        self.callerToken = callerToken
        self.queuedAt = queuedAt
    }

    /// The engine's decision. `token` is new work the task must finish when the call ends (on
    /// a deterministic clock, for a task that carried no token of its own).
    func decide(_ verdict: Verdict, token: SettleToken?) {
        let waiter = state.withLock {
            state -> CheckedContinuation<(Verdict, SettleToken?), Never>? in
            switch state {
            case .undecided:
                state = .decided(verdict, token)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .decided, .done:
                return nil
            }
        }
        waiter?.resume(returning: (verdict, token))
    }

    /// Waits for the decision.
    func wait(isolation: isolated (any Actor)? = #isolation) async -> (Verdict, SettleToken?) {
        await withCheckedContinuation(isolation: isolation) { continuation in
            let decided = state.withLock { state -> (Verdict, SettleToken?)? in
                if case .decided(let verdict, let token) = state {
                    state = .done
                    return (verdict, token)
                }
                state = .waiting(continuation)
                return nil
            }
            if let decided { continuation.resume(returning: decided) }
        }
    }
}
