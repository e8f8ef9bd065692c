// The state of one circuit breaker and its transitions: pure `mutating` functions of the
// time, the caller's policy and a call's outcome, that hold no clock and start nothing.

/// One circuit breaker: closed (counting outcomes in its window), open (until `reopensAt`,
/// or until closed by hand when that is `nil`) or half-open (running its trial calls). (Named
/// as every helper's state machine is, `…State`, short of the public ``CircuitBreakerState``,
/// which is which of those three it is in.)
///
/// Every change of state starts a new epoch. A call is admitted in an epoch and its outcome
/// counts only if the breaker is still in that epoch when it ends: a call admitted while
/// closed that ends after the breaker opened (or was reset) counts for nothing.
///
/// A breaker leaves its registry (``isFresh``) when it is closed, no call admitted in its
/// current epoch is still running (its outcome would count), and its window holds no failure.
/// Successes alone never open a breaker: one that leaves forgets them, and the next call makes
/// a new one, with a new id, with an empty window, which needs the minimum calls again
/// before it can open, as any new breaker. A failure keeps it until the failure leaves the
/// window: a time window's ages out (the breaker's one timer wakes then), a count window's is
/// pushed out by later outcomes (or the breaker opens). Open and half-open breakers stay.
struct BreakerState: Sendable {
    /// How a call ended, for the breaker.
    enum Outcome: Sendable, Equatable {
        case success, failure
        /// Neither: the call was cancelled, or threw an error the policy ignores (one of
        /// Tempo's refusals, say). It is not recorded; a trial frees its slot.
        case ignored
    }

    /// What a call found.
    enum Admission: Sendable, Equatable {
        /// Run the operation, then report its outcome in this epoch.
        case run(epoch: UInt64)
        /// Do not run: the breaker is open (a trial in `retryAfter`, `nil`: not known).
        case rejected(retryAfter: Duration?)
    }

    /// A change of state, and whom to tell, carried out after the lock.
    struct Change: Sendable {
        var old: CircuitBreakerState
        var new: CircuitBreakerState
        var callback: (@Sendable (CircuitBreakerState, CircuitBreakerState) -> Void)?

        func notify() { callback?(old, new) }
    }

    private(set) var state: CircuitBreakerState = .closed
    private(set) var epoch: UInt64 = 0
    /// This breaker's id: unique to it in its registry (a breaker made again under the same
    /// key has a new one), so a call admitted by one that left or was reset counts for nothing
    /// in its successor.
    private(set) var id: UInt64
    private(set) var window: CircuitBreakerWindow
    private var shape: CircuitBreakerPolicy.Window
    /// While open: when the break ends; `nil` when it was opened by hand.
    private(set) var reopensAt: Duration?
    /// The latest break, which a failed trial doubles (when the policy lets it grow); `nil`
    /// once closed.
    private(set) var lastBreak: Duration?
    /// While closed: the calls admitted in this epoch that have not ended.
    private(set) var callsRunning = 0
    /// While half-open: trial calls running, and trial calls that succeeded.
    private(set) var trialsRunning = 0
    private(set) var trialsSucceeded = 0
    /// The state-change callback of the latest policy seen.
    private var callback: (@Sendable (CircuitBreakerState, CircuitBreakerState) -> Void)?

    init(window: CircuitBreakerPolicy.Window, id: UInt64) {
        self.window = CircuitBreakerWindow(window)
        shape = window
        self.id = id
    }

    /// `id`, read in place (as `Slot.timerGenerationInPlace`, without copying the entry).
    var idInPlace: UInt64 { mutating get { id } }

    /// Closed, no call of this epoch running and no failure in the window: it leaves, and a
    /// call made later finds a new breaker. Time window failures that have aged but are still
    /// stored count (``isIdle(at:)`` ages them first).
    var isFresh: Bool { state == .closed && callsRunning == 0 && window.failures == 0 }

    /// `isFresh`, read in place (as `idInPlace`).
    var isFreshInPlace: Bool { mutating get { isFresh } }

    /// When the breaker's timer must wake: when a closed breaker's time window holds no
    /// failure again.
    var nextWake: Duration? { state == .closed ? window.failureFreeAt : nil }

    /// A fresh breaker becomes a new one, with the id `newID`, in place: its successes, its
    /// callback and its calls of earlier states are forgotten, as if it had left and been made
    /// again (its window's storage is kept, so a breaker used one call at a time allocates
    /// nothing).
    mutating func forget(newID: UInt64) {
        id = newID
        epoch &+= 1
        window.forget()
        callback = nil
    }

