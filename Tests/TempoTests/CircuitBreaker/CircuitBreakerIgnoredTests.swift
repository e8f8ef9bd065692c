import Synchronization
import TempoTesting
import Testing

@testable import Tempo

// The third class of outcome: an ignored error counts neither as a failure nor as a success.
// Tempo's own refusals (a rate limit's, a concurrency limit's, an inner breaker's) are ignored
// whatever the policy's predicates say; `isIgnored` adds more. Closed, an ignored outcome is
// not in the window; half-open, an ignored trial frees its slot and changes nothing.

/// An error Tempo throws in place of calling the operation, for a parameterized test.
struct BreakerRefusal: Sendable, CustomTestStringConvertible {
    var error: any Error
    var testDescription: String { "\(error)" }

    static let all: [BreakerRefusal] =
        ([
            RateLimitError.limited(retryAfter: .seconds(1)),
            RateLimitError.cannotAdmit(weight: 2, burst: 1),
            ConcurrencyLimitError.queueFull(running: 1, queued: 0),
            ConcurrencyLimitError.queueTimedOut(.seconds(1)),
            ConcurrencyLimitError.reset,
            ConcurrencyLimitError.invalidLimit(0),
            ConcurrencyLimitError.invalidQueueLimit(-1),
            CircuitBreakerError.open(retryAfter: .seconds(1)),
            CircuitBreakerError.open(retryAfter: nil),
            CircuitBreakerError.invalidPolicy("inner"),
        ] as [any Error]).map { BreakerRefusal(error: $0) }
}

@Suite struct CircuitBreakerIgnoredTests {
    /// Opens at half failures of the last 4 calls, once 4 are in; breaks for 10 s.
    static func policy(
        ratio: Double = 0.5, minimumCalls: Int = 4, trials: Int = 1, log: Log<String>? = nil
    ) -> CircuitBreakerPolicy {
        CircuitBreakerPolicy(
            failureRatio: ratio, window: .lastCalls(4), minimumCalls: minimumCalls,
            breakDuration: .seconds(10), trialCalls: trials,
            onStateChange: log.map(breakerChangeLog))
    }

    /// The failure classifiers a user may write: the defaults must hold under each.
    static let classifiers: [@Sendable (any Error) -> Bool] = [
        { _ in true }, { _ in false }, { !($0 is RateLimitError) },
    ]

    /// Opens `key`'s breaker with one failure (the policy opens on one) and waits out the
    /// break: the next call finds it half-open.
    static func halfOpen(
        _ policy: CircuitBreakerPolicy, key: String, clock: ManualClock
    ) async {
        #expect(await breakerCall(policy, key: key, .fail) == "boom")
        await clock.advance(by: .seconds(10))
    }

    // The case: `isFailure = { !($0 is RateLimitError) }` made the limiter's refusal a
    // success, and a half-open breaker closed on it with the service still down.
    @Test func aRefusingRateLimitInsideAHalfOpenBreakerNeitherClosesNorReopensIt() async {
        await onManualClock { clock, registry in
            let changes = Log<String>()
            let policy = CircuitBreakerPolicy(
                failureRatio: 1, minimumCalls: 1, breakDuration: .seconds(10),
                isFailure: { !($0 is RateLimitError) }, onStateChange: breakerChangeLog(changes))
            let limit = RateLimit(1, per: .seconds(1))
            let ran = Log<String>()
            func call(_ step: BreakerStep) async -> String {
                do {
                    return try await circuitBreaker(policy, identifier: "svc") {
                        try await rateLimit(limit, whenLimited: .reject, identifier: "svc") {
                            ran.append("svc")
                            return try step.end()
                        }
                    }
                } catch {
                    return breakerOutcome(error)
                }
            }
            #expect(await call(.fail) == "boom")  // the service is down: the breaker opens
            #expect(breakerState(registry, "svc") == .open)
            await clock.advance(by: .seconds(10))
            // Another caller takes the limiter's one permit: the trial is refused by it, twice.
            #expect(throws: Never.self) { try takeRatePermit(limit, identifier: "svc") }
            #expect(await call(.succeed) == "refused")
            #expect(await call(.succeed) == "refused")
            #expect(ran.count == 1)
            let row = breakerRow(registry, "svc")
            #expect(row?.state == .halfOpen)
            #expect(row?.calls == 0)  // the trial slot is free again
            #expect(changes.all == ["closed>open", "open>halfOpen"])
            // A permit is free: the next call is the trial and reaches the service, still down.
            await clock.advance(by: .seconds(1))
            #expect(await call(.fail) == "boom")
            #expect(ran.count == 2)
            #expect(changes.all == ["closed>open", "open>halfOpen", "halfOpen>open"])
            #expect(breakerRow(registry, "svc")?.reopensAt == .seconds(21))
        }
    }

