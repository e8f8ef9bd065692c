import Synchronization
import TempoTesting
import Testing

@testable import Tempo

@Suite struct RetryBudgetTests {
    /// Ten calls pay for one retry: a hundred failing calls, each allowed five attempts, make
    /// exactly ten retries, and `onRetry` hears of those ten only.
    @Test func retriesAreCappedAtTheRatioOfCallsExactly() async {
        await onManualClock { _, registry in
            let probe = BudgetProbe()
            let budget = RetryBudget(identifier: "api", ratio: 0.1, minimumPerSecond: 0)
            var made: [Int] = []
            for _ in 0..<100 { made.append(await probe.call(budget, maxAttempts: 5)) }
            #expect(probe.attempts == 110)
            #expect(probe.told == 10)
            // The tenth call finds a whole retry, spends it, and is refused its second.
            #expect(
                made.indices.filter { made[$0] == 2 } == Array(stride(from: 9, to: 100, by: 10)))
            let row = registry.budgetRow("api")
            #expect(row?.calls == 100)
            #expect(row?.retries == 10)
            #expect(row?.balance == 0)
        }
    }

    @Test func aRefusedRetryThrowsTheLastErrorAtOnce() async {
        await onManualClock { clock, _ in
            let told = Log<Int>()
            let budget = RetryBudget(identifier: "api", ratio: 0, minimumPerSecond: 0)
            await #expect(throws: Boom(attempt: 1)) {
                try await retry(
                    3, backoff: .constant(.seconds(1)),
                    onRetry: { attempt, _, _ in told.append(attempt) },
                    budget: budget
                ) { throw Boom(attempt: 1) }
            }
            #expect(told.all.isEmpty)
            #expect(clock.now.offset == .zero)
        }
    }

    /// `minimumPerSecond × window` retries per window whatever the traffic: 0.5 a second over
    /// 10 seconds is five retries, all taken by the first call.
    @Test func theMinimumAllowanceLetsAQuietKeyRetry() async {
        await onManualClock { _, registry in
            let probe = BudgetProbe()
            let budget = RetryBudget(identifier: "quiet", ratio: 0, minimumPerSecond: 0.5)
            #expect(await probe.call(budget, maxAttempts: 100) == 6)
            #expect(await probe.call(budget, maxAttempts: 100) == 1)
            #expect(registry.budgetRow("quiet")?.retries == 5)
            #expect(registry.budgetRow("quiet")?.balance == 0)
        }
    }

    /// A deposit counts until the start of the tenth slice after its own (slices of a tenth of
    /// the window): made at 0.5 s in a 10-second window, it counts until 10 s.
    @Test func depositsExpireAfterTheWindow() async {
        await onManualClock { clock, registry in
            let probe = BudgetProbe()
            let budget = RetryBudget(identifier: "api", ratio: 0.5, minimumPerSecond: 0)
            await clock.advance(by: .milliseconds(500))
            await probe.call(budget, succeed: true)
            await clock.advance(to: .init(offset: .milliseconds(9_999)))
            #expect(registry.budgetRow("api")?.calls == 1)
            // One more deposit makes a whole retry while the first still counts.
            #expect(await probe.call(budget) == 2)
            await clock.advance(to: .init(offset: .seconds(10)))
            let row = registry.budgetRow("api")
            #expect(row?.calls == 1)
            #expect(row?.retries == 1)
            #expect(row?.balance == -0.5)
            // With the first deposit gone, a new call's half retry is not enough.
            #expect(await probe.call(budget) == 1)
            // Nothing counted any more: the key leaves the registry on its timer.
            await clock.advance(to: .init(offset: .seconds(20)))
            #expect(registry.snapshot().isEmpty)
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func budgetsWithOneIdentifierShareOneBalanceAcrossCallSites() async {
        await onManualClock { _, registry in
            let probe = BudgetProbe()
            let budget = RetryBudget(identifier: "shared", ratio: 0.5, minimumPerSecond: 0)
            await probe.call(budget, succeed: true)  // one call site deposits half a retry
            #expect(await probe.call(budget) == 2)  // another one's half completes it
            #expect(registry.budgetRow("shared")?.retries == 1)
            resetRetryBudget(identifier: "shared")
            #expect(registry.budgetRow("shared") == nil)
            #expect(await probe.call(budget) == 1)
        }
    }

    @Test func budgetsWithoutAnIdentifierAreKeptPerCallSite() async {
        await onManualClock { _, registry in
            let probe = BudgetProbe()
            let budget = RetryBudget(ratio: 0.5, minimumPerSecond: 0)
            await probe.call(budget, succeed: true)
            #expect(await probe.call(budget) == 1)  // a second call site: its own balance
            #expect(registry.snapshot().entries(.retryBudget).count == 2)
            for _ in 0..<2 { await probe.call(budget) }  // one call site, twice
            #expect(probe.attempts == 5)
        }
    }

    /// Many callers at once: the retries never pass the ratio of the calls.
    @Test func concurrentCallersNeverPassTheRatio() async {
        await onManualClock { _, registry in
            let probe = BudgetProbe()
            let budget = RetryBudget(identifier: "busy", ratio: 0.1, minimumPerSecond: 0)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<400 {
                    group.addTask { await probe.call(budget, maxAttempts: 4) }
                }
            }
            let row = registry.budgetRow("busy")
            #expect(row?.calls == 400)
            #expect((row?.retries ?? 99) <= 40)
            #expect(probe.attempts == 400 + (row?.retries ?? -1))
            #expect(probe.told == row?.retries)
        }
    }

    /// A retry is withdrawn only when attempts are left and `shouldRetry` agrees: the budget
    /// refuses nothing it was not asked for, and `maxAttempts` still caps each call.
    @Test func maxAttemptsAndShouldRetryComeBeforeTheBudget() async throws {
        try await onManualClock { _, registry in
            let probe = BudgetProbe()
            let budget = RetryBudget(identifier: "api", ratio: 0, minimumPerSecond: 0.3)
            #expect(await probe.call(budget, maxAttempts: 2) == 2)
            #expect(registry.budgetRow("api")?.retries == 1)
            await #expect(throws: Boom.self) {
                try await retry(
                    3, backoff: .constant(.zero), shouldRetry: { _ in false }, budget: budget
                ) { throw Boom() }
            }
            #expect(registry.budgetRow("api")?.retries == 1)
            // Three retries a window, one spent: the next call takes the other two, then is refused.
            #expect(await probe.call(budget, maxAttempts: 5) == 3)
            let value = try await retry(5, every: .zero, budget: budget) { 7 }
            #expect(value == 7)
            #expect(registry.budgetRow("api")?.calls == 4)
        }
    }

    /// Cancellation is no failure: an attempt that throws `CancellationError` withdraws
    /// nothing; a retry cancelled in its wait keeps its withdrawal (it was decided).
    @Test func cancellationIsNeverRetriedNorRefunded() async {
        await onManualClock { clock, registry in
            let budget = RetryBudget(identifier: "api", ratio: 0, minimumPerSecond: 1)
            await #expect(throws: CancellationError.self) {
                try await retry(3, every: .zero, budget: budget) { throw CancellationError() }
            }
            #expect(registry.budgetRow("api")?.retries == 0)
            let task = Task {
                try await retry(3, every: .seconds(1), budget: budget) { throw Boom() }
            }
            await clock.waitForSleepers(2)  // the budget's timer, and the retry's wait
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(registry.budgetRow("api")?.retries == 1)
            #expect(registry.budgetRow("api")?.calls == 2)
        }
    }

    @Test func aCancelledCallerDepositsNothing() async {
        await onManualClock { _, registry in
            let budget = RetryBudget(identifier: "api")
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await retry(3, every: .zero, budget: budget) { 1 }
            }
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(registry.budgetRow("api") == nil)
        }
    }
}