    /// Forgets the outcomes of the time window that have aged at `now`.
    mutating func age(at now: Duration) { window.expire(at: now) }

    /// A call at `now` under `policy`: it runs (closed, or a free trial slot) or is rejected.
    /// An open breaker whose break is over turns half-open first (`change`). The clock is read
    /// only when the breaker is open.
    mutating func admit(
        at now: () -> Duration, policy: CircuitBreakerPolicy, change: inout Change?
    ) -> Admission {
        callback = policy.onStateChange
        if shape != policy.window {
            shape = policy.window
            window = CircuitBreakerWindow(shape)
        }
        switch state {
        case .closed:
            callsRunning += 1
            return .run(epoch: epoch)
        case .open:
            guard let reopensAt else { return .rejected(retryAfter: nil) }
            let now = now()
            guard reopensAt <= now else { return .rejected(retryAfter: reopensAt - now) }
            change = move(to: .halfOpen)
            return admitTrial(policy)
        case .halfOpen:
            return admitTrial(policy)
        }
    }

    private mutating func admitTrial(_ policy: CircuitBreakerPolicy) -> Admission {
        guard trialsRunning + trialsSucceeded < policy.trialCalls else {
            return .rejected(retryAfter: nil)
        }
        trialsRunning += 1
        return .run(epoch: epoch)
    }

    /// The call admitted in `epoch` ended at `now` with `outcome`. The clock is read only for
    /// a time window or a change of state. Always inlined into the registry's one caller: as a
    /// call of its own, the clock reading its closure shares with the window is boxed on the
    /// heap every time.
    @inline(__always)
    mutating func record(
        _ outcome: Outcome, epoch: UInt64, at now: () -> Duration, policy: CircuitBreakerPolicy
    ) -> Change? {
        guard epoch == self.epoch else { return nil }
        switch state {
        case .closed:
            callsRunning -= 1
            guard outcome != .ignored else { return nil }
            // A success that leaves the breaker fresh is not stored: a success never opens
            // a breaker, and the registry makes a fresh one new at once (its `settle`),
            // forgetting its window. Storing it cost a closed breaker's every call (the
            // "`circuitBreaker`, through a closed breaker" row).
            if outcome == .success, isFresh { return nil }
            var read: Duration?
            window.record(failure: outcome == .failure) {
                if let read { return read }
                read = now()
                return read!
            }
            guard window.calls >= policy.requiredCalls,
                Double(window.failures) / Double(window.calls) >= policy.failureRatio
            else { return nil }
            return open(at: read ?? now(), for: policy.nextBreak(after: nil))
        case .halfOpen:
            trialsRunning -= 1
            switch outcome {
            case .ignored:
                return nil
            case .failure:
                return open(at: now(), for: policy.nextBreak(after: lastBreak))
            case .success:
                trialsSucceeded += 1
                return trialsSucceeded >= policy.trialCalls ? close() : nil
            }
        case .open:
            return nil
        }
    }

    /// Opens for `duration` from `now` (`nil`: until closed by hand).
    mutating func open(at now: Duration, for duration: Duration?) -> Change? {
        let old = state
        reopensAt = duration.map { now.adding($0) }
        lastBreak = duration ?? lastBreak
        return move(to: .open, from: old)
    }

    /// Closes: the window starts empty and the next break is the policy's first.
    mutating func close() -> Change? {
        lastBreak = nil
        reopensAt = nil
        return move(to: .closed)
    }

    /// Enters `new` in a new epoch; a change only when the state is not `old` already.
    private mutating func move(
        to new: CircuitBreakerState, from old: CircuitBreakerState? = nil
    ) -> Change? {
        let old = old ?? state
        state = new
        epoch &+= 1
        callsRunning = 0
        trialsRunning = 0
        trialsSucceeded = 0
        window = CircuitBreakerWindow(shape)
        return old == new ? nil : Change(old: old, new: new, callback: callback)
    }

    /// The state a call made at `now` would find, as the snapshot shows it: the calls and
    /// failures of the window (closed), the trial calls admitted (half-open), or when the
    /// break ends (open).
    func reading(at now: Duration) -> (
        state: CircuitBreakerState, failures: Int, calls: Int, reopensAt: Duration?
    ) {
        switch state {
        case .closed:
            let counts = window.counts(at: now)
            return (.closed, counts.failures, counts.calls, nil)
        case .open:
            if let reopensAt, reopensAt <= now { return (.halfOpen, 0, 0, nil) }
            return (.open, 0, 0, reopensAt)
        case .halfOpen:
            return (.halfOpen, 0, trialsRunning + trialsSucceeded, nil)
        }
    }
}
