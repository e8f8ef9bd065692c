/// Where a hedged call's attempts, its timer and its cancellation report to the caller's task,
/// which waits on it between events. Each event may carry the settle token of the work that
/// sent it: the caller finishes that token once it has acted on the event (started the next
/// attempt, or decided the outcome), so a manual clock's advance waits for that reaction too.
final class HedgeMailbox<Value: Sendable>: Sendable {
    enum Event: Sendable {
        /// Attempt `attempt` ended.
        case finished(attempt: Int, Result<Value, any Error>, SettleToken?)
        /// The timer armed as number `generation` fired.
        case hedgeDue(generation: UInt64, SettleToken?)
        /// The caller was cancelled.
        case cancelled

        /// The settle token the event carries, if any.
        var token: SettleToken? {
            switch self {
            case .finished(_, _, let token), .hedgeDue(_, let token): token
            case .cancelled: nil
            }
        }
    }

    private struct State {
        var events: [Event] = []
        var head = 0
        var waiter: CheckedContinuation<Event, Never>?
        /// The caller's work token, parked while the caller waits (see ``next(parking:)``).
        var parked: SettleToken?
        var closed = false
    }

    private let state = Lock(State())

    /// Hands `event` to the caller; after ``close()`` drops it and finishes its token.
    func post(_ event: Event) {
        let (waiter, parked) = state.withLock {
            state -> (CheckedContinuation<Event, Never>??, SettleToken?) in
            if state.closed { return (.none, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                defer { state.parked = nil }
                return (.some(waiter), state.parked)
            }
            state.events.append(event)
            return (.some(nil), nil)
        }
        // The caller runs again before the work that posted the event can end.
        parked?.unpark()
        switch waiter {
        case .none: Self.finishToken(of: event)
        case .some(let waiter?): waiter.resume(returning: event)
        case .some(nil): break
        }
    }

    /// The next event, in the order they were posted. `caller`, the caller's work token when it
    /// runs an operation the engine launched on the same manual clock, is parked while the
    /// caller waits (parked under the lock, so no event comes first), and counted as running
    /// again when an event arrives: an advance does not wait for a caller that waits for it.
    func next(parking caller: SettleToken? = nil) async -> Event {
        await withCheckedContinuation { continuation in
            let event = state.withLock { state -> Event? in
                guard state.head < state.events.count else {
                    state.waiter = continuation
                    if let caller {
                        state.parked = caller
                        caller.park()
                    }
                    return nil
                }
                let event = state.events[state.head]
                state.head += 1
                if state.head == state.events.count {
                    state.events.removeAll(keepingCapacity: true)
                    state.head = 0
                }
                return event
            }
            if let event { continuation.resume(returning: event) }
        }
    }

    /// The call is decided: events not read and events posted from now on are dropped, and
    /// their tokens finished.
    func close() {
        let left = state.withLock { state -> ArraySlice<Event> in
            state.closed = true
            defer { state.events = [] }
            return state.events[state.head...]
        }
        for event in left { Self.finishToken(of: event) }
    }

    private static func finishToken(of event: Event) {
        event.token?.finish()
    }
}
