import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a progress line to standard error, so standard output holds only the report.
func progress(_ message: String) {
    let line = "[tempo-benchmarks] " + message + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}

/// The parts of the suite, for `--only`.
enum Section: String, CaseIterable, Sendable {
    case costs, concurrency, shards, memory, lateness, ordering
    case rateLimit, results, concurrencyLimit, events
}

/// Runs every benchmark and checks the targets.
struct Suite {
    let config: Config
    var sections: Set<Section> = Set(Section.allCases)

    func run() async -> Report {
        let started = ContinuousClock.now
        var report = Report(
            quick: config.quick, repetitions: config.repetitions,
            cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), loadAverage: loadAverage())

        progress("warming up")
        _ = floorCost(calls: config.calls / 10)
        _ = await debounceBurst(calls: 1_000, identifier: "warm", duration: .milliseconds(1))
        _ = droppedThrottle(calls: 1_000, identifier: "warm")
        _ = await awaitedDroppedThrottle(calls: 100, identifier: "warm-awaited")

        // The floor is measured with the costs; other sections alone measure it by itself.
        let floor =
            sections.contains(.costs)
            ? await costs(into: &report)
            : Stats((0..<config.repetitions).map { _ in floorCost(calls: config.calls) })
        if sections.contains(.concurrency) {
            await concurrency(into: &report, floor: floor.median)
        }
        if sections.contains(.shards) { shardCounts(into: &report) }
        if sections.contains(.memory) { memory(into: &report) }
        if sections.contains(.lateness) { await lateness(into: &report) }
        if sections.contains(.ordering) { await ordering(into: &report) }
        if sections.contains(.rateLimit) { await rateLimitCosts(into: &report) }
        if sections.contains(.events) { await eventCosts(into: &report) }
        if sections.contains(.results) { await results(into: &report) }
        if sections.contains(.costs) || sections.contains(.concurrencyLimit) {
            await concurrencyLimitCosts(into: &report)
            await retryBudgetCosts(into: &report, floor: floor.median)
            await circuitBreakerCosts(into: &report)
        }
        if sections.contains(.costs) { await hedgeCosts(into: &report, floor: floor.median) }

