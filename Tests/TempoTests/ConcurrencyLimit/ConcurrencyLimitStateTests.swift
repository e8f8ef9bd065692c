import Testing

@testable import Tempo

// The state machine alone: no clock, no lock, no task.

@Suite struct ConcurrencyLimitStateTests {
    typealias State = ConcurrencyLimitState<Int>

    private func call(
        _ state: inout State, _ waiter: Int, limit: Int = 1, queue: Int = .max,
        timeout: Duration? = nil, at now: Duration = .zero
    ) -> State.Admission {
        state.call(
            limit: limit, queueLimit: queue, queueTimeout: timeout, now: { now },
            waiter: { waiter })
    }

    @Test func aReleasedSlotGoesToTheHeadBeforeAnyNewcomer() {
        var state = State()
        #expect(call(&state, 1) == .run)
        #expect(call(&state, 2) == .queued(id: 1))
        #expect(state.release() == [2])
        #expect(state.running == 1)
        // A newcomer finds the slot taken (and would find it taken even with a higher limit
        // while anyone waits).
        #expect(call(&state, 3, queue: 0) == .queueFull(running: 1, queued: 0))
        #expect(call(&state, 4) == .queued(id: 2))
        #expect(call(&state, 5, limit: 10) == .queued(id: 3))
        // 4 takes the slot; 5, whose own limit is 10, runs beside it.
        #expect(state.release() == [4, 5])
        #expect(state.running == 2)
        #expect(state.release() == [])
        #expect(state.release() == [])
        #expect(state.isIdle)
    }

    @Test func withdrawingTheHeadLetsAWaiterWithAHigherLimitRun() {
        var state = State()
        #expect(call(&state, 1) == .run)
        #expect(call(&state, 2, limit: 1) == .queued(id: 1))
        #expect(call(&state, 3, limit: 2) == .queued(id: 2))
        let (removed, admitted) = state.withdraw(1)
        #expect(removed == 2)
        #expect(admitted == [3])
        #expect(state.withdraw(1).removed == nil)
        #expect(state.running == 2)
    }

    @Test func deadlinesExpireInAnyOrderAndKeepTheRestInLine() {
        var state = State()
        #expect(call(&state, 1) == .run)
        #expect(call(&state, 2, timeout: .seconds(3)) == .queued(id: 1))
        #expect(call(&state, 3, timeout: .seconds(1), at: .seconds(1)) == .queued(id: 2))
        #expect(call(&state, 4) == .queued(id: 3))
        #expect(state.nextDeadline == .seconds(2))
        #expect(state.expire(at: .seconds(1)).expired == [])
        #expect(state.expire(at: .seconds(2)).expired == [3])
        #expect(state.nextDeadline == .seconds(3))
        #expect(state.expire(at: .seconds(5)).expired == [2])
        #expect(state.nextDeadline == nil)
        #expect(state.waiting.map(\.waiter) == [4])
        #expect(state.release() == [4])
    }

    @Test func aDeadlineAlreadyReachedTurnsTheCallAway() {
        var state = State()
        #expect(call(&state, 1, timeout: .zero) == .run)
        #expect(call(&state, 2, timeout: .zero) == .timedOut)
        #expect(call(&state, 3, timeout: .nanoseconds(-1)) == .timedOut)
        #expect(call(&state, 4, timeout: .seconds(Int64.max), at: .seconds(5)) == .queued(id: 1))
        #expect(state.nextDeadline == .seconds(Int64.max).adding(.seconds(5)))
        #expect(state.queuedCount == 1)
    }

    @Test func removingTheWaitersKeepsTheRunningCalls() {
        var state = State()
        for waiter in 1...5 { _ = call(&state, waiter, limit: 2) }
        #expect(state.removeWaiters() == [3, 4, 5])
        #expect(state.running == 2)
        #expect(state.queuedCount == 0)
        #expect(!state.isIdle)
    }

    @Test func aLongQueueStaysInOrderAsItIsCompacted() {
        var state = State()
        #expect(call(&state, 0) == .run)
        for waiter in 1...200 { _ = call(&state, waiter) }
        var order: [Int] = []
        for _ in 1...200 { order += state.release() }
        #expect(order == Array(1...200))
        #expect(state.release() == [])
        #expect(state.isIdle)
    }
}
