import Synchronization
import TempoTesting
import Testing

@testable import Tempo

/// A breaker leaves the registry when it is closed, holds no manual state, no call it admitted
/// in its current state is still running, and its window holds no failure (only successes, or
/// nothing): successes alone never open a breaker, so it forgets them, and the next call makes
/// a new one with an empty window. A failure keeps it until the failure leaves the window (a
/// time window: it ages out; a count window: later outcomes push it out, or the breaker opens).
@Suite struct CircuitBreakerLeavingTests {
    static let byTime = CircuitBreakerPolicy(
        failureRatio: 0.5, window: .lastDuration(.seconds(10)), minimumCalls: 2)

    /// The scenario with the default policy (a count window of the last 20 calls).
    @Test func healthyCountWindowBreakersLeaveAtOnce() async {
        await onManualClock { _, registry in
            for i in 0..<1_000 {
                let answer = await breakerCall(CircuitBreakerPolicy(), key: "host-\(i)", .succeed)
                #expect(answer == "ok")
            }
            #expect(registry.liveKeyCount == 0)
            #expect(!registry.snapshot().entries.contains { $0.kind == .circuitBreaker })
        }
    }

    /// The same with a time window: the successes do not wait to age out.
    @Test func healthyTimeWindowBreakersLeaveAtOnce() async {
        await onManualClock { _, registry in
            for i in 0..<1_000 { await breakerCall(Self.byTime, key: "host-\(i)", .succeed) }
            #expect(registry.liveKeyCount == 0)
            #expect(!registry.snapshot().entries.contains { $0.kind == .circuitBreaker })
        }
    }

    /// A count window's failure keeps the breaker, whatever the time, until later successes
    /// push it out of the window; then it leaves.
    @Test func aCountWindowsFailureKeepsItUntilPushedOut() async {
        await onManualClock { clock, registry in
            let policy = CircuitBreakerPolicy(window: .lastCalls(3), minimumCalls: 3)
            await breakerCall(policy, key: "a", .fail)
            await clock.advance(by: .seconds(86_400))
            #expect(registry.liveKeyCount == 1)
            #expect(breakerRow(registry, "a")?.failures == 1)
            await breakerCall(policy, key: "a", .succeed)
            await breakerCall(policy, key: "a", .succeed)
            #expect(breakerRow(registry, "a")?.calls == 3)
            #expect(breakerRow(registry, "a")?.failures == 1)
            await breakerCall(policy, key: "a", .succeed)
            #expect(registry.liveKeyCount == 0)
            #expect(registry.snapshot().isEmpty)
        }
    }

    /// A time window's failure keeps the breaker until it is a window old, on the breaker's
    /// timer; the successes around it do not keep it longer.
    @Test func aTimeWindowsFailureKeepsItUntilItIsOld() async {
        await onManualClock { clock, registry in
            let policy = CircuitBreakerPolicy(
                failureRatio: 0.9, window: .lastDuration(.seconds(10)), minimumCalls: 2)
            await breakerCall(policy, key: "a", .fail)
            await breakerCall(policy, key: "a", .succeed)
            await clock.advance(by: .seconds(6))
            await breakerCall(policy, key: "a", .succeed)
            #expect(breakerRow(registry, "a")?.calls == 3)
            await clock.advance(by: .milliseconds(3_999))
            #expect(breakerRow(registry, "a")?.failures == 1)
            await clock.advance(by: .milliseconds(1))
            #expect(registry.liveKeyCount == 0)
            #expect(registry.snapshot().isEmpty)
        }
    }

    /// With two failures in a time window, the breaker's timer wakes when the newer one has
    /// aged out, not the success after it: it leaves a window after its newest failure.
    @Test func itLeavesAWindowAfterItsNewestFailureNotItsNewestSuccess() async {
        await onManualClock { clock, registry in
            let policy = CircuitBreakerPolicy(
                failureRatio: 0.9, window: .lastDuration(.seconds(10)), minimumCalls: 4)
            await breakerCall(policy, key: "a", .fail)
            await clock.advance(by: .seconds(5))
            await breakerCall(policy, key: "a", .fail)
            await clock.advance(by: .seconds(2))
            await breakerCall(policy, key: "a", .succeed)
            await clock.advance(by: .seconds(3))
            #expect(breakerRow(registry, "a")?.failures == 1)
            await clock.advance(by: .seconds(5))
            #expect(registry.liveKeyCount == 0)
            #expect(registry.snapshot().isEmpty)
        }
    }

