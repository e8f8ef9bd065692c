import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Usage: swift run -c release --package-path Benchmarks tempo-benchmarks [--quick] [--json]
//
// Prints a markdown table (or, with --json, a JSON document) to standard output and progress to
// standard error. --quick runs a small version of everything (for CI).

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "--child" {
    // A memory benchmark in a fresh process, started by the parent run.
    let rest = Array(arguments.dropFirst())
    let count = rest.count > 1 ? Int(rest[1]) ?? 0 : 0
    switch rest.first {
    case "live":
        print(await MemoryChild.live(count))
    case "idle":
        let wave = rest.count > 2 ? Int(rest[2]) ?? count : count
        let window = rest.count > 3 ? Int(rest[3]) ?? 10 : 10
        print(await MemoryChild.idle(count, wave: wave, window: .milliseconds(window)))
    case "window":
        // --child window PERMITS KEYS: resident bytes per key holding a full window, and per
        // start held.
        let keys = rest.count > 2 ? Int(rest[2]) ?? 1 : 1
        print(await MemoryChild.window(permits: count, keys: keys))
    case "threads":
        // One measurement of the concurrency section: plain threads calling `debounce` for a
        // while, each on its own identifier or all on one; prints total calls/s.
        // --child threads distinct|shared CALLERS MILLISECONDS
        let callers = rest.count > 2 ? Int(rest[2]) ?? 1 : 1
        let ms = rest.count > 3 ? Int(rest[3]) ?? 500 : 500
        print(
            concurrentDebounce(
                callers: callers, length: .milliseconds(ms),
                shared: rest.count > 1 && rest[1] == "shared"))
    case "loop":
        // A bare hot loop for profilers:
        // --child loop floor|debounce|throttle|debouncecapturing|throttlecapturing|ratelimit
        //   |ratereject|rateasync|raterejectasync
        //   |climit|climitbusy|climitreject|breaker|breakeropen|launch CALLS
        //   [scoped]: meanwhile another task runs inside a `withCurrent` scope of another
        //   registry, as in a test process, so the free functions read the task-local value
        //   to learn which registry is current (while no scope is open anywhere they do not)
        let calls = rest.count > 2 ? Int(rest[2]) ?? 100_000 : 100_000
        let scope: Task<Void, Never>? =
            rest.count > 3 && rest[3] == "scoped"
            ? TempoRegistry(clock: ContinuousClock()).withCurrent {
                Task { try? await Task.sleep(for: .seconds(3_600)) }
            } : nil
        defer { scope?.cancel() }
        switch rest.count > 1 ? rest[1] : "" {
        case "floor": print(floorCost(calls: calls))
        case "debounce": print(debounceNonCapturing(calls: calls, identifier: "hot"))
        case "throttle": print(droppedThrottleNonCapturing(calls: calls, identifier: "hot"))
        case "debouncecapturing": print(debounceCapturing(calls: calls, identifier: "hot"))
        case "throttlecapturing": print(droppedThrottle(calls: calls, identifier: "hot").perCall)
        case "ratelimit": print(admittedRatePermit(calls: calls, identifier: "hot"))
        case "ratereject": print(rejectedRatePermit(calls: calls, identifier: "hot"))
        case "rateasync": print(await admittedRateLimit(calls: calls, identifier: "hot"))
        case "raterejectasync": print(await rejectedRateLimit(calls: calls, identifier: "hot"))
        case "breaker": print(await closedCircuitBreaker(calls: calls, identifier: "hot"))
        case "breakeropen":
            print(await openCircuitBreakerRejection(calls: calls, identifier: "hot"))
        case "climit": print(await concurrencyLimitAdmitted(calls: calls, busy: false))
        case "climitbusy": print(await concurrencyLimitAdmitted(calls: calls, busy: true))
        case "climitreject": print(await concurrencyLimitRejected(calls: calls))
        case "launch": print(await launchedRuns(calls: calls))
        default: print("nan")
        }
    case "loaded":
        // Debounce lateness under load:
        // --child loaded high|low CALLERS SAMPLES WORK_MICROSECONDS CALLS_PER_TURN
        let callers = rest.count > 2 ? Int(rest[2]) ?? 16 : 16
        let samples = rest.count > 3 ? Int(rest[3]) ?? 40 : 40
        let priority: TaskPriority = rest.count > 1 && rest[1] == "low" ? .low : .high
        let work = rest.count > 4 ? Int(rest[4]) ?? 100 : 100
        let calls = rest.count > 5 ? Int(rest[5]) ?? 8 : 8
        let result = await measureLatenessUnderLoad(
            priority: priority, callers: callers, samples: samples,
            work: .microseconds(work), callsPerTurn: calls)
        print(
            "p50 \(format(result.p50, digits: 0)) µs, p99 \(format(result.p99, digits: 0)) µs, "
                + "max \(format(result.max, digits: 0)) µs, backlog \(result.backlog) keys")
    case "bigkey":
        // A small-key call racing a 1 MB-identifier call: --child bigkey SAMPLES
        let result = await measureLargeIdentifierStall(samples: count == 0 ? 200 : count)
        print(
            "small-key call made 100 µs into a 1 MB-identifier call: "
                + "p50 \(format(result.p50, digits: 1)) µs, p90 \(format(result.p90, digits: 1)) µs, "
                + "max \(format(result.max, digits: 1)) µs; "
                + "the 1 MB-identifier call \(format(result.large, digits: 1)) µs")
    default:
        print("nan")
    }
    exit(0)
}

