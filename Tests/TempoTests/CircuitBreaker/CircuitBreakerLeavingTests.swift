import Synchronization
import TempoTesting
import Testing

@testable import Tempo

/// A breaker equivalent to a fresh one leaves the registry: closed, no call of its current
/// state still running, and no outcome in its window (a time window's outcomes leave it as
/// they age; a count window's never do, since any of them can change when it opens).
@Suite struct CircuitBreakerLeavingTests {
    static let byTime = CircuitBreakerPolicy(
        failureRatio: 0.5, window: .lastDuration(.seconds(10)), minimumCalls: 2)

    @Test func timeWindowBreakersLeaveOnceTheirOutcomesAreOld() async {
        await onManualClock { clock, registry in
            for i in 0..<1_000 { await breakerCall(Self.byTime, key: "host-\(i)", .succeed) }
            #expect(registry.liveKeyCount == 1_000)
            await clock.advance(by: .milliseconds(9_999))
            #expect(registry.liveKeyCount == 1_000)
            await clock.advance(by: .milliseconds(1))
            #expect(registry.liveKeyCount == 0)
            #expect(registry.snapshot().isEmpty)
        }
    }

    /// A later outcome keeps the breaker until it too is a window old.
    @Test func aLaterOutcomeKeepsItUntilThatOneIsOld() async {
        await onManualClock { clock, registry in
            await breakerCall(Self.byTime, key: "a", .succeed)
            await clock.advance(by: .seconds(6))
            await breakerCall(Self.byTime, key: "a", .succeed)
            await clock.advance(by: .seconds(4))
            #expect(breakerRow(registry, "a")?.calls == 1)
            await clock.advance(by: .seconds(6))
            #expect(registry.liveKeyCount == 0)
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
            let policy = CircuitBreakerPolicy(minimumCalls: 1, breakDuration: .seconds(5))
            await breakerCall(policy, key: "a", .fail)
            #expect(breakerState(registry, "a") == .open)
            await clock.advance(by: .seconds(5))
            #expect(registry.liveKeyCount == 1)
            #expect(await breakerCall(policy, key: "a", .succeed) == "ok")
            #expect(registry.liveKeyCount == 0)
            // It comes back as a fresh one.
            #expect(await breakerCall(policy, key: "a", .succeed) == "ok")
            #expect(breakerRow(registry, "a")?.calls == 1)
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

    /// A call only cancelled leaves nothing in the window: the breaker leaves with it.
    @Test func aCancelledCallLeavesNothing() async {
        await onManualClock { _, registry in
            await breakerCall(CircuitBreakerPolicy(), key: "a", .cancel)
            #expect(registry.liveKeyCount == 0)
        }
    }

    /// A count window's outcomes stay: one success then nine failures open a breaker of the
    /// default policy (ten calls), where nine failures alone would not.
    @Test func aCountWindowWithOutcomesStays() async {
        await onManualClock { clock, registry in
            let policy = CircuitBreakerPolicy()
            await breakerCall(policy, key: "a", .succeed)
            await breakerCall(policy, key: "b", .fail)
            await clock.advance(by: .seconds(86_400))
            #expect(registry.liveKeyCount == 2)
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
}
