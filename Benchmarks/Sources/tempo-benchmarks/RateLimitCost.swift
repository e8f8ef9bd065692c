import Tempo

// The rate limiter's cost per call, against the floor: a permit taken at once and a call
// refused at once, in the synchronous form (`takeRatePermit`, typed error: no allocation) and
// the wrapping `async` form (`rateLimit { }`, whose refusal throws an `any Error`).

/// Calls that are all admitted: a permit a millisecond, with a burst of a trillion (the bucket
/// never fills up again during a run, so the key stays live and its one timer stays armed).
private let roomy = RateLimit(1_000, per: .seconds(1), burst: 1_000_000_000_000)
/// Calls that are all refused after the first: a permit an hour.
private let tight = RateLimit(1, per: .seconds(3_600))

/// A window limit whose calls are all admitted in steady state: a window of a millisecond
/// with no margin, and room for a million starts in it (a call takes tens of nanoseconds, so
/// the window holds some tens of thousands). Each call records its start and lets go of those
/// that left the window, as a key in constant use does.
private let roomyWindow = RateLimit.window(1_000_000, per: .milliseconds(1), margin: .zero)
/// A window limit that refuses every call after the first: one start an hour.
private let tightWindow = RateLimit.window(1, per: .seconds(3_600))

/// `takeRatePermit` on `limit` (by default the roomy bucket), every call admitted. Returns
/// nanoseconds per call.
func admittedRatePermit(_ limit: RateLimit = roomy, calls: Int, identifier: String) -> Double {
    let ns = wallNanoseconds {
        for _ in 0..<calls { try? takeRatePermit(limit, identifier: identifier) }
    }
    resetRateLimit(identifier: identifier)
    return ns / Double(calls)
}

/// `takeRatePermit` on `limit` (by default the tight bucket), every call refused. Returns
/// nanoseconds per call.
func rejectedRatePermit(_ limit: RateLimit = tight, calls: Int, identifier: String) -> Double {
    try? takeRatePermit(limit, identifier: identifier)
    var refused = 0
    let ns = wallNanoseconds {
        for _ in 0..<calls {
            do { try takeRatePermit(limit, identifier: identifier) } catch { refused += 1 }
        }
    }
    precondition(refused == calls, "a call was admitted")
    resetRateLimit(identifier: identifier)
    return ns / Double(calls)
}

/// `try await rateLimit(…) { }`, every call admitted. Returns nanoseconds per call.
func admittedRateLimit(calls: Int, identifier: String) async -> Double {
    var ran = 0
    let start = ContinuousClock.now
    for _ in 0..<calls { _ = try? await rateLimit(roomy, identifier: identifier) { ran += 1 } }
    let ns = (ContinuousClock.now - start).nanoseconds
    precondition(ran == calls, "a call was refused")
    resetRateLimit(identifier: identifier)
    return ns / Double(calls)
}

/// `try await rateLimit(…, whenLimited: .reject) { }`, every call refused.
func rejectedRateLimit(calls: Int, identifier: String) async -> Double {
    try? takeRatePermit(tight, identifier: identifier)
    let start = ContinuousClock.now
    for _ in 0..<calls {
        _ = try? await rateLimit(tight, whenLimited: .reject, identifier: identifier) { 1 }
    }
    let ns = (ContinuousClock.now - start).nanoseconds
    resetRateLimit(identifier: identifier)
    return ns / Double(calls)
}

extension Suite {
    /// The rate limiter's rows and targets, repetitions interleaved with the floor's.
    func rateLimitCosts(into report: inout Report) async {
        var floor: [Double] = []
        var rows: [String: [Double]] = [:]
        let registry = TempoRegistry.shared
        let timers = registry.timersArmed
        var windowTimers = 0
        for repetition in 0..<config.repetitions {
            progress("rate limit: repetition \(repetition + 1) of \(config.repetitions)")
            let calls = config.calls
            floor.append(floorCost(calls: calls))
            rows["admitted", default: []].append(admittedRatePermit(calls: calls, identifier: "rl"))
            rows["rejected", default: []].append(rejectedRatePermit(calls: calls, identifier: "rl"))
            let beforeWindow = registry.timersArmed
            rows["window admitted", default: []].append(
                admittedRatePermit(roomyWindow, calls: calls, identifier: "rlw"))
            rows["window rejected", default: []].append(
                rejectedRatePermit(tightWindow, calls: calls, identifier: "rlw"))
            windowTimers += registry.timersArmed - beforeWindow
            let awaited = config.awaitedCalls
            rows["async admitted", default: []].append(
                await admittedRateLimit(calls: awaited, identifier: "rl"))
            rows["async rejected", default: []].append(
                await rejectedRateLimit(calls: awaited, identifier: "rl"))
        }
        let base = Stats(floor).median
        let names = [
            ("admitted", "`takeRatePermit`, admitted at once"),
            ("rejected", "`takeRatePermit`, refused at once (typed error)"),
            ("async admitted", "`try await rateLimit { }`, admitted at once"),
            ("async rejected", "`try await rateLimit(whenLimited: .reject) { }`, refused"),
            (
                "window admitted",
                "`takeRatePermit` on `.window(1_000_000, per: 1 ms)`, admitted (steady state: "
                    + "each call records its start and lets go of those that left the window)"
            ),
            ("window rejected", "`takeRatePermit` on `.window(1, per: 1 h)`, refused at once"),
        ]
        report.rows.append(
            Row(
                section: "rate limit", name: "floor (measured with these rows)",
                unit: .nanosecondsPerCall, stats: Stats(floor), ratioToFloor: 1, isFloor: true))
        for (id, name) in names {
            let stats = Stats(rows[id] ?? [])
            report.rows.append(
                Row(
                    section: "rate limit", name: name, unit: .nanosecondsPerCall, stats: stats,
                    ratioToFloor: stats.median / base))
        }
        // One timer per row and repetition: the key becomes live once per run (each run ends
        // with a reset, which removes it), and no call arms another.
        let armed = registry.timersArmed - timers - windowTimers
        report.rows.append(
            Row(
                section: "tasks", name: "timers armed by the rate-limit rows (all repetitions)",
                unit: .count, stats: Stats([Double(armed)]), ratioToFloor: nil))
        // A window key's timer lets go of its starts once its window is empty: a few per
        // row and repetition (36 in the full run of 22 key lives), not one per call.
        report.rows.append(
            Row(
                section: "tasks",
                name: "timers armed by the window-limit rows (all repetitions)",
                unit: .count, stats: Stats([Double(windowTimers)]), ratioToFloor: nil))
        let targets = [
            ("admitted", "`takeRatePermit` admitted"), ("rejected", "`takeRatePermit` refused"),
            ("window admitted", "`takeRatePermit` on a window limit admitted"),
            ("window rejected", "`takeRatePermit` on a window limit refused"),
        ]
        for (id, label) in targets {
            let ratio = Stats(rows[id] ?? []).median / base
            report.targets.append(
                Target(
                    name: "\(label) at once within 2× floor",
                    measured: format(ratio, digits: 2) + "× ("
                        + format(Stats(rows[id] ?? []).median, digits: 1) + " ns)",
                    met: ratio <= 2,
                    note: "a clock read, a lock and a table update; the `async` rows add the "
                        + "call's suspension point and, for a refusal, the boxed `any Error`."))
        }
    }
}
