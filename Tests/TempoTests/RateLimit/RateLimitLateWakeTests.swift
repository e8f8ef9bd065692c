import Testing

@testable import Tempo

// A timer that wakes late must not cost a busy key its rate. The bucket's state is driven
// directly here, at chosen instants, as a loaded machine's timer runner would drive it: the
// manual clock always fires a timer at its deadline, so it cannot wake one late.

@Suite struct RateLimitLateWakeTests {
    /// 20 a second with a burst of 2: a permit every 50 ms, and 50 ms of slack (the burst less
    /// the weight of 1, times the refill) a late wake-up may use before the bucket is full.
    let refill = Duration.milliseconds(50)
    let burst = 2

    /// A key that took its burst at 0 and has `count` waiters queued behind it.
    func busyKey(waiters count: Int) -> (RateLimitState<Int>, RateLimitState<Int>.Ask) {
        let ask = RateLimitState<Int>.Ask(weight: 1, burst: burst, refill: refill)
        var state = RateLimitState<Int>(now: .zero, refill: refill, burst: burst)
        for _ in 0..<burst {
            #expect(state.call(at: .zero, ask: ask, refill: refill, burst: burst) == .admitted)
        }
        for waiter in 0..<count { _ = state.enqueue(waiter, ask: ask, deadline: nil) }
        return (state, ask)
    }

    @Test func wakingLateWithinTheSlackPushesNoLaterPermitBack() {
        var (state, _) = busyKey(waiters: 40)
        // Each wake-up comes 0 to 49 ms after the head's instant (k × 50 ms): every waiter is
        // still admitted, one per wake-up, and the next instant asked for is k × 50 ms on the
        // dot, as if every wake-up had been on time. The rate over the run is exactly 20 a
        // second, however late each wake-up was.
        for k in 1...40 {
            let due = refill * k
            let late = Duration.milliseconds((k * 37) % 50)
            #expect(state.wake(at: due + late) == due)
            let settled = state.settle(at: due + late)
            #expect(settled.admitted == [k - 1], "wake-up \(k), \(late) late")
            if k < 40 { #expect(state.wake(at: due + late) == refill * (k + 1)) }
        }
        #expect(state.queue.isEmpty)
        #expect(state.fullAt == refill * 42)
    }

    @Test func wakingLaterThanTheSlackCatchesUpByTheBurstAndNoMore() {
        var (state, _) = busyKey(waiters: 10)
        // The first waiter's instant is 50 ms; the timer wakes at 200 ms. The bucket has been
        // full since 100 ms: two waiters pass at once (the burst), the third waits a refill.
        // The permits of 100 and 150 ms are lost, as the limit says they must be: admitting them
        // too would let four through within 50 ms.
        let settled = state.settle(at: .milliseconds(200))
        #expect(settled.admitted == [0, 1])
        #expect(state.wake(at: .milliseconds(200)) == .milliseconds(250))
        // From there on the key keeps its rate again.
        #expect(state.settle(at: .milliseconds(260)).admitted == [2])
        #expect(state.wake(at: .milliseconds(260)) == .milliseconds(300))
    }
}
