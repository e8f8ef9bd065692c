import Tempo

// The cost of `retry` with a `RetryBudget` whose first attempt succeeds (the common case: the
// budget only deposits), against the floor and against the same `retry` without a budget.

/// `retry` calls one after another whose first attempt succeeds, with `budget` or without.
/// Nanoseconds per call.
func retrySucceeding(calls: Int, budget: RetryBudget?) async -> Double {
    let start = ContinuousClock.now
    var sum = 0
    for i in 0..<calls {
        sum &+= (try? await retry(3, every: .zero, budget: budget) { i }) ?? 0
    }
    let ns = (ContinuousClock.now - start).nanoseconds
    precondition(sum != -1)
    return ns / Double(calls)
}

extension Suite {
    /// The rows of `retry` with and without a budget, as × the floor.
    func retryBudgetCosts(into report: inout Report, floor: Double) async {
        var bare: [Double] = []
        var budgeted: [Double] = []
        let budget = RetryBudget(identifier: "bench-budget")
        for repetition in 0..<config.repetitions {
            progress("retry budget: repetition \(repetition + 1) of \(config.repetitions)")
            bare.append(await retrySucceeding(calls: config.calls, budget: nil))
            budgeted.append(await retrySucceeding(calls: config.calls, budget: budget))
        }
        let bareStats = Stats(bare)
        let budgetStats = Stats(budgeted)
        report.rows.append(
            Row(
                section: "cost per call", name: "`retry`, first attempt succeeds, no budget",
                unit: .nanosecondsPerCall, stats: bareStats,
                ratioToFloor: bareStats.median / floor))
        report.rows.append(
            Row(
                section: "cost per call",
                name: "`retry` with a `RetryBudget`, first attempt succeeds ("
                    + format(budgetStats.median / bareStats.median, digits: 2)
                    + "× retry without)",
                unit: .nanosecondsPerCall, stats: budgetStats,
                ratioToFloor: budgetStats.median / floor))
    }
}