    @Test func ignoredOutcomesAreNotInTheClosedWindow() async {
        for classifier in Self.classifiers {
            await onManualClock { clock, registry in
                var policy = Self.policy()
                policy.isFailure = { $0 is BreakerFailure || classifier($0) }
                for step in [BreakerStep.fail, .succeed, .succeed, .refuse, .refuse, .refuse] {
                    await breakerCall(policy, key: "k", step)
                }
                // Counted as failures, the refusals would open it; as successes, they would
                // push the failure out of the window.
                let row = breakerRow(registry, "k")
                #expect(row?.state == .closed)
                #expect(row?.calls == 3)
                #expect(row?.failures == 1)
                await breakerCall(policy, key: "k", .fail)  // 2 of 4
                #expect(breakerState(registry, "k") == .open)
            }
        }
    }

    @Test func ignoredOutcomesAloneLeaveNothingBehind() async {
        await onManualClock { clock, registry in
            let policy = Self.policy(ratio: 1, minimumCalls: 1)
            #expect(await breakerCall(policy, key: "k", .refuse) == "refused")
            #expect(breakerRow(registry, "k") == nil)
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func anIgnoredTrialFreesItsSlot() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let policy = Self.policy(ratio: 1, minimumCalls: 1, trials: 2, log: log)
            await Self.halfOpen(policy, key: "k", clock: clock)
            #expect(await breakerCall(policy, key: "k", .refuse) == "refused")
            #expect(breakerRow(registry, "k")?.calls == 0)
            #expect(await breakerCall(policy, key: "k", .succeed) == "ok")
            #expect(breakerRow(registry, "k")?.calls == 1)
            #expect(await breakerCall(policy, key: "k", .refuse) == "refused")
            let row = breakerRow(registry, "k")
            #expect(row?.state == .halfOpen)
            #expect(row?.calls == 1)
            #expect(await breakerCall(policy, key: "k", .succeed) == "ok")
            #expect(breakerRow(registry, "k") == nil)
            #expect(log.all == ["closed>open", "open>halfOpen", "halfOpen>closed"])
        }
    }

    @Test func aHeldTrialEndingIgnoredShowsItsSlotFreeInTheSnapshot() async {
        await onManualClock { clock, registry in
            let policy = Self.policy(ratio: 1, minimumCalls: 1)
            await Self.halfOpen(policy, key: "k", clock: clock)
            let trial = await gatedBreakerCall(policy, key: "k", registry: registry)
            #expect(breakerRow(registry, "k")?.calls == 1)
            #expect(await breakerCall(policy, key: "k", .succeed) == "open(?)")
            trial.gate.open(.refuse)
            #expect(await trial.task.value == "refused")
            let row = breakerRow(registry, "k")
            #expect(row?.state == .halfOpen)
            #expect(row?.calls == 0)
            #expect(registry.snapshot().description.contains("halfOpen, 0 of 0 calls failed"))
            let ran = Log<String>()
            #expect(await breakerCall(policy, key: "k", .succeed, ran: ran) == "ok")
            #expect(ran.count == 1)
            #expect(breakerRow(registry, "k") == nil)
        }
    }

    @Test(arguments: BreakerRefusal.all)
    func eachOfTempoRefusalsIsIgnoredByDefault(_ refusal: BreakerRefusal) async {
        for classifier in [nil] + Self.classifiers.map(Optional.some) {
            await onManualClock { clock, registry in
                let log = Log<String>()
                var policy = Self.policy(ratio: 1, minimumCalls: 1, log: log)
                if let classifier { policy.isFailure = classifier }
                let error = refusal.error
                func refused() async {
                    do {
                        _ = try await circuitBreaker(policy, identifier: "k") { () throws -> Int in
                            throw error
                        }
                    } catch {
                        #expect("\(error)" == "\(refusal.error)")
                    }
                }
                // Closed: one failure would open it.
                await refused()
                #expect(breakerRow(registry, "k") == nil)
                // Half-open: neither closed nor reopened, and the slot is free.
                policy.isFailure = { _ in true }
                await Self.halfOpen(policy, key: "k", clock: clock)
                if let classifier { policy.isFailure = classifier }
                await refused()
                #expect(breakerState(registry, "k") == .halfOpen)
                #expect(breakerRow(registry, "k")?.calls == 0)
                #expect(log.all == ["closed>open", "open>halfOpen"])
            }
        }
    }

