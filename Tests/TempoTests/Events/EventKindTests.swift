import Synchronization
import TempoTesting
import Testing

@testable import Tempo

// One test per kind of event, on the manual clock: the events a sequence of calls reports,
// their order, instants, keys and values, exactly.

@Suite struct EventKindTests {
    @Test func aBreakerReportsEachChangeAndEachRejection() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let told = Log<String>()
            let policy = CircuitBreakerPolicy(
                failureRatio: 0.5, window: .lastCalls(2), minimumCalls: 2,
                breakDuration: .seconds(10), trialCalls: 1,
                onStateChange: { old, new in told.append("\(old) -> \(new)") })
            for step in [BreakerStep.fail, .fail, .succeed] {
                await breakerCall(policy, key: "pay", step)
            }
            await clock.advance(by: .seconds(4))
            await breakerCall(policy, key: "pay", .succeed)
            await clock.advance(by: .seconds(6))
            await breakerCall(policy, key: "pay", .succeed)
            #expect(
                await events.lines() == [
                    "0.0 seconds circuitBreaker pay: closed -> open",
                    "0.0 seconds circuitBreaker pay: rejected, trial in 10.0 seconds",
                    "4.0 seconds circuitBreaker pay: rejected, trial in 6.0 seconds",
                    "10.0 seconds circuitBreaker pay: open -> halfOpen",
                    "10.0 seconds circuitBreaker pay: halfOpen -> closed",
                ])
            // The policy's own callback is told the same changes.
            #expect(told.all == ["closed -> open", "open -> halfOpen", "halfOpen -> closed"])
        }
    }

    @Test func aBreakerOpenedClosedAndResetByHandReportsItsChanges() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            openCircuitBreaker(identifier: "pay")
            await breakerCall(CircuitBreakerPolicy(), key: "pay", .succeed)
            closeCircuitBreaker(identifier: "pay")
            openCircuitBreaker(identifier: "pay")
            await clock.advance(by: .seconds(1))
            resetCircuitBreaker(identifier: "pay")
            resetCircuitBreaker(identifier: "pay")  // nothing left to change
            #expect(
                await events.lines() == [
                    "0.0 seconds circuitBreaker pay: closed -> open",
                    "0.0 seconds circuitBreaker pay: rejected",
                    "0.0 seconds circuitBreaker pay: open -> closed",
                    "0.0 seconds circuitBreaker pay: closed -> open",
                    "1.0 seconds circuitBreaker pay: open -> closed",
                ])
        }
    }

    @Test func aRateLimitReportsRefusalsAtOnce() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let limit = RateLimit(2, per: .seconds(1))
            try takeRatePermit(limit, identifier: "api")
            await clock.advance(by: .milliseconds(250))
            try takeRatePermit(limit, identifier: "api")
            #expect(throws: RateLimitError.self) { try takeRatePermit(limit, identifier: "api") }
            await #expect(throws: RateLimitError.self) {
                try await rateLimit(limit, whenLimited: .reject, identifier: "api") {}
            }
            let window = RateLimit.window(1, per: .seconds(1), margin: .zero)
            try takeRatePermit(window, identifier: "win")
            #expect(throws: RateLimitError.self) { try takeRatePermit(window, identifier: "win") }
            #expect(
                await events.lines() == [
                    "0.25 seconds rateLimit api: refused after 0.0 seconds, free in 0.25 seconds",
                    "0.25 seconds rateLimit api: refused after 0.0 seconds, free in 0.25 seconds",
                    "0.25 seconds rateLimit win: refused after 0.0 seconds, free in 1.0 seconds",
                ])
        }
    }

    @Test func aRateLimitReportsAWaitWhenItBeginsAndWhenItEnds() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let limit = RateLimit(1, per: .seconds(1))
            try takeRatePermit(limit, identifier: "api")
            let waiting = await clock.start { try await rateLimit(limit, identifier: "api") {} }
            let second = await clock.start { try await rateLimit(limit, identifier: "api") {} }
            await clock.advance(by: .seconds(2))
            try await waiting.value()
            try await second.value()
            #expect(
                await events.lines() == [
                    "0.0 seconds rateLimit api: queued, permit in about 1.0 seconds",
                    "0.0 seconds rateLimit api: queued, permit in about 2.0 seconds",
                    "1.0 seconds rateLimit api: admitted after 1.0 seconds",
                    "2.0 seconds rateLimit api: admitted after 2.0 seconds",
                ])
        }
    }

    @Test func aRateLimitReportsAWaitThatRanOut() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let limit = RateLimit(1, per: .seconds(1))
            try takeRatePermit(limit, identifier: "api")
            let waiting = await clock.start {
                try await rateLimit(
                    limit, whenLimited: .wait(atMost: .milliseconds(300)), identifier: "api"
                ) {}
            }
            await clock.advance(by: .milliseconds(300))
            await #expect(throws: RateLimitError.self) { try await waiting.value() }
            #expect(
                await events.lines() == [
                    "0.0 seconds rateLimit api: queued, permit in about 1.0 seconds",
                    "0.3 seconds rateLimit api: refused after 0.3 seconds, free in 0.7 seconds",
                ])
        }
    }

    @Test func aRateLimitReportsAHoldAServerAskedFor() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let limit = RateLimit(10, per: .seconds(1)).holdingOnRetryAfter()
            await #expect(throws: SlowDown.self) {
                try await rateLimit(limit, identifier: "api") {
                    throw SlowDown(retryAfter: .seconds(2))
                }
            }
            // Without `holdingOnRetryAfter` the same error holds nothing and reports nothing.
            await #expect(throws: SlowDown.self) {
                try await rateLimit(RateLimit(10, per: .seconds(1)), identifier: "other") {
                    throw SlowDown(retryAfter: .seconds(2))
                }
            }
            #expect(
                await events.lines() == [
                    "0.0 seconds rateLimit api: held for 2.0 seconds by a retry-after"
                ])
        }
    }

    @Test func aConcurrencyLimitReportsQueueingAdmissionRefusalAndTimeout() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let log = Log<String>()
            let a = limitedCall("a", limit: 1, queue: 2, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            let b = limitedCall(
                "b", limit: 1, queue: 2, queueTimeout: .milliseconds(500), clock: clock,
                registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 1))
            let c = limitedCall("c", limit: 1, queue: 2, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 2))
            let d = limitedCall("d", limit: 1, queue: 2, clock: clock, registry: registry, log: log)
            #expect(await thrown(d) as? ConcurrencyLimitError == .queueFull(running: 1, queued: 2))
            await clock.advance(by: .seconds(2))
            #expect(await thrown(a) == nil)
            #expect(await thrown(b) as? ConcurrencyLimitError == .queueTimedOut(.milliseconds(500)))
            #expect(await thrown(c) == nil)
            #expect(
                await events.lines() == [
                    "0.0 seconds concurrencyLimit api: queued, 1 running, 1 queued",
                    "0.0 seconds concurrencyLimit api: queued, 1 running, 2 queued",
                    "0.0 seconds concurrencyLimit api: refused, 1 running, 2 queued",
                    "0.5 seconds concurrencyLimit api: queue timed out after 0.5 seconds",
                    "1.0 seconds concurrencyLimit api: admitted after 1.0 seconds",
                ])
        }
    }

    @Test func aConcurrencyLimitWithNoQueueTimeReportsATimeoutAtOnce() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let log = Log<String>()
            let a = limitedCall("a", limit: 1, clock: clock, registry: registry, log: log)
            #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
            let b = limitedCall(
                "b", limit: 1, queueTimeout: .zero, clock: clock, registry: registry, log: log)
            #expect(await thrown(b) as? ConcurrencyLimitError == .queueTimedOut(.zero))
            await clock.advance(by: .seconds(1))
            #expect(await thrown(a) == nil)
            #expect(
                await events.lines() == [
                    "0.0 seconds concurrencyLimit api: queue timed out after 0.0 seconds"
                ])
        }
    }

    @Test func retryReportsEachRetryAndWhyItStopped() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let attempts = Atomic<Int>(0)
            let call = await clock.start {
                try await retry(3, every: .seconds(1)) {
                    attempts.add(1, ordering: .relaxed)
                    throw Refused()
                }
            }
            await clock.advance(by: .seconds(2))
            await #expect(throws: Refused.self) { try await call.value() }
            let reported = await events.all()
            #expect(
                reported.map { "\($0.at) \($0.decision)" } == [
                    "0.0 seconds attempt 1 failed (refused), retry in 1.0 seconds",
                    "1.0 seconds attempt 2 failed (refused), retry in 1.0 seconds",
                    "2.0 seconds stopped after attempt 3 (refused): attempts exhausted",
                ])
            #expect(reported.allSatisfy { $0.helper == .retry })
            #expect(reported.allSatisfy { $0.key.hasPrefix("TempoTests/EventKindTests.swift:") })
            #expect(attempts.load(ordering: .relaxed) == 3)
        }
    }

    @Test func retryReportsAnErrorItMayNotRetry() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            await #expect(throws: Refused.self) {
                try await retry(3, backoff: .constant(.seconds(1)), shouldRetry: { _ in false }) {
                    throw Refused()
                }
            }
            #expect(
                await events.decisions() == [
                    "stopped after attempt 1 (refused): not retryable"
                ])
        }
    }

    @Test func retryReportsABudgetThatRefused() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let budget = RetryBudget(identifier: "api", ratio: 0, minimumPerSecond: 0)
            await #expect(throws: Refused.self) {
                try await retry(3, every: .seconds(1), budget: budget) { throw Refused() }
            }
            #expect(
                await events.decisions() == [
                    "stopped after attempt 1 (refused): budget api refused"
                ])
        }
    }

    @Test func retryReportsATimeBudgetThatRanOut() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let call = await clock.start {
                try await retry(5, every: .seconds(1), timeBudget: .milliseconds(1_500)) {
                    throw Refused()
                }
            }
            await clock.advance(by: .seconds(1))
            await #expect(throws: Refused.self) { try await call.value() }
            #expect(
                await events.all().map { "\($0.at) \($0.decision)" } == [
                    "0.0 seconds attempt 1 failed (refused), retry in 1.0 seconds",
                    "1.0 seconds stopped after attempt 2 (refused): time budget exhausted",
                ])
        }
    }

    @Test func hedgeReportsTheHedgesItStartsAndTheWinner() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let call = await clock.start {
                try await hedge(maxAttempts: 3, after: .milliseconds(100), identifier: "read") {
                    attempt in
                    try await clock.sleep(for: .milliseconds(attempt == 2 ? 50 : 1_000))
                    return attempt
                }
            }
            await clock.advance(by: .milliseconds(150))
            #expect(try await call.value() == 2)
            #expect(
                await events.lines() == [
                    "0.1 seconds hedge read: hedge 2 started",
                    "0.15 seconds hedge read: attempt 2 won",
                ])
        }
    }

    @Test func hedgeReportsAFailureThatStartsTheNextAttemptAndAllFailing() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let call = await clock.start {
                try await hedge(maxAttempts: 2, after: .seconds(10), identifier: "read") {
                    _ in
                    try await clock.sleep(for: .milliseconds(10))
                    throw Refused()
                }
            }
            await clock.advance(by: .milliseconds(20))
            await #expect(throws: HedgingError.self) { try await call.value() }
            #expect(
                await events.lines() == [
                    "0.01 seconds hedge read: hedge 2 started",
                    "0.02 seconds hedge read: all 2 attempts failed",
                ])
        }
    }

    @Test func aTimeoutReportsItsDeadline() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let call = await clock.start {
                try await timeout(.seconds(2)) { try await clock.sleep(for: .seconds(5)) }
            }
            await clock.advance(by: .seconds(2))
            await #expect(throws: TimeoutError.timedOut(.seconds(2))) { try await call.value() }
            await #expect(throws: TimeoutError.timedOut(.zero)) {
                try await timeout(.zero) { 1 }
            }
            let reported = await events.all()
            #expect(
                reported.map { "\($0.at) \($0.helper) \($0.decision)" } == [
                    "2.0 seconds timeout timed out after 2.0 seconds",
                    "2.0 seconds timeout timed out after 0.0 seconds",
                ])
        }
    }

    @Test func aDecisionThatSucceedsReportsNothing() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            try takeRatePermit(RateLimit(1, per: .seconds(1)), identifier: "api")
            try await concurrencyLimit(1, identifier: "one") {}
            _ = try await retry(3) { 1 }
            _ = try await timeout(.seconds(1)) { 1 }
            _ = try await hedge(after: .seconds(1)) { _ in 1 }
            try await circuitBreaker(identifier: "pay") {}
            let reported = await events.all()
            #expect(reported.map { "\($0.helper) \($0.decision)" } == ["hedge attempt 1 won"])
        }
    }
}

