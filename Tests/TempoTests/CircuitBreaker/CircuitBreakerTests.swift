import Synchronization
import TempoTesting
import Testing

@testable import Tempo

// Every transition and bound of the circuit breaker on the manual clock: the threshold at and
// just below, the minimum calls, the count window sliding, the time window expiring, the
// break, the trial calls, the growing break, the state-change callback and the snapshot row.

@Suite struct CircuitBreakerTests {
    /// Opens at half failures of the last 4 calls, once 4 are in; breaks for 10 s.
    static func policy(
        ratio: Double = 0.5, window: CircuitBreakerPolicy.Window = .lastCalls(4),
        minimumCalls: Int = 4, trials: Int = 1, maximumBreak: Duration? = nil,
        log: Log<String>? = nil
    ) -> CircuitBreakerPolicy {
        CircuitBreakerPolicy(
            failureRatio: ratio, window: window, minimumCalls: minimumCalls,
            breakDuration: .seconds(10), maximumBreakDuration: maximumBreak,
            trialCalls: trials, onStateChange: log.map(breakerChangeLog))
    }

    @Test func opensWhenTheRatioReachesTheThresholdExactly() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let policy = Self.policy(log: log)
            // A failure first: successes before any failure leave with the healthy breaker.
            for step in [BreakerStep.fail, .succeed, .succeed] {
                await breakerCall(policy, key: "k", step)
            }
            #expect(breakerState(registry, "k") == .closed)
            await breakerCall(policy, key: "k", .fail)  // 2 of 4: exactly 0.5
            #expect(breakerState(registry, "k") == .open)
            #expect(log.all == ["closed>open"])
            let ran = Log<String>()
            #expect(await breakerCall(policy, key: "k", .succeed, ran: ran) == "open(10000ms)")
            #expect(ran.count == 0)
        }
    }

    @Test func staysClosedJustBelowTheThreshold() async {
        await onManualClock { clock, registry in
            // 0.3 of 10 calls: 2 failures stay closed, 3 open (no rounding error at 0.3).
            let policy = Self.policy(ratio: 0.3, window: .lastCalls(10), minimumCalls: 10)
            for index in 0..<10 {
                await breakerCall(policy, key: "a", index < 2 ? .fail : .succeed)
            }
            #expect(breakerRow(registry, "a")?.failures == 2)
            #expect(breakerState(registry, "a") == .closed)
            for index in 0..<10 {
                await breakerCall(policy, key: "b", [0, 8, 9].contains(index) ? .fail : .succeed)
            }
            #expect(breakerState(registry, "b") == .open)
        }
    }

    @Test func doesNotOpenBeforeTheMinimumCalls() async {
        await onManualClock { clock, registry in
            let policy = Self.policy(window: .lastCalls(10), minimumCalls: 5)
            for _ in 0..<4 { await breakerCall(policy, key: "k", .fail) }
            #expect(breakerRow(registry, "k")?.state == .closed)
            #expect(breakerRow(registry, "k")?.calls == 4)
            await breakerCall(policy, key: "k", .fail)
            #expect(breakerState(registry, "k") == .open)
        }
    }

    @Test func theCountWindowSlides() async {
        await onManualClock { clock, registry in
            // All of the last 3 must fail.
            let policy = Self.policy(ratio: 1, window: .lastCalls(3), minimumCalls: 3)
            for step in [BreakerStep.fail, .fail, .succeed, .fail, .fail] {
                await breakerCall(policy, key: "k", step)
            }
            let row = breakerRow(registry, "k")
            #expect(row?.state == .closed)
            #expect(row?.calls == 3)
            #expect(row?.failures == 2)
            await breakerCall(policy, key: "k", .fail)  // the success leaves the window
            #expect(breakerState(registry, "k") == .open)
        }
    }

    @Test func theTimeWindowExpires() async {
        await onManualClock { clock, registry in
            let policy = Self.policy(ratio: 1, window: .lastDuration(.seconds(10)), minimumCalls: 2)
            await breakerCall(policy, key: "k", .fail)
            await clock.advance(by: .seconds(10))
            // The failure at 0 leaves the window at 10 s exactly, and the fresh breaker leaves.
            #expect(breakerRow(registry, "k") == nil)
            await breakerCall(policy, key: "k", .fail)
            #expect(breakerState(registry, "k") == .closed)
            await clock.advance(by: .milliseconds(9_999))
            #expect(breakerRow(registry, "k")?.calls == 1)
            await breakerCall(policy, key: "k", .fail)
            #expect(breakerState(registry, "k") == .open)
        }
    }

    @Test func anOpenBreakerRejectsAtOnceAndSaysWhenItTriesAgain() async {
        await onManualClock { clock, registry in
            let policy = Self.policy(ratio: 1, minimumCalls: 1)
            await breakerCall(policy, key: "k", .fail)
            let row = breakerRow(registry, "k")
            #expect(row?.state == .open)
            #expect(row?.reopensAt == .seconds(10))
            await clock.advance(by: .milliseconds(7_500))
            let ran = Log<String>()
            #expect(await breakerCall(policy, key: "k", .succeed, ran: ran) == "open(2500ms)")
            await clock.advance(by: .milliseconds(2_499))
            #expect(await breakerCall(policy, key: "k", .succeed, ran: ran) == "open(1ms)")
            #expect(ran.count == 0)
            #expect(
                registry.snapshot().description.contains("open, 0 of 0 calls failed, half-open at"))
        }
    }

    @Test func afterTheBreakATrialThatSucceedsCloses() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let policy = Self.policy(ratio: 1, minimumCalls: 1, log: log)
            await breakerCall(policy, key: "k", .fail)
            await clock.advance(by: .seconds(10))
            // The break is over: the snapshot shows what the next call finds.
            #expect(breakerState(registry, "k") == .halfOpen)
            #expect(log.all == ["closed>open"])
            #expect(await breakerCall(policy, key: "k", .succeed) == "ok")
            #expect(breakerRow(registry, "k") == nil)
            #expect(registry.liveKeyCount == 0)
            #expect(log.all == ["closed>open", "open>halfOpen", "halfOpen>closed"])
        }
    }

    @Test func halfOpenAdmitsOnlyItsTrialCallsAndClosesWhenAllSucceed() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let policy = Self.policy(ratio: 1, minimumCalls: 1, trials: 2, log: log)
            await breakerCall(policy, key: "k", .fail)
            await clock.advance(by: .seconds(10))
            let first = await gatedBreakerCall(policy, key: "k", registry: registry)
            let second = await gatedBreakerCall(policy, key: "k", registry: registry)
            #expect(breakerRow(registry, "k")?.calls == 2)
            #expect(await breakerCall(policy, key: "k", .succeed) == "open(?)")
            first.gate.open(.succeed)
            #expect(await first.task.value == "ok")
            // One trial succeeded, one runs: still half-open, still full.
            #expect(breakerState(registry, "k") == .halfOpen)
            #expect(await breakerCall(policy, key: "k", .succeed) == "open(?)")
            second.gate.open(.succeed)
            #expect(await second.task.value == "ok")
            #expect(breakerState(registry, "k") == nil)
            #expect(log.all == ["closed>open", "open>halfOpen", "halfOpen>closed"])
        }
    }

    @Test func oneFailedTrialReopensAndTheOthersCountForNothing() async {
        await onManualClock { clock, registry in
            let policy = Self.policy(ratio: 1, minimumCalls: 1, trials: 2)
            await breakerCall(policy, key: "k", .fail)
            await clock.advance(by: .seconds(10))
            let first = await gatedBreakerCall(policy, key: "k", registry: registry)
            let second = await gatedBreakerCall(policy, key: "k", registry: registry)
            first.gate.open(.fail)
            #expect(await first.task.value == "boom")
            #expect(breakerRow(registry, "k")?.state == .open)
            #expect(breakerRow(registry, "k")?.reopensAt == .seconds(20))
            second.gate.open(.succeed)
            #expect(await second.task.value == "ok")
            #expect(breakerState(registry, "k") == .open)
        }
    }

    @Test func theBreakDoublesAtEachReopeningUpToTheMaximumAndResetsOnClose() async {
        await onManualClock { clock, registry in
            let policy = Self.policy(ratio: 1, minimumCalls: 1, maximumBreak: .seconds(50))
            await breakerCall(policy, key: "k", .fail)
            var breaks: [Int] = []
            for _ in 0..<4 {
                let row = breakerRow(registry, "k")!
                let length = row.reopensAt! - registry.now
                breaks.append(Int(length / .seconds(1)))
                await clock.advance(by: length)
                await breakerCall(policy, key: "k", .fail)  // the trial fails
            }
            #expect(breaks == [10, 20, 40, 50])
            await clock.advance(by: .seconds(50))
            await breakerCall(policy, key: "k", .succeed)
            #expect(breakerState(registry, "k") == nil)
            await breakerCall(policy, key: "k", .fail)
            #expect(breakerRow(registry, "k")?.reopensAt == registry.now + .seconds(10))
        }
    }

    @Test func withoutAMaximumEveryBreakIsTheSame() async {
        await onManualClock { clock, registry in
            let policy = Self.policy(ratio: 1, minimumCalls: 1)
            await breakerCall(policy, key: "k", .fail)
            await clock.advance(by: .seconds(10))
            await breakerCall(policy, key: "k", .fail)
            #expect(breakerRow(registry, "k")?.reopensAt == .seconds(20))
        }
    }

    @Test func theCallbackRunsOutsideTheLockAndMayCallTempo() async {
        await onManualClock { clock, registry in
            let seen = Log<String>()
            var policy = Self.policy(ratio: 1, minimumCalls: 1)
            policy.onStateChange = { old, new in
                // A snapshot takes every shard's lock: under the lock this would deadlock.
                let state = breakerState(registry, "k").map(\.rawValue) ?? "none"
                seen.append("\(old)>\(new) snapshot \(state)")
            }
            await breakerCall(policy, key: "k", .fail)
            #expect(seen.all == ["closed>open snapshot open"])
        }
    }

    @Test func callsAreGroupedByIdentifierOrByCallSite() async {
        await onManualClock { clock, registry in
            let policy = Self.policy(ratio: 1, minimumCalls: 1)
            await breakerCall(policy, key: "a", .fail)
            #expect(await breakerCall(policy, key: "b", .succeed) == "ok")
            var sites: [String] = []
            for _ in 0..<2 {
                do {
                    _ = try await circuitBreaker(policy) { () throws -> Int in
                        throw BreakerFailure()
                    }
                } catch {
                    sites.append(breakerOutcome(error))
                }
            }
            #expect(sites == ["boom", "open(10000ms)"])
            // "a" and the call site's breaker are open; "b", healthy, has left.
            #expect(registry.snapshot().entries(.circuitBreaker).count == 2)
            #expect(breakerRow(registry, "b") == nil)
        }
    }

    @MainActor @Test func theOperationRunsInTheCallersIsolation() async throws {
        var count = 0  // main-actor state, touched without a hop
        // A registry of its own, so the shared one stays as other suites expect it.
        let value = try await TempoRegistry(clock: ContinuousClock()).withCurrent {
            try await circuitBreaker(identifier: "main") {
                MainActor.assertIsolated()
                count += 1
                return count
            }
        }
        #expect(value == 1)
    }
}
