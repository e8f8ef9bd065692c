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
        report.addCost("plain async call (the operation `hedge` runs)", plain, floor: floor)
        let overPlain = Stats(hedged).median / max(Stats(plain).median, 1e-9)
        report.addCost(
            "`hedge`, the first attempt succeeds before the delay ("
                + format(overPlain, digits: 1) + "× a plain call)",
            hedged, floor: floor, gateName: "`hedge`, the first attempt succeeds before the delay")
        report.addCost("`hedge` with maxAttempts 1 (no timer)", single, floor: floor)
        report.addCost("one child task in a task group, awaited", child, floor: floor)
    }
}
