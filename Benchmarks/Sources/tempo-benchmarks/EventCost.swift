import Synchronization
import Tempo

// What an observer costs the helpers: the same refused call (`takeRatePermit` on a key with no
// permit left, a decision that is reported) in a registry nobody observes and in one whose
// observer counts its events. The difference is the price of one event: making it (the key's
// text, the instant) and buffering it for the observer, whose task counts it meanwhile on
// another thread. With no observer the decision pays one relaxed load.

private let tight = RateLimit(1, per: .seconds(3_600))

/// `takeRatePermit` refused `calls` times in `registry`. Returns nanoseconds per call.
private func refused(in registry: TempoRegistry, calls: Int) -> Double {
    registry.withCurrent {
        try? takeRatePermit(tight, identifier: "events")
        var refused = 0
        let ns = wallNanoseconds {
            for _ in 0..<calls {
                do { try takeRatePermit(tight, identifier: "events") } catch { refused += 1 }
            }
        }
        precondition(refused == calls, "a call was admitted")
        return ns / Double(calls)
    }
}

extension Suite {
    /// The observer's rows, repetitions interleaved with the floor's.
    func eventCosts(into report: inout Report) async {
        var floor: [Double] = []
        var quiet: [Double] = []
        var observed: [Double] = []
        var dropped = 0
        let counted = Atomic<Int>(0)
        for repetition in 0..<config.repetitions {
            progress("events: repetition \(repetition + 1) of \(config.repetitions)")
            let calls = config.calls
            floor.append(floorCost(calls: calls))
            quiet.append(refused(in: TempoRegistry(clock: ContinuousClock()), calls: calls))
            let registry = TempoRegistry(clock: ContinuousClock())
            // Room for every event: the row measures events delivered, not dropped.
            let observer = registry.observe(bufferLimit: calls + 1) { _ in
                counted.add(1, ordering: .relaxed)
            }
            observed.append(refused(in: registry, calls: calls))
            await observer.waitUntilDelivered()
            dropped += observer.droppedCount
            observer.cancel()
        }
        precondition(
            counted.load(ordering: .relaxed) + dropped == config.repetitions * config.calls,
            "an event was lost")
        let base = Stats(floor).median
        report.rows.append(
            Row(
                section: "events", name: "floor (measured with these rows)",
                unit: .nanosecondsPerCall, stats: Stats(floor), ratioToFloor: 1, isFloor: true))
        for (samples, name) in [
            (quiet, "`takeRatePermit` refused, nobody observing"),
            (observed, "`takeRatePermit` refused, an observer counting each event"),
        ] {
            let stats = Stats(samples)
            report.rows.append(
                Row(
                    section: "events", name: name, unit: .nanosecondsPerCall, stats: stats,
                    ratioToFloor: stats.median / base))
        }
        let perEvent = Stats(observed).median - Stats(quiet).median
        report.rows.append(
            Row(
                section: "events", name: "one event, delivered (the difference of the two)",
                unit: .nanosecondsPerCall, stats: Stats([perEvent]), ratioToFloor: nil))
        report.rows.append(
            Row(
                section: "events", name: "events dropped by the observer (all repetitions)",
                unit: .count, stats: Stats([Double(dropped)]), ratioToFloor: nil))
    }
}
