import Synchronization
import Tempo
import TempoTesting
import Testing

/// What an advance waits for when an operation the engine launched waits, in turn, for Tempo
/// work of the same clock: the operation counts as asleep on the clock while it waits, and as
/// running again once what it waited for has handed it its outcome. Each advance runs under
/// `finishes`, so an advance that waits for itself fails the test in seconds.
@Suite struct ManualClockNestedWorkTests {
    /// Runs `body` inside an operation a delay of 1 s launched, then advances 2 s. Returns
    /// whether the advance returned and whether `body` had finished by then.
    private func insideAnOperation(
        _ body: @escaping @Sendable (ManualClock) async throws -> Void
    ) async -> (returned: Bool, finished: Bool) {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let finished = Flag()
        let returned = await finishes {
            await registry.withCurrent {
                delay(.seconds(1), by: .taskContext) {
                    try await body(clock)
                    finished.set()
                }
                await clock.advance(by: .seconds(2))
            }
        }
        return (returned, finished.isSet)
    }

    @Test func anAwaitedHedgeInsideAnOperation() async {
        let seen = Lock<Int>(0)
        let outcome = await insideAnOperation { clock in
            let attempt = try await hedge(maxAttempts: 2, after: .milliseconds(50)) { attempt in
                if attempt == 1 { try await clock.sleep(for: .seconds(10)) }
                return attempt
            }
            seen.withLock { $0 = attempt }
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
        #expect(seen.withLock { $0 } == 2)
    }

    @Test func anAwaitedDebounceResultInsideAnOperation() async {
        let outcome = await insideAnOperation { _ in
            let value = try await debounceResult(
                .milliseconds(100), identifier: "inner", by: .taskContext
            ) { 7 }
            #expect(value == 7)
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
    }

    @Test func anAwaitedTrailingThrottleResultInsideAnOperation() async {
        let outcome = await insideAnOperation { _ in
            let value = try await throttleResult(
                .milliseconds(100), identifier: "inner", by: .taskContext, option: .trailing
            ) { 7 }
            #expect(value == 7)
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
    }

    @Test func theValueOfANestedDelayInsideAnOperation() async {
        let inner = Flag()
        let outcome = await insideAnOperation { _ in
            await delay(.milliseconds(500), by: .taskContext) { inner.set() }.value
            #expect(inner.isSet)
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
    }

    @Test func theValueOfANestedExecuteInsideAnOperation() async {
        let outcome = await insideAnOperation { _ in
            await execute(with: .milliseconds(500), on: .taskContext) {}.value
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
    }

    @Test func theValueOfANestedDebouncerTaskInsideAnOperation() async {
        let inner = Flag()
        let outcome = await insideAnOperation { _ in
            let saver = Debouncer(.milliseconds(300), by: .taskContext)
            await saver { inner.set() }.value
            #expect(inner.isSet)
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
    }

    @Test func theValueOfANestedRepeatInsideAnOperation() async {
        let runs = Lock<Int>(0)
        let outcome = await insideAnOperation { _ in
            await `repeat`(every: .milliseconds(200), times: 3, by: .taskContext) {
                runs.withLock { $0 += 1 }
            }.value
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
        #expect(runs.withLock { $0 } == 3)
    }

    @Test func anOperationStillRunsWhileANestedTaskItDidNotAwaitIsPending() async {
        // The nested delay comes due after the advance: the operation goes on and finishes.
        let outcome = await insideAnOperation { _ in
            delay(.seconds(5), by: .taskContext) {}
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
    }

    @Test func aNestedTaskThatFinishesWhileTheOperationSleepsLeavesItAsleep() async {
        // The operation sleeps on the clock past the advance; the nested delay it started
        // ends during the advance. The operation must still count as asleep.
        let outcome = await insideAnOperation { clock in
            delay(.milliseconds(200), by: .taskContext) {}
            try await clock.sleep(for: .seconds(5))
        }
        #expect(outcome.returned)
        #expect(!outcome.finished)
    }

    @Test func aRetryWaitInsideAnOperation() async {
        let tries = Lock<Int>(0)
        let outcome = await insideAnOperation { _ in
            try await retry(3, every: .milliseconds(100)) {
                let attempt = tries.withLock {
                    $0 += 1
                    return $0
                }
                if attempt < 3 { throw Boom() }
            }
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
        #expect(tries.withLock { $0 } == 3)
    }

    @Test func aQueuedConcurrencyLimitCallInsideAnOperation() async {
        let outcome = await insideAnOperation { clock in
            async let holder: Void = concurrencyLimit(1, identifier: "inner") {
                try await clock.sleep(for: .milliseconds(300))
            }
            try await Task.sleep(for: .milliseconds(20))
            try await concurrencyLimit(1, identifier: "inner") {}
            try await holder
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
    }

    /// The slot is held by a plain task, so nothing but the queued call keeps the operation
    /// counted as asleep.
    @Test func aCallQueuedInsideAnOperationBehindAPlainTaskRunsWithinTheAdvance() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let seen = Flag()
        let returned = await finishes {
            await registry.withCurrent {
                let finished = Flag()
                let holder = Task {
                    try await concurrencyLimit(1, identifier: "k") {
                        try await clock.sleep(for: .milliseconds(1_500))
                    }
                }
                await clock.waitForSleepers(1)
                delay(.seconds(1), by: .taskContext) {
                    try await concurrencyLimit(1, identifier: "k") {}
                    finished.set()
                }
                await clock.advance(by: .seconds(2))
                if finished.isSet { seen.set() }
                _ = await holder.result
            }
        }
        #expect(returned)
        #expect(seen.isSet)
    }

    @Test func aRateLimitWaitInsideAnOperation() async {
        let outcome = await insideAnOperation { _ in
            let limit = RateLimit(1, per: .milliseconds(200))
            try await rateLimit(limit, identifier: "inner") {}
            try await rateLimit(limit, identifier: "inner") {}
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
    }

    @Test func aTimeoutWhoseOperationSleepsOnTheClockInsideAnOperation() async {
        let outcome = await insideAnOperation { clock in
            try await timeout(.seconds(5)) { try await clock.sleep(for: .milliseconds(300)) }
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
    }

    @Test func aTimeoutWhoseOperationAwaitsANestedDelayInsideAnOperation() async {
        let outcome = await insideAnOperation { _ in
            try await timeout(.seconds(5)) {
                await delay(.milliseconds(300), by: .taskContext) {}.value
            }
        }
        #expect(outcome.returned)
        #expect(outcome.finished)
    }

    // MARK: timeout

    /// The deadline timer of `timeout` is not the operation being asleep: an operation that
    /// works off the clock inside a `timeout` is waited for.
    @Test func advanceWaitsForAnOperationThatWorksOffTheClockInsideTimeout() async {
        var early = 0
        for _ in 0..<5 {
            let clock = ManualClock()
            let registry = TempoRegistry(clock: clock)
            let finished = Flag()
            let returned = await finishes {
                await registry.withCurrent {
                    delay(.seconds(1), by: .taskContext) {
                        try await timeout(.seconds(30)) {
                            try await Task.sleep(for: .milliseconds(300))
                            finished.set()
                        }
                    }
                    await clock.advance(by: .seconds(1))
                }
            }
            #expect(returned)
            if !finished.isSet { early += 1 }
        }
        #expect(early == 0)
    }

    /// The deadline fires when an advance reaches it while the operation sleeps on the clock:
    /// the caller has `TimeoutError` in hand when the advance returns.
    @Test func theDeadlineOfATimeoutFiresWhileItsOperationSleepsOnTheClock() async {
        for _ in 0..<20 {
            let clock = ManualClock()
            let registry = TempoRegistry(clock: clock)
            let caught = Lock<(any Error)?>(nil)
            let returned = await finishes {
                await registry.withCurrent {
                    delay(.seconds(1), by: .taskContext) {
                        do {
                            try await timeout(.seconds(2)) {
                                try await clock.sleep(for: .seconds(10))
                            }
                        } catch {
                            caught.withLock { $0 = error }
                        }
                    }
                    await clock.advance(by: .seconds(2))
                    #expect(caught.withLock { $0 } == nil)
                    await clock.advance(by: .seconds(1))
                }
            }
            #expect(returned)
            #expect(caught.withLock { $0 } as? TimeoutError == .timedOut(.seconds(2)))
        }
    }

    /// A task (not an engine operation) that calls `timeout` on the registry's clock: the
    /// deadline is a sleeper, and advancing to it throws.
    @Test func aTimeoutInAPlainTaskStillTimesOut() async {
        await onManualClock { clock, _ in
            let call = Task {
                try await timeout(.seconds(1)) { try await clock.sleep(for: .seconds(5)) }
            }
            await clock.waitForSleepers(2)
            await clock.advance(by: .seconds(1))
            await #expect(throws: TimeoutError.timedOut(.seconds(1))) { try await call.value }
        }
    }

    // MARK: runUntilIdle

    @Test @MainActor func runUntilIdleWaitsForFlushedWork() async {
        var late = 0
        for _ in 0..<10 {
            let clock = ManualClock()
            let registry = TempoRegistry(clock: clock)
            let flag = Flag()
            let seen = Flag()
            let returned = await finishes {
                await registry.withCurrent {
                    debounce(.seconds(1), identifier: "save") { @MainActor in
                        try await Task.sleep(for: .zero)
                        flag.set()
                    }
                    flushDebounce(identifier: "save")
                    await clock.runUntilIdle()
                    if flag.isSet { seen.set() }
                }
            }
            #expect(returned)
            if !seen.isSet { late += 1 }
        }
        #expect(late == 0)
    }

    @Test func runUntilIdleWaitsForWorkAlreadyRunning() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let flag = Flag()
        let seen = Flag()
        let returned = await finishes {
            await registry.withCurrent {
                throttle(.seconds(1), identifier: "t", by: .ownedActor) {
                    try await Task.sleep(for: .milliseconds(100))
                    flag.set()
                }
                await clock.runUntilIdle()
                if flag.isSet { seen.set() }
            }
        }
        #expect(returned)
        #expect(seen.isSet)
    }
}
