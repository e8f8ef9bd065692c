import Tempo

// The circuit breaker's cost per call, against the floor: a call through a closed breaker
// (admission and outcome: the shard's lock twice) and a call rejected by an open one (one
// lock, then a thrown `CircuitBreakerError` boxed as `any Error`).

/// A breaker that never opens in a run: the window holds successes only.
private let closedPolicy = CircuitBreakerPolicy(window: .lastCalls(100))

/// `try await circuitBreaker(…) { }` through a closed breaker. Returns nanoseconds per call.
func closedCircuitBreaker(calls: Int, identifier: String) async -> Double {
    var ran = 0
    let start = ContinuousClock.now
    for _ in 0..<calls {
        _ = try? await circuitBreaker(closedPolicy, identifier: identifier) { ran += 1 }
    }
    let ns = (ContinuousClock.now - start).nanoseconds
    precondition(ran == calls, "a call was rejected")
    resetCircuitBreaker(identifier: identifier)
    return ns / Double(calls)
}

/// `try await circuitBreaker(…) { }` rejected by a breaker opened by hand.
func openCircuitBreakerRejection(calls: Int, identifier: String) async -> Double {
    openCircuitBreaker(identifier: identifier)
    var rejected = 0
    let start = ContinuousClock.now
    for _ in 0..<calls {
        do { _ = try await circuitBreaker(closedPolicy, identifier: identifier) { 1 } } catch {
            rejected += 1
        }
    }
    let ns = (ContinuousClock.now - start).nanoseconds
    precondition(rejected == calls, "a call ran")
    resetCircuitBreaker(identifier: identifier)
    return ns / Double(calls)
}

extension Suite {
    /// The rows and the targets of `circuitBreaker`, as × the floor measured in the same
    /// repetitions (as for `concurrencyLimit`).
    func circuitBreakerCosts(into report: inout Report) async {
        var floors: [Double] = []
        var closed: [Double] = []
        var open: [Double] = []
        let calls = config.calls
        for repetition in 0..<config.repetitions {
            progress("circuitBreaker: repetition \(repetition + 1) of \(config.repetitions)")
            floors.append(floorCost(calls: calls))
            closed.append(await closedCircuitBreaker(calls: calls, identifier: "cb"))
            open.append(await openCircuitBreakerRejection(calls: calls, identifier: "cb"))
        }
        let section = "circuit breaker"
        let floor = Stats(floors).median
        func add(_ name: String, _ values: [Double]) -> Double {
            report.addCost(name, values, floor: floor, section: section)
        }
        report.addCost(
            "floor (measured with these rows)", floors, floor: floor, section: section,
            isFloor: true)
        let closedRatio = add("`circuitBreaker`, through a closed breaker", closed)
        let openRatio = add("`circuitBreaker`, rejected by an open breaker", open)
        report.targets.append(
            Target(
                name: "call through a closed `circuitBreaker` within 2× floor",
                measured: format(closedRatio, digits: 2) + "×", met: closedRatio <= 2,
                note: "the shard's lock twice: admission, then the outcome into the window."))
        report.targets.append(
            Target(
                name: "rejection by an open `circuitBreaker` within 2× floor",
                measured: format(openRatio, digits: 2) + "×", met: openRatio <= 2,
                note: "one lock, then a thrown `CircuitBreakerError` (boxed as `any Error`)."))
    }
}