    /// One that left after successes comes back fresh: its successes are forgotten, so a
    /// count window of the default policy needs ten new outcomes before it opens: nine
    /// failures after nine successes that left it closed do not open it, a tenth does.
    @Test func aCountWindowBreakerThatLeftComesBackFresh() async {
        await onManualClock { _, registry in
            let policy = CircuitBreakerPolicy()
            for _ in 0..<9 { await breakerCall(policy, key: "a", .succeed) }
            #expect(registry.liveKeyCount == 0)
            for _ in 0..<9 { await breakerCall(policy, key: "a", .fail) }
            #expect(breakerRow(registry, "a")?.calls == 9)
            #expect(breakerState(registry, "a") == .closed)
            await breakerCall(policy, key: "a", .fail)
            #expect(breakerState(registry, "a") == .open)
        }
    }

    /// One that left and comes back is a fresh one: the old success does not dilute the
    /// ratio, so two failures open it (one failure and one success would not).
    @Test func aBreakerThatLeftComesBackFresh() async {
        await onManualClock { clock, registry in
            await breakerCall(Self.byTime, key: "a", .succeed)
            await clock.advance(by: .seconds(10))
            #expect(registry.liveKeyCount == 0)
            await breakerCall(Self.byTime, key: "a", .fail)
            #expect(breakerRow(registry, "a")?.calls == 1)
            await breakerCall(Self.byTime, key: "a", .fail)
            #expect(breakerState(registry, "a") == .open)
        }
    }

    /// A breaker that closed again after its trial is fresh, and leaves at once.
    @Test func aBreakerThatRecoveredLeaves() async {
        await onManualClock { clock, registry in
            let policy = CircuitBreakerPolicy(minimumCalls: 2, breakDuration: .seconds(5))
            await breakerCall(policy, key: "a", .fail)
            await breakerCall(policy, key: "a", .fail)
            #expect(breakerState(registry, "a") == .open)
            await clock.advance(by: .seconds(5))
            #expect(registry.liveKeyCount == 1)
            #expect(await breakerCall(policy, key: "a", .succeed) == "ok")
            #expect(registry.liveKeyCount == 0)
            // It comes back as a fresh one: one failure is one call, short of the minimum.
            #expect(await breakerCall(policy, key: "a", .fail) == "boom")
            #expect(breakerRow(registry, "a")?.calls == 1)
            #expect(breakerState(registry, "a") == .closed)
        }
    }

    /// Closed by hand, a breaker is fresh and leaves; opened by hand it stays.
    @Test func closedByHandItLeavesOpenedByHandItStays() async {
        await onManualClock { _, registry in
            openCircuitBreaker(identifier: "a")
            #expect(registry.liveKeyCount == 1)
            closeCircuitBreaker(identifier: "a")
            #expect(registry.liveKeyCount == 0)
            #expect(registry.snapshot().isEmpty)
        }
    }