        report.wallSeconds = (ContinuousClock.now - started).nanoseconds / 1e9
        return report
    }

    // MARK: Cost per call

    /// The single-caller costs, repetitions interleaved so that drift hits every row alike.
    /// Returns the floor.
    private func costs(into report: inout Report) async -> Stats {
        var floor: [Double] = []
        var floorClosure: [Double] = []
        var caller: [Double] = []
        var endToEnd: [Double] = []
        var cpu: [Double] = []
        var callerBare: [Double] = []
        var dropped: [Double] = []
        var droppedBare: [Double] = []
        var awaitedDropped: [Double] = []
        var awaitedBurst: [Double] = []
        var replacedTimers: [Double] = []
        var droppedTimers: [Double] = []
        var awaitedTimers: [Double] = []
        var runs: [Double] = []
        var lastWrong = 0
        let calls = config.calls
        let awaited = config.awaitedCalls
        for repetition in 0..<config.repetitions {
            progress("cost per call: repetition \(repetition + 1) of \(config.repetitions)")
            floor.append(floorCost(calls: calls))
            floorClosure.append(floorWithClosureCost(calls: calls))
            let burst = await debounceBurst(
                calls: calls, identifier: "hot", duration: .milliseconds(20))
            caller.append(burst.caller)
            endToEnd.append(burst.endToEnd)
            cpu.append(burst.cpu)
            replacedTimers.append(Double(burst.extraTimers))
            runs.append(Double(burst.runs))
            if !burst.lastRanLast { lastWrong += 1 }
            callerBare.append(debounceNonCapturing(calls: calls, identifier: "bare"))
            let drop = droppedThrottle(calls: calls, identifier: "dropped")
            dropped.append(drop.perCall)
            droppedBare.append(droppedThrottleNonCapturing(calls: calls, identifier: "bare"))
            droppedTimers.append(Double(drop.timersArmed))
            let awaitedDrop = await awaitedDroppedThrottle(calls: awaited, identifier: "awaited")
            awaitedDropped.append(awaitedDrop.perCall)
            awaitedTimers.append(Double(awaitedDrop.timersArmed))
            let asyncBurst = await awaitedDebounceBurst(
                calls: awaited, identifier: "awaited-burst", duration: .milliseconds(20))
            awaitedBurst.append(asyncBurst.endToEnd)
            replacedTimers.append(Double(asyncBurst.extraTimers))
            if !asyncBurst.lastRanLast { lastWrong += 1 }
        }
        let floorStats = Stats(floor)
        let base = floorStats.median
        func add(_ name: String, _ values: [Double]) {
            report.addCost(name, values, floor: base)
        }
        report.addCost(
            "floor: one `Mutex`-guarded dictionary write + one clock read", floor, floor: base,
            isFloor: true)
        add("floor + storing the caller's capturing closure (reference)", floorClosure)
        add("`debounce`, fire-and-forget, one hot identifier: at the caller", caller)
        add("`debounce`, fire-and-forget: end to end, until the single trailing run", endToEnd)
        add("`debounce`, fire-and-forget: CPU of all threads until the run", cpu)
        add("`debounce` at the caller, operation capturing nothing (engine only)", callerBare)
        add("`throttle`, dropped call (window open)", dropped)
        add("`throttle`, dropped call, operation capturing nothing (engine only)", droppedBare)
        add("`await throttle(…).value`, dropped call (`Task`-returning overload)", awaitedDropped)
        add("`debounce` `Task`-returning overload: burst, every task awaited", awaitedBurst)

        let replaced = replacedTimers.max() ?? 0
        let droppedMax = max(droppedTimers.max() ?? 0, awaitedTimers.max() ?? 0)
        report.rows.append(
            Row(
                section: "tasks",
                name: "timers armed per debounce burst beyond one per run "
                    + "(bursts of \(grouped(calls)) and \(grouped(awaited)) calls)", unit: .count,
                stats: Stats(replacedTimers), ratioToFloor: nil))
        report.rows.append(
            Row(
                section: "tasks",
                name: "runs per fire-and-forget burst (1 unless the caller stalled > 20 ms)",
                unit: .count, stats: Stats(runs), ratioToFloor: nil))
        report.rows.append(
            Row(
                section: "tasks",
                name: "timers armed by \(grouped(calls)) dropped `throttle` calls",
                unit: .count, stats: Stats(droppedTimers), ratioToFloor: nil))

        let endToEndRatio = Stats(endToEnd).median / base
        let bareRatio = Stats(callerBare).median / base
        let droppedBareRatio = Stats(droppedBare).median / base
        let callerRatio = Stats(caller).median / base
        let closureRatio = Stats(floorClosure).median / base
        report.targets.append(
            Target(
                name: "fire-and-forget `debounce` end to end within 1.6× floor",
                measured: format(endToEndRatio, digits: 2) + "× ("
                    + format(Stats(endToEnd).median, digits: 1) + " ns vs "
                    + format(base, digits: 1) + " ns)",
                met: endToEndRatio <= 1.6,
                note: "the caller alone costs \(format(callerRatio, digits: 2))× floor, "
                    + "\(format(bareRatio, digits: 2))× with an operation that captures nothing; "
                    + "the caller's escaping closure (allocated before Tempo is reached, paid by "
                    + "any library) takes the reference row to \(format(closureRatio, digits: 2))×"
                    + ". The rest is the engine's hot path: see "
                    + "Docs/Tempo.docc/PerformanceResults.md."))
        let droppedRatio = Stats(dropped).median / base
        report.targets.append(
            Target(
                name: "dropped `throttle` call within 1.5× floor",
                measured: format(droppedRatio, digits: 2) + "× ("
                    + format(Stats(dropped).median, digits: 1) + " ns)",
                met: droppedRatio <= 1.5,
                note: "with an operation that captures nothing a dropped call costs "
                    + "\(format(droppedBareRatio, digits: 2))× floor; the rest is the caller's "
                    + "closure allocation and release (\(format(closureRatio, digits: 2))× floor "
                    + "in the reference row, paid by any library). The engine's part is its full "
                    + "call path: see Docs/Tempo.docc/PerformanceResults.md."))
        report.targets.append(
            Target(
                name: "no `Task` or timer created for a dropped or replaced call",
                measured: "\(Int(replaced)) extra timers per debounce burst, "
                    + "\(Int(droppedMax)) for dropped throttle calls"
                    + (lastWrong > 0
                        ? "; \(lastWrong) bursts did not end with their last call"
                        : ""),
                met: replaced == 0 && droppedMax == 0 && lastWrong == 0,
                note: "a replaced or dropped call armed a timer: the engine's `arm` re-armed"
                    + " instead of letting the existing timer be pushed back when it fires."))
        return floorStats
    }

    // MARK: Concurrency

    /// Plain OS threads (not tasks): total calls per second for 1, 2, 4, 8 and 16 threads, each
    /// row also as × its own one-thread figure, so a lock that collapses when threads outnumber
    /// cores shows at once. Both floors run in the same repetitions: a dictionary behind a plain
    /// `pthread_mutex_t` and one behind `Synchronization.Mutex`.
    ///
    /// Every repetition measures every thread count in turn, and a row's × is the median of its
    /// repetitions' ratios to the one-thread figure of the same repetition: a stretch in which
    /// the host gives the process fewer cores then lowers a ratio or two, instead of every
    /// repetition of one thread count. The two-thread run on distinct identifiers also records
    /// how many cores the process got (its CPU time over the run's wall time), which bounds what
    /// that row can show.
    private func concurrency(into report: inout Report, floor: Double) async {
        let repetitions = max(3, config.repetitions / 2)
        let series = [
            ("`debounce`, distinct identifiers", "distinct"),
            ("`debounce`, one shared identifier", "shared"),
            ("`delay`, a call site per thread: every call arms a timer", "timers"),
            ("floor, one shared `pthread_mutex_t` dictionary", "pthread"),
            ("floor, one shared `Mutex` dictionary", "mutex"),
        ]
        // values[id][callers][repetition]
        var values: [String: [Int: [Double]]] = [:]
        var coresOfTwo: [Double] = []
        let length = config.concurrentLength
        for repetition in 0..<repetitions {
            for callers in config.callerCounts {
                progress(
                    "concurrent callers: repetition \(repetition + 1) of \(repetitions), "
                        + "\(callers) threads")
                let cpuBefore = processCPUNanoseconds()
                let wallBefore = ContinuousClock.now
                let distinct = concurrentDebounce(callers: callers, length: length, shared: false)
                if callers == 2 {
                    let wall = (ContinuousClock.now - wallBefore).nanoseconds
                    coresOfTwo.append((processCPUNanoseconds() - cpuBefore) / wall)
                }
                values["distinct", default: [:]][callers, default: []].append(distinct)
                values["shared", default: [:]][callers, default: []].append(
                    concurrentDebounce(callers: callers, length: length, shared: true))
                values["timers", default: [:]][callers, default: []].append(
                    concurrentTimers(callers: callers, length: length))
                values["pthread", default: [:]][callers, default: []].append(
                    concurrentFloor(callers: callers, length: length, lock: .pthread))
                values["mutex", default: [:]][callers, default: []].append(
                    concurrentFloor(callers: callers, length: length, lock: .mutex))
            }
        }
        /// The median over repetitions of the row's total over the same repetition's one-thread
        /// total.
        func ratio(_ id: String, _ callers: Int) -> Double? {
            guard let one = values[id]?[1], let many = values[id]?[callers],
                one.count == many.count, !one.isEmpty
            else { return nil }
            return Stats(zip(many, one).map { $0 / $1 }).median
        }
        for callers in config.callerCounts {
            let threads = callers == 1 ? "1 thread" : "\(callers) threads"
            for (name, id) in series {
                guard let measured = values[id]?[callers] else { continue }
                report.rows.append(
                    Row(
                        section: "concurrent callers", name: "\(name), \(threads): total",
                        unit: .callsPerSecond, stats: Stats(measured),
                        ratioToFloor: ratio(id, callers)))
            }
        }
        if !coresOfTwo.isEmpty {
            report.rows.append(
                Row(
                    section: "concurrent callers",
                    name: "cores the process got during the 2-thread runs on distinct identifiers",
                    unit: .cores, stats: Stats(coresOfTwo), ratioToFloor: nil))
        }
        report.notes.append(
            "Concurrent callers: the × column is the row's total calls/s divided by the same "
                + "measurement with 1 thread (above 1× the total grows with threads).")
        for callers in [8, 16] {
            for id in ["distinct", "shared", "timers"] {
                guard let value = ratio(id, callers) else { continue }
                report.targets.append(
                    Target(
                        name: (id == "timers"
                            ? "`delay` (every call arms a timer in the one driver)"
                            : "`debounce` (\(id) identifiers)")
                            + ", \(callers) threads: total at least half of 1 thread's",
                        measured: format(value, digits: 2) + "× one thread",
                        met: value >= 0.5,
                        note: "threads outnumber cores: see the concurrency notes in "
                            + "Docs/Tempo.docc/PerformanceResults.md."))
            }
        }
        if let value = ratio("distinct", 2) {
            report.targets.append(
                Target(
                    name: "`debounce`, 2 threads on distinct identifiers: at least 1.5× 1 thread",
                    measured: format(value, digits: 2) + "× one thread"
                        + (coresOfTwo.isEmpty
                            ? ""
                            : " (the process got "
                                + format(Stats(coresOfTwo).median, digits: 2) + " cores)"),
                    met: value >= 1.5,
                    note: "two threads can at most double the total on two cores, and gain less "
                        + "when the host gives the process fewer (the cores row above): see "
                        + "Docs/Tempo.docc/PerformanceResults.md."))
        }
    }

    /// The registry's shard count against plain threads on distinct identifiers: what the
    /// default (the smallest power of two at least the processor count) is chosen from.
    private func shardCounts(into report: inout Report) {
        let repetitions = max(3, config.repetitions / 2)
        for callers in [1, 2, 8, 16] {
            var one: Double?
            for shards in [1, 2, 4, 8, 16] {
                progress("shards: \(callers) threads, \(shards) shards")
                let values = (0..<repetitions).map { _ in
                    concurrentDebounce(
                        callers: callers, length: config.concurrentLength, shared: false,
                        shards: shards)
                }
                let stats = Stats(values)
                if shards == 1 { one = stats.median }
                let threads = callers == 1 ? "1 thread" : "\(callers) threads"
                report.rows.append(
                    Row(
                        section: "shards",
                        name: "`debounce`, \(threads), distinct identifiers, \(shards) shards",
                        unit: .callsPerSecond, stats: stats,
                        ratioToFloor: one.map { stats.median / $0 }))
            }
        }
        report.notes.append(
            "Shards: the × column is the row's total calls/s divided by the same threads with 1 "
                + "shard.")
    }

    // MARK: Memory

    private func memory(into report: inout Report) {
        var perLive: [Double] = []
        var waves: [Double] = []
        var wavesTrimmed: [Double] = []
        var fewerWaves: [Double] = []
        var burst: [Double] = []
        var burstTrimmed: [Double] = []
        var burstPeak: [Double] = []
        var burstLive: [Double] = []
        var burstEmptied: [Double] = []
        let idle = config.idleIdentifiers
        let many = config.burstIdentifiers
        // Window limits holding full windows: (starts per window, keys), a million starts in
        // all (a tenth with --quick).
        let windows = [(100, config.quick ? 1_000 : 10_000), (10_000, config.quick ? 10 : 100)]
        var windowPerKey: [Int: [Double]] = [:]
        var windowPerStart: [Int: [Double]] = [:]
        for repetition in 0..<config.memoryRepetitions {
            progress("memory: repetition \(repetition + 1) of \(config.memoryRepetitions)")
            if let value = child(["live", "\(config.liveIdentifiers)"]).first {
                perLive.append(value)
            }
            if let value = child(["idle", "\(idle / 10)", "1000", "2"]).first {
                fewerWaves.append(value)
            }
            let waved = child(["idle", "\(idle)", "1000", "2"])
            if waved.count == 5 {
                waves.append(waved[0])
                wavesTrimmed.append(waved[1])
            }
            // All live at once: the window outlasts making them (a lock, a table entry and a
            // timer heap push each, well under the 10 µs per group this window allows).
            let window = max(500, many / 100)
            let burstRun = child(["idle", "\(many)", "\(many)", "\(window)"])
            if burstRun.count == 5 {
                burst.append(burstRun[0])
                burstTrimmed.append(burstRun[1])
                burstPeak.append(burstRun[2])
                burstLive.append(burstRun[3])
                burstEmptied.append(burstRun[4])
            }
            for (permits, keys) in windows {
                let values = child(["window", "\(permits)", "\(keys)"])
                if values.count == 2 {
                    windowPerKey[permits, default: []].append(values[0])
                    windowPerStart[permits, default: []].append(values[1])
                }
            }
        }
        guard !perLive.isEmpty, !waves.isEmpty, !fewerWaves.isEmpty, !burst.isEmpty else {
            report.notes.append("Resident memory is not measured on this platform.")
            report.targets.append(
                Target(
                    name: "resident growth after \(grouped(idle)) idle identifiers under 2 MB",
                    measured: "not measured", met: false,
                    note: "needs /proc/self/statm (Linux)."))
            return
        }
        func add(_ name: String, _ unit: Unit, _ values: [Double]) {
            report.rows.append(
                Row(section: "memory", name: name, unit: unit, stats: Stats(values)))
        }
        add(
            "resident bytes per live identifier (\(grouped(config.liveIdentifiers)) live "
                + "debounce groups, each a table entry and a timer heap entry)",
            .bytesPerIdentifier, perLive)
        add(
            "resident growth after \(grouped(idle)) distinct identifiers, 1,000 live at a time, "
                + "went idle", .bytes, waves)
        add("… the same after `malloc_trim(0)`", .bytes, wavesTrimmed)
        add(
            "… the same with \(grouped(idle / 10)) identifiers (growth that does not scale is "
                + "one-time)", .bytes, fewerWaves)
        add(
            "stress: \(grouped(many)) distinct identifiers live at once: peak resident growth",
            .bytes, burstPeak)
        add("… most of them live at the same moment", .count, burstLive)
        add("… resident growth once all went idle", .bytes, burst)
        add("… the same after `malloc_trim(0)`", .bytes, burstTrimmed)
        add(
            "… the same after `cancelAll()` and another trim (a check: the idle tables hold no "
                + "storage to free)", .bytes, burstEmptied)
        for (permits, keys) in windows {
            add(
                "resident bytes per window-limited key holding a full window of "
                    + "\(grouped(permits)) starts (\(grouped(keys)) keys)",
                .bytesPerIdentifier, windowPerKey[permits] ?? [])
            add("… per start held", .bytesPerStart, windowPerStart[permits] ?? [])
        }
        let slope = zip(waves, fewerWaves).map { ($0 - $1) / Double(idle - idle / 10) }
        add(
            "growth per additional identifier (\(grouped(idle / 10)) → \(grouped(idle)), paired "
                + "by repetition)", .bytesPerIdentifier, slope)
        let limit = 2_000_000.0
        let median = Stats(waves).median
        let trimmedMedian = Stats(wavesTrimmed).median
        report.targets.append(
            Target(
                name: "resident growth after \(grouped(idle)) identifiers went idle under 2 MB",
                measured: format(median / 1e6, digits: 2) + " MB",
                met: median < limit,
                note: "after `malloc_trim` the growth is "
                    + format(trimmedMedian / 1e6, digits: 2) + " MB; with a tenth of the "
                    + "identifiers it is " + format(Stats(fewerWaves).median / 1e6, digits: 2)
                    + " MB, and each extra identifier adds "
                    + format(Stats(slope).median, digits: 1) + " bytes"
                    + (Stats(slope).median * Double(idle) < limit
                        ? ", too little to reach the target by itself: what stays is mostly "
                            + "one-time costs and freed memory the C allocator keeps (glibc's "
                            + "per-thread arenas, which `malloc_trim` does not fully return), not "
                            + "live objects: see Docs/Tempo.docc/PerformanceResults.md."
                        : ": it grows with the identifiers, so live memory stays behind.")))
        let kept = Stats(burstTrimmed).median
        let emptied = Stats(burstEmptied).median
        if kept >= limit {
            report.notes.append(
                "With \(grouped(many)) identifiers live at once, "
                    + format(kept / 1e6, digits: 1)
                    + " MB stay resident after they all went idle, even after `malloc_trim`; "
                    + (emptied < limit
                        ? "freeing the idle tables' storage (`cancelAll()`) brings it to "
                            + format(emptied / 1e6, digits: 1) + " MB: the registry's tables "
                            + "kept their peak capacity once their keys were removed."
                        : "after `cancelAll()` it is " + format(emptied / 1e6, digits: 1)
                            + " MB: the registry's tables already gave their storage back, so "
                            + "and so does the timer driver once its last timer fired: what stays "
                            + "is freed memory in the C allocator's per-thread arenas (see the "
                            + "results page, Docs/Tempo.docc/PerformanceResults.md)."))
        }
    }

    /// Runs one memory benchmark in a fresh process; the figures it printed.
    private func child(_ arguments: [String]) -> [Double] {
        guard let output = runChild(["--child"] + arguments) else { return [] }
        let values = output.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap {
            Double(String($0))
        }
        return values.allSatisfy(\.isFinite) ? values : []
    }

    // MARK: Lateness

    private func lateness(into report: inout Report) async {
        var debounceP50: [Double] = []
        var debounceP99: [Double] = []
        var sleepP50: [Double] = []
        var sleepP99: [Double] = []
        var difference: [Double] = []
        let repetitions = max(3, config.repetitions / 2)
        for repetition in 0..<repetitions {
            progress("lateness: repetition \(repetition + 1) of \(repetitions)")
            let result = await measureLateness(
                samples: config.latenessSamples, delay: config.latenessDelay)
            debounceP50.append(result.debounceP50)
            debounceP99.append(result.debounceP99)
            sleepP50.append(result.sleepP50)
            sleepP99.append(result.sleepP99)
            difference.append(result.debounceP99 - result.sleepP99)
        }
        let window = "\(Int(config.latenessDelay.nanoseconds / 1e6)) ms"
        func add(_ name: String, _ values: [Double]) {
            report.rows.append(
                Row(section: "lateness", name: name, unit: .microseconds, stats: Stats(values)))
        }
        add("`debounce` (\(window)) operation start after its deadline, p50", debounceP50)
        add("`debounce` (\(window)) operation start after its deadline, p99", debounceP99)
        add("bare `Task.sleep(until:)` (\(window)) return after its deadline, p50", sleepP50)
        add("bare `Task.sleep(until:)` (\(window)) return after its deadline, p99", sleepP99)
        add("p99 difference, `debounce` − bare sleep", difference)
        let median = Stats(difference).median
        report.targets.append(
            Target(
                name: "`debounce` lateness p99 within 100 µs of a bare sleep's",
                measured: (median >= 0 ? "+" : "") + format(median, digits: 1) + " µs ("
                    + format(Stats(debounceP99).median, digits: 1) + " vs "
                    + format(Stats(sleepP99).median, digits: 1) + " µs)",
                met: median <= 100,
                note: "the timer driver's runner wakes like a bare sleep, takes its own lock and "
                    + "the registry's, then starts the operation's task; a late p99 points at "
                    + "lock contention, a runner restarted for an earlier deadline, or a busy "
                    + "cooperative pool."))
    }

    // MARK: Ordering

    private func ordering(into report: inout Report) async {
        var violations: [Double] = []
        var earlier: [Double] = []
        for repetition in 0..<config.repetitions {
            progress("ordering: repetition \(repetition + 1) of \(config.repetitions)")
            let result = await orderingBursts(config.orderingBursts, seed: repetition)
            violations.append(Double(result.violations))
            earlier.append(Double(result.earlierRuns))
        }
        let bursts = grouped(config.orderingBursts)
        report.rows.append(
            Row(
                section: "ordering",
                name: "bursts whose last call was not the one that ran (of \(bursts))",
                unit: .count, stats: Stats(violations)))
        report.rows.append(
            Row(
                section: "ordering",
                name: "earlier runs within bursts (a gap in the loop longer than the window)",
                unit: .count, stats: Stats(earlier)))
        let total = Int(violations.reduce(0, +))
        report.targets.append(
            Target(
                name: "ordering violations 0",
                measured:
                    "\(total) in \(grouped(config.orderingBursts * config.repetitions)) bursts",
                met: total == 0,
                note: "a burst ended with an earlier call than its last: call order was lost."))
    }
}
