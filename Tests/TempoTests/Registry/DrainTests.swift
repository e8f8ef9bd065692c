import Tempo
import TempoTesting
import Testing

/// `drain(within:)` on the manual clock: it flushes, waits for what the registry launched and for
/// pending delays, honours its time limit, and reports what it left.
@Suite struct DrainTests {
    @Test func aDrainRunsPendingCallsAndWaitsForThemToFinish() async throws {
        let log = Log<String>()
        try await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "save", by: .taskContext) { () async throws in
                log.append("save started")
                // Asleep on the clock: the drain waits until the test moves it on. (On
                // `.taskContext`: an `.ownedActor` run would hold that actor's turn while asleep.)
                try await clock.sleep(for: .milliseconds(300))
                log.mark("save ended", registry)
            }
            throttle(.seconds(1), identifier: "sync", by: .mainActor, option: .trailing) {
                log.append("sync")
            }
            let drained = await clock.start { await registry.drain() }
            try #require(await eventually(within: .seconds(30)) { log.count == 2 })
            #expect(log.all.sorted() == ["save started", "sync"])
            await clock.advance(by: .milliseconds(300))
            let report = try await drained.outcome()
            #expect(report.isComplete)
            #expect(report.runningOperations == 0)
            #expect(report.pending.isEmpty)
            #expect(report.endedAt == .milliseconds(300))
            #expect(log.all.last == "save ended@300")
            #expect("\(report)" == "drain complete after 300.0 ms")
        }
    }

    @Test func anIdleRegistryDrainsAtOnce() async {
        await onManualClock { clock, registry in
            let report = await registry.drain()
            #expect(report.isComplete)
            #expect(report.startedAt == .zero && report.endedAt == .zero)
            #expect(report.snapshot.isEmpty)
            #expect(!registry.snapshot().isDraining)
        }
    }

    @Test func aDrainWaitsForPendingDelays() async throws {
        let log = Log<String>()
        try await onManualClock { clock, registry in
            delay(.seconds(2), by: .taskContext) { log.mark("delay", registry) }
            let drained = await clock.start { await registry.drain() }
            await clock.advance(by: .seconds(1))
            #expect(log.all.isEmpty)
            await clock.advance(by: .seconds(1))
            let report = try await drained.outcome()
            #expect(report.isComplete)
            #expect(report.endedAt == .seconds(2))
            #expect(log.all == ["delay@2000"])
        }
    }

    @Test func aTimeLimitEndsTheDrainAndReportsWhatIsLeft() async throws {
        let log = Log<String>()
        try await onManualClock { clock, registry in
            delay(.seconds(30), by: .taskContext) { log.mark("late", registry) }
            debounce(.seconds(1), identifier: "slow", by: .taskContext) { () async throws in
                try await clock.sleep(for: .seconds(60))
                log.mark("slow", registry)
            }
            let drained = await clock.start { await registry.drain(within: .seconds(5)) }
            await clock.advance(by: .seconds(5))
            let report = try await drained.outcome()
            #expect(!report.isComplete)
            #expect(report.runningOperations == 1)
            #expect(report.pending.map(\.kind) == [.delay])
            #expect(report.endedAt == .seconds(5))
            let expected =
                "drain stopped at its time limit after 5.000 s: 1 operation still running\ndelay"
            #expect("\(report)".hasPrefix(expected))
            // Nothing was cancelled: the delay still runs at its time.
            await clock.advance(by: .seconds(25))
            #expect(log.all == ["late@30000"])
            await clock.advance(by: .seconds(35))
            #expect(log.all == ["late@30000", "slow@60000"])
        }
    }

    @Test(arguments: [Duration.zero, .seconds(-1), .nanoseconds(-1)])
    func aLimitOfZeroOrLessFlushesAndReportsAtOnce(limit: Duration) async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "save", by: .taskContext) { log.append("save") }
            delay(.seconds(1), by: .taskContext) { log.append("delay") }
            let report = await registry.drain(within: limit)
            #expect(log.all == ["save"])
            #expect(!report.isComplete)
            #expect(report.pending.map(\.kind) == [.delay])
            #expect(report.endedAt == .zero)
            #expect(clock.sleeperCount == 1)  // the delay's timer; no timer of the drain's
        }
    }

    @Test func aLimitOfZeroWithNothingLeftIsComplete() async {
        await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "save", by: .taskContext) {}
            #expect(await registry.drain(within: .zero).isComplete)
        }
    }

    @Test func callsMadeDuringADrainRunAtOnce() async throws {
        let log = Log<String>()
        try await onManualClock { clock, registry in
            // Work that leads to more work: each save debounces a sync, which the drain runs
            // at once rather than a second later.
            debounce(.seconds(1), identifier: "save", by: .taskContext) { () async throws in
                log.mark("save", registry)
                debounce(.seconds(1), identifier: "sync", by: .mainActor) {
                    log.mark("sync", registry)
                }
            }
            let report = try await (await clock.start { await registry.drain() }).outcome()
            #expect(report.isComplete)
            #expect(log.all == ["save@0", "sync@0"])
            #expect(registry.liveKeyCount == 0)
            // After the drain, calls wait again.
            debounce(.seconds(1), identifier: "sync", by: .taskContext) {
                log.mark("after", registry)
            }
            #expect(registry.pendingDebounce(identifier: "sync") != nil)
        }
    }

    @Test func callsFromOutsideDuringADrainRunInsteadOfWaiting() async throws {
        let log = Log<String>()
        try await onManualClock { clock, registry in
            let gate = ManualClock()  // only slept on: holds the drain open
            debounce(.seconds(1), identifier: "hold", by: .taskContext) { () async throws in
                try await gate.sleep(for: .seconds(1))
            }
            let drained = await clock.start { await registry.drain() }
            // `start` returned: the drain has flushed and waits.
            #expect(registry.snapshot().isDraining)
            for i in 1...3 {
                throttle(.seconds(10), identifier: "t", by: .taskContext, option: .ensureLast) {
                    log.mark("t\(i)", registry)
                }
            }
            // The first runs as leading; each later one, kept for the window's end, is flushed
            // at once, and so runs too.
            #expect(log.all == ["t1@0", "t2@0", "t3@0"])
            #expect(registry.pendingThrottle(identifier: "t") == nil)
            // A debounce call likewise: applied, and run at once rather than in 10 s.
            debounce(.seconds(10), identifier: "d", by: .taskContext) { log.mark("d", registry) }
            #expect(log.all == ["t1@0", "t2@0", "t3@0", "d@0"])
            #expect(registry.pendingDebounce(identifier: "d") == nil)
            await gate.waitForSleepers()
            await gate.advance(by: .seconds(1))
            let drainedReport = try await drained.outcome()
            #expect(drainedReport.isComplete)
        }
    }

    @Test func theSnapshotShowsADrainInProgress() async throws {
        try await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "slow", by: .taskContext) { () async throws in
                try await clock.sleep(for: .seconds(1))
            }
            let drained = await clock.start { await registry.drain() }
            // `start` returned: the drain has flushed and waits.
            #expect(registry.snapshot().isDraining)
            let snapshot = registry.snapshot()
            #expect(snapshot.runningOperations == 1)
            #expect(snapshot.description.hasPrefix("draining: 1 operation running"))
            await clock.advance(by: .seconds(1))
            let drainedReport = try await drained.outcome()
            #expect(drainedReport.isComplete)
            #expect(!registry.snapshot().isDraining)
            #expect(registry.snapshot().runningOperations == 0)
        }
    }

    @Test func twoDrainsAtOnceBothFinish() async throws {
        try await onManualClock { clock, registry in
            delay(.seconds(1), by: .taskContext) {}
            debounce(.seconds(1), identifier: "a", by: .taskContext) { () async throws in
                try await clock.sleep(for: .seconds(2))
            }
            let first = await clock.start { await registry.drain() }
            let second = await clock.start { await registry.drain(within: .seconds(10)) }
            await clock.advance(by: .seconds(2))
            let firstReport = try await first.outcome()
            #expect(firstReport.isComplete)
            let secondReport = try await second.outcome()
            #expect(secondReport.isComplete)
            #expect(!registry.snapshot().isDraining)
        }
    }

    @Test func aDrainFromInsideAnOperationDoesNotWaitForItself() async {
        let reports = Log<DrainReport>()
        await onManualClock { clock, registry in
            debounce(.seconds(1), identifier: "other", by: .taskContext) { () async throws in
                try await clock.sleep(for: .seconds(1))
            }
            delay(.milliseconds(500), by: .mainActor) { () async throws in
                reports.append(await registry.drain())
            }
            await clock.advance(by: .milliseconds(500))
            // The drain flushed "other" and waits for it, not for the operation it runs in.
            #expect(reports.all.isEmpty)
            await clock.advance(by: .milliseconds(1_000))
            #expect(reports.count == 1)
            #expect(reports.all.first?.isComplete == true)
            #expect(reports.all.first?.endedAt == .milliseconds(1_500))
        }
    }

    @Test func aRunningRepeatIterationIsNotWaitedFor() async throws {
        try await onManualClock { clock, registry in
            let loop = `repeat`(every: .seconds(1), by: .taskContext) {
                try await clock.sleep(for: .seconds(100))
            }
            await clock.advance(by: .seconds(1))  // the iteration runs, asleep on the clock
            #expect(registry.snapshot().runningOperations == 0)
            let report = try await (await clock.start { await registry.drain() }).outcome()
            #expect(report.isComplete)
            #expect(report.snapshot.entries.map(\.kind) == [.repeat])
            loop.cancel()
        }
    }

    @Test func aRunningTimeoutIsNotWaitedFor() async throws {
        try await onManualClock { clock, registry in
            let call = await clock.start {
                _ = try await timeout(.seconds(100)) { try await clock.sleep(for: .seconds(99)) }
            }
            #expect(registry.snapshot().runningOperations == 0)
            let report = try await (await clock.start { await registry.drain() }).outcome()
            #expect(report.isComplete)
            #expect(report.snapshot.entries.map(\.kind) == [.timeout])
            call.cancel()
        }
    }

    @Test func flushedOperationsSeeTheRegistryThatRanThemAsCurrent() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let seen = Log<Bool>()
        registry.withCurrent {
            for name in ["a", "b", "c"] {
                debounce(.seconds(1), identifier: name, by: .taskContext) {
                    seen.append(TempoRegistry.current === registry)
                }
            }
        }
        // Outside the scope: what the registry starts still sees it, as its timers' runs do.
        registry.flushDebounce(identifier: "a")
        registry.flushAll()
        registry.withCurrent {
            debounce(.seconds(1), identifier: "c", by: .taskContext) {
                seen.append(TempoRegistry.current === registry)
            }
        }
        let report = await registry.drain()
        #expect(report.isComplete)
        #expect(seen.all == [true, true, true, true])
    }

    @Test func cancellingTheTaskOfAPendingDelayWakesTheDrain() async throws {
        try await onManualClock { clock, registry in
            let reminder = delay(.seconds(60), by: .taskContext) { () async throws in }
            let drained = await clock.start { await registry.drain() }
            #expect(registry.snapshot().isDraining)
            // Withdrawn: the drain has nothing left to wait for, and returns without the clock
            // moving.
            reminder.cancel()
            let report = try await drained.outcome()
            #expect(report.isComplete)
            #expect(report.endedAt == .zero)
        }
    }

    @Test func aCompleteReportsSnapshotIsNotDraining() async {
        await onManualClock { clock, registry in
            let report = await registry.drain()
            #expect(!report.snapshot.isDraining)
            #expect(!report.wasCancelled)
        }
    }

    @Test func cancellingTheDrainEndsItWithAnIncompleteReport() async throws {
        try await onManualClock { clock, registry in
            delay(.seconds(60), by: .taskContext) {}
            let drained = await clock.start { await registry.drain() }
            // `start` returned: the drain has flushed and waits.
            #expect(registry.snapshot().isDraining)
            drained.cancel()
            let report = try await drained.outcome()
            #expect(!report.isComplete)
            #expect(report.wasCancelled)
            #expect(
                "\(report)".hasPrefix("drain cancelled after 0.000 ms: 0 operations still running"))
            #expect(report.pending.count == 1)
            #expect(!registry.snapshot().isDraining)
        }
    }

    @Test func aFailingOperationDoesNotHoldTheDrain() async throws {
        struct Failed: Error {}
        let errors = Log<String>()
        try await onManualClock { clock, registry in
            debounce(
                .seconds(1), identifier: "fails", by: .taskContext,
                onError: { errors.append("\($0)") }
            ) { () async throws in throw Failed() }
            let report = try await (await clock.start { await registry.drain() }).outcome()
            #expect(report.isComplete)
            #expect(errors.all == ["Failed()"])
        }
    }

    @Test func runningWorkAndWaitingLimitsAreNotWaitedFor() async throws {
        try await onManualClock { clock, registry in
            let poller = `repeat`(every: .seconds(1), identifier: "poll", by: .taskContext) {}
            try #require(await eventually(within: .seconds(30)) { !registry.snapshot().isEmpty })
            let report = try await (await clock.start { await registry.drain() }).outcome()
            #expect(report.isComplete)
            #expect(report.snapshot.entries.map(\.kind) == [.repeat])
            poller.cancel()
        }
    }

    @Test func anAwaitedCallIsRunAndItsCallerServedBeforeTheDrainEnds() async throws {
        let served = Log<Int>()
        try await onManualClock { clock, registry in
            let caller = await clock.start {
                let value = try await debounceResult(
                    .seconds(1), identifier: "r", by: .taskContext
                ) { () async throws -> Int in
                    try await clock.sleep(for: .milliseconds(100))
                    return 7
                }
                served.append(value)
            }
            // Applied when `start` returned.
            #expect(registry.pendingDebounce(identifier: "r") != nil)
            let drained = await clock.start { await registry.drain() }
            await clock.advance(by: .milliseconds(100))
            let drainedReport = try await drained.outcome()
            #expect(drainedReport.isComplete)
            try await caller.value()
            #expect(served.all == [7])
        }
    }

    /// What a complete drain leaves in the registry is what keys remember, and each leaves on
    /// its own timer (GuaranteesDrains.md, "What outlives a drain"): a rate-limit key with a permit
    /// taken, a retry budget with a counted call, a breaker with a failure in its time window.
    @Test func whatADrainLeavesIsWhatKeysRememberAndItLeavesOnItsOwn() async throws {
        struct Failed: Error {}
        try await onManualClock { clock, registry in
            try takeRatePermit(RateLimit(10, per: .seconds(1)), identifier: "rate")
            _ = try await retry(2, every: .zero, budget: RetryBudget(identifier: "budget")) { 1 }
            let breaker = CircuitBreakerPolicy(window: .lastDuration(.seconds(30)))
            _ = try? await circuitBreaker(breaker, identifier: "breaker") { throw Failed() }
            debounce(.seconds(1), identifier: "save", by: .taskContext) {}
            #expect(registry.liveKeyCount == 4)
            let report = try await (await clock.start { await registry.drain() }).outcome()
            #expect(report.isComplete)
            #expect(registry.liveKeyCount == 3)
            await clock.advance(by: .seconds(2))  // the bucket is full again
            #expect(registry.liveKeyCount == 2)
            await clock.advance(by: .seconds(13))  // the budget's 10 s window has passed
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .seconds(25))  // the failure has aged out of 30 s
            #expect(registry.liveKeyCount == 0)
        }
    }
}