    /// Closed by hand while closed already, with a call of it running: the breaker starts
    /// afresh and leaves at once, and the running call's failure, when it comes, counts for
    /// nothing (it opens nothing and calls no `onStateChange`), as after a reset.
    @Test func closedByHandWhileClosedItLeavesAndARunningCallCountsForNothing() async {
        await onManualClock { clock, registry in
            let changes = Log<String>()
            let policy = CircuitBreakerPolicy(
                failureRatio: 1, window: .lastCalls(1), minimumCalls: 1,
                onStateChange: { changes.append("\($0) → \($1)") })
            let running = await clock.start {
                try await circuitBreaker(policy, identifier: "a") {
                    try await clock.sleep(for: .seconds(1))
                    throw BreakerFailure()
                }
            }
            await clock.waitForSleepers(1)
            #expect(registry.liveKeyCount == 1)
            closeCircuitBreaker(identifier: "a")
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(1))
            await #expect(throws: BreakerFailure()) { try await running.value() }
            #expect(registry.liveKeyCount == 0)
            #expect(changes.all.isEmpty)
            // The next call finds a fresh breaker: closed, and it runs.
            #expect(await breakerCall(policy, key: "a", .succeed) == "ok")
        }
    }

    /// A call only cancelled leaves nothing in the window: the breaker leaves with it.
    @Test func aCancelledCallLeavesNothing() async {
        await onManualClock { _, registry in
            await breakerCall(CircuitBreakerPolicy(), key: "a", .cancel)
            #expect(registry.liveKeyCount == 0)
        }
    }

    /// A count window's failure stays: one failure then nine more open a breaker of the
    /// default policy (ten calls), where nine failures alone would not.
    @Test func aCountWindowWithAFailureStays() async {
        await onManualClock { clock, registry in
            let policy = CircuitBreakerPolicy()
            await breakerCall(policy, key: "a", .fail)
            await breakerCall(policy, key: "b", .succeed)
            await clock.advance(by: .seconds(86_400))
            #expect(registry.liveKeyCount == 1)
            for _ in 0..<8 {
                await breakerCall(policy, key: "a", .fail)
                await breakerCall(policy, key: "b", .fail)
            }
            await breakerCall(policy, key: "a", .fail)
            #expect(breakerState(registry, "a") == .open)
            #expect(breakerState(registry, "b") == .closed)
        }
    }

    /// A call still running keeps its breaker, whose window is otherwise empty: its outcome,
    /// when it ends, counts, as it would had nothing aged.
    @Test func aRunningCallKeepsItsBreaker() async {
        await onManualClock { clock, registry in
            let policy = CircuitBreakerPolicy(
                window: .lastDuration(.seconds(10)), minimumCalls: 1)
            await breakerCall(policy, key: "a", .succeed)
            let started = Log<Int>()
            let call = Task {
                try await circuitBreaker(policy, identifier: "a") {
                    started.append(1)
                    try await clock.sleep(for: .seconds(30))
                    throw BreakerFailure()
                }
            }
            #expect(await eventually { started.all.count == 1 })
            await clock.advance(by: .seconds(20))
            #expect(registry.liveKeyCount == 1)
            #expect(breakerRow(registry, "a")?.calls == 0)
            await clock.advance(by: .seconds(10))
            _ = await call.result
            #expect(breakerState(registry, "a") == .open)
        }
    }

    /// A breaker made new in place forgets the outcomes it stored while its calls overlapped:
    /// a success stored while another call ran does not stay in the new breaker's count
    /// window (there, it would push the window's ring out of step and count a failure twice).
    @Test func aBreakerMadeNewForgetsTheOutcomesOfItsCountWindow() async {
        await onManualClock { _, registry in
            let policy = CircuitBreakerPolicy(
                failureRatio: 1, window: .lastCalls(2), minimumCalls: 2)
            let held = await gatedBreakerCall(policy, key: "a", registry: registry)
            await breakerCall(policy, key: "a", .succeed)
            held.gate.open(.succeed)
            #expect(await held.task.value == "ok")
            #expect(registry.liveKeyCount == 0)
            // The new breaker's window of two holds the success and the last failure.
            await breakerCall(policy, key: "a", .fail)
            await breakerCall(policy, key: "a", .succeed)
            await breakerCall(policy, key: "a", .fail)
            #expect(breakerState(registry, "a") == .closed)
            #expect(breakerRow(registry, "a")?.failures == 1)
        }
    }

    /// The same for a time window: the instant of a success stored while another call ran
    /// leaves with it, so the new breaker's failures age out when they are a window old.
    @Test func aBreakerMadeNewForgetsTheOutcomesOfItsTimeWindow() async {
        await onManualClock { clock, registry in
            let policy = CircuitBreakerPolicy(
                failureRatio: 1, window: .lastDuration(.seconds(10)), minimumCalls: 2)
            let held = await gatedBreakerCall(policy, key: "a", registry: registry)
            await breakerCall(policy, key: "a", .succeed)
            held.gate.open(.succeed)
            #expect(await held.task.value == "ok")
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(5))
            await breakerCall(policy, key: "a", .fail)
            await clock.advance(by: .seconds(6))
            // The first failure is 6 s old: both are in the window, and all calls failed.
            await breakerCall(policy, key: "a", .fail)
            #expect(breakerState(registry, "a") == .open)
        }
    }
}
