import Synchronization
import TempoTesting
import Testing

@testable import Tempo

// The breaker's controls and edges on the manual clock: manual open, close and reset, the
// failure predicate, cancellation in each state, outcomes of an earlier state, bad policies,
// and `retry` around an open breaker.

@Suite struct CircuitBreakerControlTests {
    static let policy = CircuitBreakerPolicy(
        failureRatio: 1, window: .lastCalls(4), minimumCalls: 1, breakDuration: .seconds(10))

    @Test func openByHandHoldsUntilClosedAndResetForgets() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            var policy = Self.policy
            policy.onStateChange = breakerChangeLog(log)
            #expect(await breakerCall(policy, key: "k", .succeed) == "ok")
            // Healthy, it left: the breaker opened by hand is a new one, which knows no
            // callback until a call brings its policy.
            #expect(breakerRow(registry, "k") == nil)
            openCircuitBreaker(identifier: "k")
            #expect(breakerRow(registry, "k")?.reopensAt == nil)
            await clock.advance(by: .seconds(3_600))
            let ran = Log<String>()
            #expect(await breakerCall(policy, key: "k", .succeed, ran: ran) == "open(?)")
            #expect(ran.count == 0)
            closeCircuitBreaker(identifier: "k")
            #expect(breakerRow(registry, "k") == nil)
            #expect(await breakerCall(policy, key: "k", .fail) == "boom")
            #expect(breakerState(registry, "k") == .open)
            resetCircuitBreaker(identifier: "k")
            #expect(breakerRow(registry, "k") == nil)
            #expect(log.all == ["open>closed", "closed>open", "open>closed"])
            #expect(await breakerCall(policy, key: "k", .succeed) == "ok")
            // Unknown identifiers: close and reset do nothing, open opens a new breaker.
            closeCircuitBreaker(identifier: "none")
            resetCircuitBreaker(identifier: "none")
            #expect(breakerRow(registry, "none") == nil)
            openCircuitBreaker(identifier: "new")
            #expect(await breakerCall(policy, key: "new", .succeed) == "open(?)")
        }
    }

    @Test func theRegistryControlsActOnTheirOwnRegistry() async {
        await onManualClock { clock, registry in
            registry.openCircuitBreaker(identifier: "k")
            #expect(breakerState(registry, "k") == .open)
            registry.closeCircuitBreaker(identifier: "k")
            #expect(breakerState(registry, "k") == nil)
            registry.resetCircuitBreaker(identifier: "k")
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func errorsThePredicateDoesNotCountAreSuccesses() async {
        await onManualClock { clock, registry in
            struct NotFound: Error {}
            var policy = Self.policy
            policy.window = .lastCalls(1)
            policy.isFailure = { !($0 is NotFound) }
            for _ in 0..<3 {
                do {
                    _ = try await circuitBreaker(policy, identifier: "k") { () throws -> Int in
                        throw NotFound()
                    }
                } catch {
                    #expect(error is NotFound)
                }
            }
            // Successes only: the breaker left after each of them.
            #expect(breakerRow(registry, "k") == nil)
            await breakerCall(policy, key: "k", .fail)
            #expect(breakerState(registry, "k") == .open)
            // A trial that throws an error that does not count closes the breaker.
            await clock.advance(by: .seconds(10))
            _ = try? await circuitBreaker(policy, identifier: "k") { () throws -> Int in
                throw NotFound()
            }
            #expect(breakerState(registry, "k") == nil)
        }
    }

    @Test func cancellationNeverCountsWhileClosed() async {
        await onManualClock { clock, registry in
            #expect(await breakerCall(Self.policy, key: "k", .cancel) == "cancelled")
            #expect(breakerRow(registry, "k") == nil)
            // A call whose task is cancelled while it runs, failing with another error.
            let call = await gatedBreakerCall(Self.policy, key: "k", registry: registry)
            call.task.cancel()
            call.gate.open(.fail)
            #expect(await call.task.value == "boom")
            #expect(breakerRow(registry, "k") == nil)
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aCancelledTaskDoesNotTouchTheBreakerInAnyState() async {
        await onManualClock { clock, registry in
            let ran = Log<String>()
            let cancelled = Task {
                await registry.withCurrent {
                    withUnsafeCurrentTask { $0?.cancel() }
                    return await breakerCall(Self.policy, key: "k", .fail, ran: ran)
                }
            }
            #expect(await cancelled.value == "cancelled")
            #expect(ran.count == 0)
            #expect(breakerRow(registry, "k") == nil)
            await breakerCall(Self.policy, key: "k", .fail)
            #expect(breakerState(registry, "k") == .open)
            // While open a cancelled call throws CancellationError, not the breaker's error.
            let whileOpen = Task {
                await registry.withCurrent {
                    withUnsafeCurrentTask { $0?.cancel() }
                    return await breakerCall(Self.policy, key: "k", .succeed)
                }
            }
            #expect(await whileOpen.value == "cancelled")
            #expect(breakerRow(registry, "k")?.reopensAt == .seconds(10))
        }
    }

    @Test func aCancelledTrialFreesItsSlot() async {
        await onManualClock { clock, registry in
            await breakerCall(Self.policy, key: "k", .fail)
            await clock.advance(by: .seconds(10))
            let trial = await gatedBreakerCall(Self.policy, key: "k", registry: registry)
            #expect(await breakerCall(Self.policy, key: "k", .succeed) == "open(?)")
            trial.task.cancel()
            trial.gate.open(.cancel)
            #expect(await trial.task.value == "cancelled")
            #expect(breakerRow(registry, "k")?.state == .halfOpen)
            #expect(breakerRow(registry, "k")?.calls == 0)
            #expect(await breakerCall(Self.policy, key: "k", .cancel) == "cancelled")
            #expect(await breakerCall(Self.policy, key: "k", .succeed) == "ok")
            #expect(breakerState(registry, "k") == nil)
        }
    }

    @Test func outcomesOfAnEarlierStateCountForNothing() async {
        await onManualClock { clock, registry in
            let late = await gatedBreakerCall(Self.policy, key: "k", registry: registry)
            let lateSuccess = await gatedBreakerCall(Self.policy, key: "k", registry: registry)
            await breakerCall(Self.policy, key: "k", .fail)
            #expect(breakerState(registry, "k") == .open)
            await clock.advance(by: .seconds(10))
            let trial = await gatedBreakerCall(Self.policy, key: "k", registry: registry)
            // Admitted while closed: neither closes nor reopens the half-open breaker.
            lateSuccess.gate.open(.succeed)
            #expect(await lateSuccess.task.value == "ok")
            late.gate.open(.fail)
            #expect(await late.task.value == "boom")
            #expect(breakerRow(registry, "k")?.state == .halfOpen)
            #expect(breakerRow(registry, "k")?.calls == 1)
            trial.gate.open(.succeed)
            #expect(await trial.task.value == "ok")
            #expect(breakerState(registry, "k") == nil)
        }
    }

    @Test func aCallFromBeforeAResetCountsForNothingInTheNewBreaker() async {
        await onManualClock { clock, registry in
            let held = await gatedBreakerCall(Self.policy, key: "k", registry: registry)
            resetCircuitBreaker(identifier: "k")
            // The new breaker's own call, still running, keeps it in the registry.
            let current = await gatedBreakerCall(Self.policy, key: "k", registry: registry)
            held.gate.open(.fail)
            #expect(await held.task.value == "boom")
            #expect(breakerRow(registry, "k")?.state == .closed)
            #expect(breakerRow(registry, "k")?.failures == 0)
            current.gate.open(.succeed)
            #expect(await current.task.value == "ok")
            #expect(breakerRow(registry, "k") == nil)
        }
    }

    @Test func badPoliciesThrowWithoutRunningAndEdgesHaveAMeaning() async {
        await onManualClock { clock, registry in
            let ran = Log<String>()
            let bad: [CircuitBreakerPolicy] = [
                CircuitBreakerPolicy(window: .lastCalls(0)),
                CircuitBreakerPolicy(window: .lastCalls(-3)),
                CircuitBreakerPolicy(window: .lastDuration(.zero)),
                CircuitBreakerPolicy(window: .lastDuration(.seconds(-1))),
                CircuitBreakerPolicy(failureRatio: .nan),
                CircuitBreakerPolicy(failureRatio: 0),
                CircuitBreakerPolicy(failureRatio: 1.5),
                CircuitBreakerPolicy(failureRatio: -.infinity),
                CircuitBreakerPolicy(trialCalls: 0),
            ]
            for policy in bad {
                #expect(await breakerCall(policy, key: "bad", .succeed, ran: ran) == "invalid")
            }
            #expect(ran.count == 0)
            #expect(breakerRow(registry, "bad") == nil)
            // Minimum calls below one mean one; a huge window grows as calls come.
            let huge = CircuitBreakerPolicy(
                failureRatio: 1, window: .lastCalls(.max), minimumCalls: -5,
                breakDuration: .seconds(-2), maximumBreakDuration: .seconds(-1),
                trialCalls: .max)
            await breakerCall(huge, key: "edge", .fail)
            // A negative break is zero: half-open at once; a maximum below it is the break.
            #expect(breakerRow(registry, "edge")?.state == .halfOpen)
            await breakerCall(huge, key: "edge", .fail)
            #expect(breakerRow(registry, "edge")?.state == .halfOpen)
            let long = CircuitBreakerPolicy(
                failureRatio: 1, window: .lastDuration(.seconds(Int64.max)), minimumCalls: 1,
                breakDuration: .seconds(Int64.max), maximumBreakDuration: .seconds(Int64.max))
            await breakerCall(long, key: "long", .fail)
            #expect(breakerRow(registry, "long")?.state == .open)
        }
    }

    @Test func retryAroundAnOpenBreakerWaitsForTheTrialInsteadOfCalling() async {
        await onManualClock { clock, registry in
            let calls = Log<Int>()
            let policy = CircuitBreakerPolicy(
                failureRatio: 1, window: .lastCalls(2), minimumCalls: 2,
                breakDuration: .seconds(10))
            let finished = Log<Bool>()
            let task = Task {
                defer { finished.append(true) }
                return await registry.withCurrent {
                    try? await retry(10, backoff: .exponential(initial: .seconds(1))) {
                        try await circuitBreaker(policy, identifier: "api") {
                            calls.append(Int(registry.now / .seconds(1)))
                            if calls.count <= 2 { throw BreakerFailure() }
                            return "answer"
                        }
                    }
                }
            }
            // Fails at 0 and 1 s (open until 11 s); the attempt at 3 s is rejected without a
            // call and waits 8 s, the break's rest; the trial at 11 s closes the breaker.
            #expect(await driveBreakerClock(clock, task, finished: finished) == "answer")
            #expect(calls.all == [0, 1, 11])
            #expect(breakerState(registry, "api") == nil)
        }
    }

    @Test func retryCapsTheBreakersWaitAtItsMaximum() async {
        await onManualClock { clock, registry in
            let calls = Log<Int>()
            let attempts = Log<Int>()
            let policy = CircuitBreakerPolicy(
                failureRatio: 1, window: .lastCalls(1), minimumCalls: 1,
                breakDuration: .seconds(10))
            let finished = Log<Bool>()
            let task = Task {
                defer { finished.append(true) }
                return await registry.withCurrent {
                    try? await retry(
                        6, backoff: .exponential(initial: .seconds(3), maximum: .seconds(3))
                    ) {
                        attempts.append(Int(registry.now / .seconds(1)))
                        return try await circuitBreaker(policy, identifier: "api") {
                            calls.append(Int(registry.now / .seconds(1)))
                            if calls.count == 1 { throw BreakerFailure() }
                            return "answer"
                        }
                    }
                }
            }
            #expect(await driveBreakerClock(clock, task, finished: finished) == "answer")
            // The break's rest (7, 4, 1 s) is capped at 3 s: attempts at 3, 6 and 9 s are
            // rejected without a call, and the one at 10 s, when the break ends, is the trial.
            #expect(attempts.all == [0, 3, 6, 9, 10])
            #expect(calls.all == [0, 10])
        }
    }
}
