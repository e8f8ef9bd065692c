import Synchronization

/// How a `repeat` loop waits for its next tick.
///
/// On an ordinary clock the loop's task sleeps until the tick. On a deterministic clock
/// (`TempoTesting.ManualClock`) the tick is armed as a clock timer *before* the loop's current
/// work is finished, and the timer hands the loop a work token when it fires, so advancing the
/// clock runs every tick that comes due, one after the other, and returns only when the loop is
/// waiting again: `advance(by: .seconds(5))` runs five one-second iterations.
final class TickWaiter: Sendable {
    private struct State {
        var deadline: Duration = .zero
        var timer: UInt64?
        var fired = false
        var token: SettleToken?
        var waiter: CheckedContinuation<SettleToken?, any Error>?
        var cancelled = false
        var hold: UInt64?
    }

    private let clock: EngineClock
    private let state = Lock(State())

    init(_ clock: EngineClock) {
        self.clock = clock
    }

    /// Sets the next tick. On a deterministic clock this registers the timer now, so an
    /// advance that starts after this call sees it.
    func arm(at deadline: Duration) {
        guard let host = clock.host else {
            state.withLock { $0.deadline = deadline }
            return
        }
        let id = host.scheduleTimer(at: deadline) { [self] _ in
            fire()
            return nil
        }
        let stale = state.withLock { state -> Bool in
            if state.cancelled { return true }
            // The timer may already have fired (an advance on another task): `fired` stays.
            state.timer = id
            return false
        }
        if stale { host.cancelTimer(id) }
    }

    /// For a loop that runs at once: on a deterministic clock, makes an advance that starts
    /// before that first run is over wait for it (a timer due now, whose firing makes the
    /// advance settle), so the run happens at the call's time, not after the clock has moved.
    func holdAdvances(at now: Duration) {
        guard let host = clock.host else { return }
        let id = host.scheduleTimer(at: now) { _ in nil }
        state.withLock { $0.hold = id }
    }

    /// Ends ``holdAdvances(at:)``.
    func releaseAdvances() {
        guard let host = clock.host, let id = state.withLock({ $0.hold.take() }) else { return }
        host.cancelTimer(id)
    }

    /// Waits for the armed tick; returns the work token to finish once the loop waits again
    /// (`nil` on an ordinary clock). Throws `CancellationError` when the task is cancelled.
    ///
    /// A tick that is already due still gives the executor a turn (`Task.yield()`), so a loop
    /// whose interval is shorter than its iterations never holds a thread of the cooperative
    /// pool for good.
    func wait() async throws -> SettleToken? {
        guard clock.host != nil else {
            let (deadline, stopped) = state.withLock { ($0.deadline, $0.cancelled) }
            if stopped { throw CancellationError() }
            if clock.now() >= deadline {
                await Task.yield()
            } else {
                try await clock.sleep(until: deadline)
            }
            return nil
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Next {
                    case resume(SettleToken?)
                    case cancelled
                    case wait
                }
                let next = state.withLock { state -> Next in
                    if state.cancelled || Task.isCancelled { return .cancelled }
                    if state.fired {
                        state.fired = false
                        defer { state.token = nil }
                        return .resume(state.token)
                    }
                    state.waiter = continuation
                    return .wait
                }
                switch next {
                case .resume(let token): continuation.resume(returning: token)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            stop()
        }
    }

    /// Ends the waiting for good: disarms the tick (and the hold of
    /// ``holdAdvances(at:)``), wakes a waiting loop with `CancellationError`, and finishes
    /// the work token of a tick that fired but was not taken. Later ``arm(at:)`` and
    /// ``wait()`` calls find it stopped. Safe to call more than once, from any task.
    func stop() {
        let (timer, hold, waiter, token) = state.withLock { state in
            state.cancelled = true
            defer {
                state.timer = nil
                state.hold = nil
                state.waiter = nil
                state.token = nil
            }
            return (state.timer, state.hold, state.waiter, state.token)
        }
        if let host = clock.host {
            if let timer { host.cancelTimer(timer) }
            if let hold { host.cancelTimer(hold) }
        }
        waiter?.resume(throwing: CancellationError())
        token?.finish()
    }

    /// The deterministic clock's timer fired: wake the loop, with work the advance waits for.
    private func fire() {
        let token = clock.settleToken()
        let (waiter, unused) = state.withLock {
            state -> (CheckedContinuation<SettleToken?, any Error>?, SettleToken?) in
            state.timer = nil
            if state.cancelled { return (nil, token) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, nil)
            }
            state.fired = true
            state.token = token
            return (nil, nil)
        }
        unused?.finish()
        waiter?.resume(returning: token)
    }
}