@Suite struct EventDecisionTests {
    static let all: [TempoEvent.Decision] = [
        .breakerChanged(from: .closed, to: .open), .breakerRejected(retryAfter: nil),
        .rateLimitQueued(estimatedWait: .seconds(1)), .rateLimitAdmitted(waited: .seconds(2)),
        .rateLimitRefused(retryAfter: .seconds(3), waited: .seconds(4)),
        .rateLimitHeld(for: .seconds(5)), .concurrencyLimitQueued(running: 1, queued: 2),
        .concurrencyLimitAdmitted(waited: .seconds(6)),
        .concurrencyLimitRefused(running: 1, queued: 2),
        .concurrencyLimitTimedOut(waited: .seconds(7)),
        .retryScheduled(attempt: 1, error: Refused(), delay: .seconds(8)),
        .retryStopped(attempt: 2, error: Refused(), reason: .notRetryable),
        .hedgeStarted(attempt: 2), .hedgeWon(attempt: 1), .hedgeFailed(attempts: 3),
        .timedOut(after: .seconds(9)), .callDropped, .callRan,
    ]

    func index(of decision: TempoEvent.Decision) -> Int {
        Self.all.firstIndex { "\($0)" == "\(decision)" }!
    }

    @Test func eachNameIsItsCasesName() {
        for decision in Self.all {
            // A case with values reflects as its name and its payload; one without, by index.
            let label =
                Mirror(reflecting: decision).children.first?.label
                ?? ["callDropped", "callRan"][Self.all.count - 1 == index(of: decision) ? 1 : 0]
            #expect(decision.name == label, "\(decision)")
        }
        #expect(Set(Self.all.map(\.name)).count == Self.all.count)
    }

