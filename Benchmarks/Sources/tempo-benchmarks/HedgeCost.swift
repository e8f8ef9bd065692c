import Tempo

// The cost of `hedge` at the caller when the first attempt succeeds before the delay (the
// common case: no second attempt starts), against the floor and against calling the same
// operation directly.

/// The operation both measurements call: async, returns at once.
@inline(never)
private func answer(_ attempt: Int) async throws -> Int { attempt }

/// Hedged calls one after another, each answered by its first attempt at once. Nanoseconds per
/// call.
func hedgedFirstAttempt(calls: Int) async -> Double {
    let start = ContinuousClock.now
    var sum = 0
    for _ in 0..<calls {
        sum &+=
            (try? await hedge(after: .milliseconds(50), identifier: "hedge-cost", operation: answer))
            ?? 0
    }
    let ns = (ContinuousClock.now - start).nanoseconds
    precondition(sum == calls, "every call is answered by attempt 1")
    return ns / Double(calls)
}

/// Hedged calls with one attempt in all: no timer is armed. Nanoseconds per call.
func hedgedSingleAttempt(calls: Int) async -> Double {
    let start = ContinuousClock.now
    var sum = 0
    for _ in 0..<calls {
        sum &+=
            (try? await hedge(
                maxAttempts: 1, after: .milliseconds(50), identifier: "hedge-cost",
                operation: answer)) ?? 0
    }
    let ns = (ContinuousClock.now - start).nanoseconds
    precondition(sum == calls, "every call is answered by attempt 1")
    return ns / Double(calls)
}

/// The same operation run in one child task of a task group, and awaited: the least any
/// concurrent attempt costs. Nanoseconds per call.
func childTaskCall(calls: Int) async -> Double {
    let operation: @Sendable (Int) async throws -> Int = answer
    let start = ContinuousClock.now
    var sum = 0
    for _ in 0..<calls {
        sum &+= await withTaskGroup(of: Int.self) { group in
            group.addTask { (try? await operation(1)) ?? 0 }
            return await group.next() ?? 0
        }
    }
    let ns = (ContinuousClock.now - start).nanoseconds
    precondition(sum == calls, "every call returns 1")
    return ns / Double(calls)
}

/// The same operation called directly. Nanoseconds per call.
func plainAsyncCall(calls: Int) async -> Double {
    let operation: @Sendable (Int) async throws -> Int = answer
    let start = ContinuousClock.now
    var sum = 0
    for _ in 0..<calls {
        sum &+= (try? await operation(1)) ?? 0
    }
    let ns = (ContinuousClock.now - start).nanoseconds
    precondition(sum == calls, "every call returns 1")
    return ns / Double(calls)
}

extension Suite {
    /// The rows of `hedge`, as × the floor, the hedged one also as × a plain call.
    func hedgeCosts(into report: inout Report, floor: Double) async {
        var hedged: [Double] = []
        var plain: [Double] = []
        var single: [Double] = []
        var child: [Double] = []
        let calls = config.awaitedCalls
        for repetition in 0..<config.repetitions {
            progress("hedge: repetition \(repetition + 1) of \(config.repetitions)")
            plain.append(await plainAsyncCall(calls: calls))
            hedged.append(await hedgedFirstAttempt(calls: calls))
            single.append(await hedgedSingleAttempt(calls: calls))
            child.append(await childTaskCall(calls: calls))
        }
        let plainStats = Stats(plain)
        let hedgedStats = Stats(hedged)
        let overPlain = hedgedStats.median / max(plainStats.median, 1e-9)
        report.rows.append(
            Row(
                section: "cost per call", name: "plain async call (the operation `hedge` runs)",
                unit: .nanosecondsPerCall, stats: plainStats,
                ratioToFloor: plainStats.median / floor))
        report.rows.append(
            Row(
                section: "cost per call",
                name: "`hedge`, the first attempt succeeds before the delay ("
                    + format(overPlain, digits: 1) + "× a plain call)",
                unit: .nanosecondsPerCall, stats: hedgedStats,
                ratioToFloor: hedgedStats.median / floor))
        report.rows.append(
            Row(
                section: "cost per call", name: "`hedge` with maxAttempts 1 (no timer)",
                unit: .nanosecondsPerCall, stats: Stats(single),
                ratioToFloor: Stats(single).median / floor))
        report.rows.append(
            Row(
                section: "cost per call", name: "one child task in a task group, awaited",
                unit: .nanosecondsPerCall, stats: Stats(child),
                ratioToFloor: Stats(child).median / floor))
    }
}