let usage = """
    usage: tempo-benchmarks [--quick] [--json] [--only SECTION] | --check-gate
      --quick         a small version of every benchmark (under 30 s); fails when a cost row
                      is above its ceiling (Ceilings.swift)
      --check-gate    test the gate's comparison on made-up figures, measuring nothing
      --json          print a JSON document instead of the markdown table
      --only SECTION  run one section: \(Section.allCases.map(\.rawValue).joined(separator: ", "))
    """
var sections = Set(Section.allCases)
var index = 0
while index < arguments.count {
    switch arguments[index] {
    case "--quick", "--json": break
    case "--check-gate":
        let failures = gateSelfTest()
        for failure in failures { progress("gate self-test: FAILED: " + failure) }
        guard failures.isEmpty else { exit(1) }
        progress("gate self-test: passed (\(ceilings.count) committed ceilings)")
        exit(0)
    case "--help", "-h":
        print(usage)
        exit(0)
    case "--only" where index + 1 < arguments.count:
        guard let section = Section(rawValue: arguments[index + 1]) else {
            progress("unknown section \(arguments[index + 1])\n" + usage)
            exit(2)
        }
        sections = [section]
        index += 1
    default:
        progress("unknown argument \(arguments[index])\n" + usage)
        exit(2)
    }
    index += 1
}

let config = arguments.contains("--quick") ? Config.quickRun : Config.full
if config.quick {
    // The comparison is tested before it is trusted with the run's figures.
    let failures = gateSelfTest()
    for failure in failures { progress("gate self-test: FAILED: " + failure) }
    if !failures.isEmpty { exit(1) }
}
let report = await Suite(config: config, sections: sections).run()
print(arguments.contains("--json") ? report.json() : report.markdown())

// The gate: the ceilings are set from --quick runs, so only they are checked.
if config.quick {
    let figures = report.gateFigures
    let problems = checkGate(
        figures, against: ceilings, allRowsRan: sections == Set(Section.allCases))
    for problem in problems { progress("gate: FAILED: " + problem.message) }
    if !problems.isEmpty {
        progress(
            "gate: \(problems.count) problem(s) in \(figures.count) gated rows; a ceiling is "
                + "changed only as CONTRIBUTING.md says (\"Benchmark ceilings\")")
        exit(1)
    }
    progress("gate: passed: \(figures.count) cost rows within their ceilings")
} else {
    progress("gate: not checked: the ceilings are set for --quick runs")
}
