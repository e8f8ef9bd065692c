import Tempo

// What Tempo's engine calls on a `ManualClock`: its timers, and the work they start that an
// advance waits for (tracked, parked while asleep on the clock, settled).

extension ManualClock {
    /// Work asleep on this clock counts as settled: `advance` must not wait for it, or an
    /// operation that sleeps on the clock would wait for an advance that waits for it.
    func parkLocked(_ state: inout State, _ token: SettleToken)
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

    /// One wait of the parked work has ended: once it is in none, and has not ended, `advance`
    /// waits for it once more.
    func unparkLocked(_ state: inout State, _ token: SettleToken) {
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
