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
        let bareRatio = report.addCost(
            "`retry`, first attempt succeeds, no budget", bare, floor: floor)
        let budgetRatio = Stats(budgeted).median / floor
        report.addCost(
            "`retry` with a `RetryBudget`, first attempt succeeds ("
                + format(budgetRatio / bareRatio, digits: 2) + "× retry without)",
            budgeted, floor: floor,
            gateName: "`retry` with a `RetryBudget`, first attempt succeeds")
    }
}
