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

/// Runs every benchmark and checks the targets.
struct Suite {
    let config: Config

    func run() async -> Report {
        let started = ContinuousClock.now
        var report = Report(
            quick: config.quick, repetitions: config.repetitions,
            cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

        progress("warming up")
        _ = floorCost(calls: config.calls / 10)
        _ = await debounceBurst(calls: 1_000, identifier: "warm", duration: .milliseconds(1))
        _ = droppedThrottle(calls: 1_000, identifier: "warm")
        _ = await awaitedDroppedThrottle(calls: 100, identifier: "warm-awaited")

        let floor = await costs(into: &report)
        await concurrency(into: &report, floor: floor)
        memory(into: &report)
        await lateness(into: &report)
        await ordering(into: &report)

        report.wallSeconds = (ContinuousClock.now - started).nanoseconds / 1e9
        return report
    }

    // MARK: Cost per call

    /// The single-caller costs, repetitions interleaved so that drift hits every row alike.
    /// Returns the floor's median.
    private func costs(into report: inout Report) async -> Double {
        var floor: [Double] = []
        var floorClosure: [Double] = []
        var caller: [Double] = []
        var endToEnd: [Double] = []
        var cpu: [Double] = []
        var dropped: [Double] = []
        var awaitedDropped: [Double] = []
        var awaitedBurst: [Double] = []
        var replacedTimers: [Double] = []
        var droppedTimers: [Double] = []
        var awaitedTimers: [Double] = []
        var wrongRuns = 0
        let calls = config.calls
        let awaited = config.awaitedCalls
        for repetition in 0..<config.repetitions {
            progress("cost per call: repetition \(repetition + 1) of \(config.repetitions)")
            floor.append(floorCost(calls: calls))
            floorClosure.append(floorWithClosureCost(calls: calls))
            let burst = await debounceBurst(
                calls: calls, identifier: "hot", duration: .milliseconds(5))
            caller.append(burst.caller)
            endToEnd.append(burst.endToEnd)
            cpu.append(burst.cpu)
            replacedTimers.append(Double(burst.timersArmed - 1))
            if !burst.ranOnlyLast { wrongRuns += 1 }
            let drop = droppedThrottle(calls: calls, identifier: "dropped")
            dropped.append(drop.perCall)
            droppedTimers.append(Double(drop.timersArmed))
            let awaitedDrop = await awaitedDroppedThrottle(calls: awaited, identifier: "awaited")
            awaitedDropped.append(awaitedDrop.perCall)
            awaitedTimers.append(Double(awaitedDrop.timersArmed))
            let asyncBurst = await awaitedDebounceBurst(
                calls: awaited, identifier: "awaited-burst", duration: .milliseconds(5))
            awaitedBurst.append(asyncBurst.endToEnd)
            replacedTimers.append(Double(asyncBurst.timersArmed - 1))
            if !asyncBurst.ranOnlyLast { wrongRuns += 1 }
        }
        let floorStats = Stats(floor)
        let base = floorStats.median
        func add(_ name: String, _ values: [Double]) {
            let stats = Stats(values)
            report.rows.append(
                Row(
                    section: "cost per call", name: name, unit: .nanosecondsPerCall,
                    stats: stats, ratioToFloor: stats.median / base))
        }
        add("floor: one `Mutex`-guarded dictionary write + one clock read", floor)
        add("floor + storing the caller's capturing closure (reference)", floorClosure)
        add("`debounce`, fire-and-forget, one hot identifier: at the caller", caller)
        add("`debounce`, fire-and-forget: end to end, until the single trailing run", endToEnd)
        add("`debounce`, fire-and-forget: CPU of all threads until the run", cpu)
        add("`throttle`, dropped call (window open)", dropped)
        add("`await throttle(…).value`, dropped call (`Task`-returning overload)", awaitedDropped)
        add("`debounce` `Task`-returning overload: burst, every task awaited", awaitedBurst)

        let replaced = replacedTimers.max() ?? 0
        let droppedMax = max(droppedTimers.max() ?? 0, awaitedTimers.max() ?? 0)
        report.rows.append(
            Row(
                section: "tasks", name: "timers/tasks armed per burst beyond the group's one "
                    + "(\(grouped(calls - 1)) replaced calls)", unit: .count,
                stats: Stats(replacedTimers), ratioToFloor: nil))
        report.rows.append(
            Row(
                section: "tasks",
                name: "timers/tasks armed by \(grouped(calls)) dropped `throttle` calls",
                unit: .count, stats: Stats(droppedTimers), ratioToFloor: nil))

        let endToEndRatio = Stats(endToEnd).median / base
        let callerRatio = Stats(caller).median / base
        let closureRatio = Stats(floorClosure).median / base
        report.targets.append(
            Target(
                name: "fire-and-forget `debounce` end to end within 4× floor",
                measured: format(endToEndRatio, digits: 2) + "× ("
                    + format(Stats(endToEnd).median, digits: 1) + " ns vs "
                    + format(base, digits: 1) + " ns)",
                met: endToEndRatio <= 4,
                note: "the caller alone costs \(format(callerRatio, digits: 2))× floor; the "
                    + "caller's escaping closure (allocated before Tempo is reached, paid by any "
                    + "library) takes the reference row to \(format(closureRatio, digits: 2))×. "
                    + "The rest is the engine's hot path: see Docs/Tempo.docc/Performance.md."))
        let droppedRatio = Stats(dropped).median / base
        report.targets.append(
            Target(
                name: "dropped `throttle` call within 3× floor",
                measured: format(droppedRatio, digits: 2) + "× ("
                    + format(Stats(dropped).median, digits: 1) + " ns)",
                met: droppedRatio <= 3,
                note: "a dropped call still pays the caller's closure allocation and release "
                    + "and the engine's full call path (two hash lookups of the key, the state "
                    + "transition); see Docs/Tempo.docc/Performance.md."))
        report.targets.append(
            Target(
                name: "no `Task` or timer created for a dropped or replaced call",
                measured: "\(Int(replaced)) extra timers per debounce burst, "
                    + "\(Int(droppedMax)) for dropped throttle calls"
                    + (wrongRuns > 0 ? "; \(wrongRuns) bursts did not run only their last call"
                        : ""),
                met: replaced == 0 && droppedMax == 0 && wrongRuns == 0,
                note: "a replaced or dropped call armed a timer: the engine's `arm` re-armed"
                    + " instead of letting the existing timer re-sleep."))
        return base
    }

    // MARK: Concurrency

    private func concurrency(into report: inout Report, floor: Double) async {
        let repetitions = max(3, config.repetitions / 2)
        for callers in config.callerCounts {
            var distinct: [Double] = []
            var shared: [Double] = []
            var floorShared: [Double] = []
            progress("concurrent callers: \(callers)")
            for _ in 0..<repetitions {
                distinct.append(
                    concurrentDebounce(
                        callers: callers, totalCalls: config.concurrentCalls, shared: false))
                shared.append(
                    concurrentDebounce(
                        callers: callers, totalCalls: config.concurrentCalls, shared: true))
                floorShared.append(
                    concurrentFloor(
                        callers: callers, totalCalls: config.concurrentCalls, shared: true))
            }
            func add(_ name: String, _ values: [Double]) {
                let stats = Stats(values)
                report.rows.append(
                    Row(
                        section: "concurrent callers", name: name, unit: .callsPerSecond,
                        stats: stats, ratioToFloor: 1e9 / stats.median / floor))
            }
            let threads = callers == 1 ? "1 thread" : "\(callers) threads"
            add("`debounce`, \(threads), distinct identifiers: total", distinct)
            add("`debounce`, \(threads), one shared identifier: total", shared)
            add("floor, \(threads), one shared `Mutex` dictionary: total", floorShared)
        }
    }

    // MARK: Memory

    private func memory(into report: inout Report) {
        var perLive: [Double] = []
        var growth: [Double] = []
        var trimmed: [Double] = []
        var peak: [Double] = []
        var waves: [Double] = []
        for repetition in 0..<config.memoryRepetitions {
            progress("memory: repetition \(repetition + 1) of \(config.memoryRepetitions)")
            if let value = child(["live", "\(config.liveIdentifiers)"]).first {
                perLive.append(value)
            }
            let idle = child(["idle", "\(config.idleIdentifiers)", "\(config.idleIdentifiers)"])
            if idle.count == 3 {
                growth.append(idle[0])
                trimmed.append(idle[1])
                peak.append(idle[2])
            }
            if let value = child(["idle", "\(config.idleIdentifiers)", "1000"]).first {
                waves.append(value)
            }
        }
        guard !perLive.isEmpty, !growth.isEmpty, !waves.isEmpty else {
            report.notes.append("Resident memory is not measured on this platform.")
            report.targets.append(
                Target(
                    name: "resident growth after 200,000 idle identifiers under 2 MB",
                    measured: "not measured", met: false,
                    note: "needs /proc/self/statm (Linux)."))
            return
        }
        let count = grouped(config.idleIdentifiers)
        func add(_ name: String, _ unit: Unit, _ values: [Double]) {
            report.rows.append(
                Row(section: "memory", name: name, unit: unit, stats: Stats(values)))
        }
        add(
            "resident bytes per live identifier (\(grouped(config.liveIdentifiers)) live "
                + "debounce groups, each with its timer task)", .bytesPerIdentifier, perLive)
        add("resident growth after \(count) distinct identifiers, all live at once, went idle",
            .bytes, growth)
        add("… the same after `malloc_trim(0)` (memory the allocator kept)", .bytes, trimmed)
        add("… peak resident growth while they were live", .bytes, peak)
        add("resident growth after \(count) distinct identifiers, 1,000 live at a time, went idle",
            .bytes, waves)
        let limit = 2_000_000.0
        let median = Stats(growth).median
        let trimmedMedian = Stats(trimmed).median
        report.targets.append(
            Target(
                name: "resident growth after \(count) identifiers went idle under 2 MB",
                measured: format(median / 1e6, digits: 2) + " MB all at once, "
                    + format(Stats(waves).median / 1e6, digits: 2) + " MB in waves of 1,000",
                met: median < limit && Stats(waves).median < limit,
                note: "after `malloc_trim` the growth is "
                    + format(trimmedMedian / 1e6, digits: 2) + " MB"
                    + (trimmedMedian < limit
                        ? ": the rest is freed memory the C allocator keeps, not live objects"
                        : ": live memory stays behind (the registry's dictionaries keep their "
                            + "peak capacity after their keys are removed)") + "."))
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
                measured: "+" + format(median, digits: 1) + " µs ("
                    + format(Stats(debounceP99).median, digits: 1) + " vs "
                    + format(Stats(sleepP99).median, digits: 1) + " µs)",
                met: median <= 100,
                note: "the timer task wakes like a bare sleep and then takes the registry lock; "
                    + "a late p99 points at lock contention or a re-sleep in the timer loop."))
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
                measured: "\(total) in \(grouped(config.orderingBursts * config.repetitions)) bursts",
                met: total == 0,
                note: "a burst ended with an earlier call than its last: call order was lost."))
    }
}