    @Test func theWaitIsTheDurationADecisionWaitedOrIsToWait() {
        #expect(
            Self.all.map { $0.wait.map { Int($0 / .seconds(1)) } } == [
                nil, nil, 1, 2, 4, 5, nil, 6, nil, 7, 8, nil, nil, nil, nil, nil, nil, nil,
            ])
    }

    @Test func aRetryStopSaysWhy() {
        #expect(
            [
                TempoEvent.RetryStop.attemptsExhausted, .notRetryable,
                .budgetRefused(budget: "api"), .timeBudgetExhausted,
            ].map(\.description) == [
                "attempts exhausted", "not retryable", "budget api refused",
                "time budget exhausted",
            ])
    }
}

@Suite struct GroupEventTests {
    @Test func aDebounceReportsEachCallItDropsAndEachItRuns() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            for _ in 0..<3 { debounce(.seconds(1), identifier: "search", by: .taskContext) {} }
            await clock.advance(by: .seconds(1))
            debounce(.seconds(1), identifier: "search", by: .taskContext) {}
            flushDebounce(identifier: "search")
            debounce(.seconds(1), identifier: "search", by: .taskContext) {}
            cancelDebounce(identifier: "search")
            debounce(.seconds(1), identifier: "save", by: .taskContext) {}
            registry.flushAll()
            #expect(
                await events.lines() == [
                    "0.0 seconds debounce search: dropped",
                    "0.0 seconds debounce search: dropped",
                    "1.0 seconds debounce search: ran",
                    "1.0 seconds debounce search: ran",
                    "1.0 seconds debounce search: dropped",
                    "1.0 seconds debounce save: ran",
                ])
        }
    }

    @Test func aThrottleReportsTheCallsItRunsAndDrops() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            for _ in 0..<3 {
                throttle(.seconds(1), identifier: "scroll", by: .taskContext, option: .ensureLast) {
                }
            }
            await clock.advance(by: .seconds(1))
            #expect(
                await events.lines() == [
                    "0.0 seconds throttle scroll: ran",
                    "0.0 seconds throttle scroll: dropped",
                    "1.0 seconds throttle scroll: ran",
                ])
        }
    }

    @Test func aDebouncerGoingAwayReportsItsDroppedCall() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            do {
                let saver = Debouncer(.seconds(1), registry: registry)
                saver.callAsFunction {}
            }
            #expect(await events.decisions() == ["dropped"])
        }
    }
}