    @Test func aConcurrencyLimitSRefusalsInsideTheBreakerAreIgnored() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let policy = Self.policy(ratio: 1, minimumCalls: 1, log: log)
            let ran = Log<String>()
            func call(queue: Int, queueTimeout: Duration?) async -> String {
                do {
                    return try await circuitBreaker(policy, identifier: "db") {
                        try await concurrencyLimit(
                            1, queue: queue, queueTimeout: queueTimeout, identifier: "db"
                        ) {
                            ran.append("db")
                            return "ok"
                        }
                    }
                } catch {
                    return "\(error)"
                }
            }
            // While one call holds the limit's only slot, a call finds the queue full, and
            // one that may not wait times out at once.
            func refusedTwice() async {
                let gate = BreakerGate()
                let holder = Task {
                    await registry.withCurrent {
                        try? await concurrencyLimit(1, identifier: "db") { _ = await gate.wait() }
                    }
                }
                #expect(await eventually { gate.isWaiting })
                #expect(
                    await call(queue: 0, queueTimeout: nil) == "queueFull(running: 1, queued: 0)")
                #expect(
                    await call(queue: 1, queueTimeout: .zero)
                        == "\(ConcurrencyLimitError.queueTimedOut(.zero))")
                gate.open(.succeed)
                await holder.value
            }
            // Closed: not counted, so the breaker leaves.
            await refusedTwice()
            #expect(breakerRow(registry, "db") == nil)
            // Half-open: the refused trials change nothing.
            await Self.halfOpen(policy, key: "db", clock: clock)
            await refusedTwice()
            #expect(breakerState(registry, "db") == .halfOpen)
            #expect(breakerRow(registry, "db")?.calls == 0)
            #expect(ran.count == 0)
            #expect(await call(queue: 0, queueTimeout: nil) == "ok")
            #expect(log.all == ["closed>open", "open>halfOpen", "halfOpen>closed"])
        }
    }

    @Test func anOpenInnerBreakerIsIgnoredByTheOuterOne() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            let outer = Self.policy(ratio: 1, minimumCalls: 1, log: log)
            func call() async -> String {
                do {
                    return try await circuitBreaker(outer, identifier: "outer") {
                        try await circuitBreaker(identifier: "inner") { "ok" }
                    }
                } catch {
                    return breakerOutcome(error)
                }
            }
            openCircuitBreaker(identifier: "inner")
            #expect(await call() == "open(?)")
            #expect(breakerRow(registry, "outer") == nil)
            await Self.halfOpen(outer, key: "outer", clock: clock)
            #expect(await call() == "open(?)")
            #expect(breakerState(registry, "outer") == .halfOpen)
            #expect(breakerRow(registry, "outer")?.calls == 0)
            closeCircuitBreaker(identifier: "inner")
            #expect(await call() == "ok")
            #expect(log.all == ["closed>open", "open>halfOpen", "halfOpen>closed"])
        }
    }

    @Test func errorsTheUserMarksAreIgnoredInEveryState() async {
        await onManualClock { clock, registry in
            let log = Log<String>()
            var policy = Self.policy(ratio: 1, minimumCalls: 1, log: log)
            policy.isIgnored = { $0 is BreakerIgnored }
            #expect(await breakerCall(policy, key: "k", .ignore) == "ignored")
            #expect(breakerRow(registry, "k") == nil)
            await Self.halfOpen(policy, key: "k", clock: clock)
            #expect(await breakerCall(policy, key: "k", .ignore) == "ignored")
            #expect(breakerState(registry, "k") == .halfOpen)
            #expect(breakerRow(registry, "k")?.calls == 0)
            #expect(await breakerCall(policy, key: "k", .succeed) == "ok")
            #expect(log.all == ["closed>open", "open>halfOpen", "halfOpen>closed"])
            // Not marked, the same error is a failure, as before.
            #expect(
                await breakerCall(Self.policy(ratio: 1, minimumCalls: 1), key: "k", .ignore)
                    == "ignored")
            #expect(breakerState(registry, "k") == .open)
        }
    }

    @Test func ignoredWinsOverTheFailureClassifier() async {
        for classifier in Self.classifiers {
            await onManualClock { clock, registry in
                var policy = Self.policy(ratio: 1, minimumCalls: 1)
                policy.isFailure = { $0 is BreakerFailure || classifier($0) }
                policy.isIgnored = { $0 is BreakerIgnored }
                #expect(await breakerCall(policy, key: "k", .ignore) == "ignored")
                #expect(breakerRow(registry, "k") == nil)
                await Self.halfOpen(policy, key: "k", clock: clock)
                #expect(await breakerCall(policy, key: "k", .ignore) == "ignored")
                #expect(breakerState(registry, "k") == .halfOpen)
                #expect(breakerRow(registry, "k")?.calls == 0)
            }
        }
    }

    @Test func thePredicatesAreNotAskedAboutWhatIsIgnoredAlways() async {
        await onManualClock { clock, registry in
            let asked = Log<String>()
            var policy = Self.policy()
            policy.isFailure = { error in
                asked.append("isFailure \(breakerOutcome(error))")
                return true
            }
            policy.isIgnored = { error in
                asked.append("isIgnored \(breakerOutcome(error))")
                return false
            }
            for step in [BreakerStep.refuse, .cancel, .succeed, .ignore, .fail] {
                await breakerCall(policy, key: "k", step)
            }
            #expect(
                asked.all == [
                    "isIgnored ignored", "isFailure ignored", "isIgnored boom", "isFailure boom",
                ])
        }
    }
}
