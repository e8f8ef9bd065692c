import Synchronization
import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Lateness percentiles of one repetition, in microseconds.
struct LatenessResult {
    var debounceP50: Double
    var debounceP99: Double
    var sleepP50: Double
    var sleepP99: Double
}

/// How long after its deadline a debounced operation starts, beside how long after its
/// deadline a bare `ContinuousClock` sleep returns, sampled alternately in the same run.
///
/// Both deadlines are "the instant read just before the call, plus `delay`". The debounced
/// operation (`.taskContext`) reads the clock first thing; it runs in a task of its own that
/// the timer driver's runner starts once it has woken for the deadline and the group's timer
/// has fired, so its lateness is the runner's wake-up, the driver's and the registry's locks,
/// and one task start. The bare sleep reads the clock right after `Task.sleep(until:)`
/// returns.
func measureLateness(samples: Int, delay: Duration) async -> LatenessResult {
    var debounced: [Double] = []
    var slept: [Double] = []
    for _ in 0..<samples {
        let sleepDeadline = ContinuousClock.now + delay
        try? await Task.sleep(until: sleepDeadline, clock: .continuous)
        slept.append((ContinuousClock.now - sleepDeadline).nanoseconds / 1_000)

        let (deadline, ranAt) = await withCheckedContinuation {
            (
                continuation: CheckedContinuation<
                    (ContinuousClock.Instant, ContinuousClock.Instant), Never
                >
            ) in
            let deadline = ContinuousClock.now + delay
            debounce(delay, identifier: "lateness", by: .taskContext) {
                continuation.resume(returning: (deadline, ContinuousClock.now))
            }
        }
        debounced.append((ranAt - deadline).nanoseconds / 1_000)
    }
    return LatenessResult(
        debounceP50: percentile(debounced, 0.5), debounceP99: percentile(debounced, 0.99),
        sleepP50: percentile(slept, 0.5), sleepP99: percentile(slept, 0.99))
}

/// Lateness of a debounce while `callers` CPU-bound tasks at `priority` each do `work` and
/// call `debounce` `callsPerTurn` times on keys of their own (a new key every call), over and
/// over, in microseconds: p50, p99, max, and the most keys live at a sample.
///
/// The measuring loop runs on the main actor, as an app's UI code would, so the pool's load
/// does not hold up the calls themselves: only the timer runner and the task it starts for the
/// operation compete with the callers. A sample whose operation has not started 30 s into the
/// run ends it. Run it as `tempo-benchmarks --child loaded high|low CALLERS SAMPLES`.
@MainActor
func measureLatenessUnderLoad(
    priority: TaskPriority, callers: Int, samples: Int, delay: Duration = .milliseconds(5),
    work: Duration = .microseconds(100), callsPerTurn: Int = 8
) async -> (p50: Double, p99: Double, max: Double, backlog: Int, missing: Int) {
    let stop = LoadFlag()
    let late = Mutex<[Double]>([])
    let watchdog = Task.detached(priority: .high) {
        try? await Task.sleep(for: .seconds(30))
        guard !stop.isSet else { return }
        let values = late.withLock { $0 }
        print(
            "gave up after 30 s: \(values.count) of \(samples) samples, "
                + "p50 \(values.isEmpty ? 0 : percentile(values, 0.5)) µs, "
                + "max \(values.max() ?? 0) µs, backlog \(TempoRegistry.shared.liveKeyCount) keys")
        exit(0)
    }
    var load: [Task<Void, Never>] = []
    for caller in 0..<callers {
        load.append(
            Task.detached(priority: priority) {
                var call = 0
                while !stop.isSet {
                    // Some work, calls on keys of their own, a turn for others.
                    let end = ContinuousClock.now + work
                    while ContinuousClock.now < end {}
                    for _ in 0..<callsPerTurn {
                        call += 1
                        debounce(delay, identifier: "load-\(caller)-\(call)", by: .taskContext) {}
                    }
                    await Task.yield()
                }
            })
    }
    try? await Task.sleep(for: .milliseconds(200))  // the load is up
    var backlog = 0
    for _ in 0..<samples {
        let (deadline, ranAt) = await withCheckedContinuation {
            (
                continuation: CheckedContinuation<
                    (ContinuousClock.Instant, ContinuousClock.Instant), Never
                >
            ) in
            let deadline = ContinuousClock.now + delay
            debounce(delay, identifier: "loaded-lateness", by: .taskContext) {
                continuation.resume(returning: (deadline, ContinuousClock.now))
            }
        }
        late.withLock { $0.append((ranAt - deadline).nanoseconds / 1_000) }
        backlog = max(backlog, TempoRegistry.shared.liveKeyCount)
    }
    stop.set()
    watchdog.cancel()
    for task in load { await task.value }
    let values = late.withLock { $0 }
    return (
        percentile(values, 0.5), percentile(values, 0.99), values.max() ?? 0, backlog,
        samples - values.count
    )
}

/// How long a call on a small key takes when it is made 100 µs after another task started a call
/// with a 1 MB identifier, over `samples` such pairs, in microseconds: p50, p90 and max, beside the
/// large call's mean. Hashing the large identifier while the registry's lock is held makes the
/// small call wait for the hash.
///
/// Run it as `tempo-benchmarks --child bigkey SAMPLES`.
func measureLargeIdentifierStall(samples: Int) async -> (
    p50: Double, p90: Double, max: Double, large: Double
) {
    let big = String(repeating: "x", count: 1 << 20)
    let turns = Turns()
    let hammer = Task.detached { () -> Double in
        var total = 0.0
        for sample in 1...samples {
            let start = ContinuousClock.now
            turns.started.store(sample, ordering: .releasing)
            debounce(.seconds(3_600), identifier: big, by: .taskContext) {}
            total += (ContinuousClock.now - start).nanoseconds / 1_000
            while turns.finished.load(ordering: .acquiring) < sample {}
        }
        return total / Double(samples)
    }
    let small = Task.detached { () -> [Double] in
        var took: [Double] = []
        for sample in 1...samples {
            while turns.started.load(ordering: .acquiring) < sample {}
            // Let the large call get going (it takes about a millisecond) before calling.
            let going = ContinuousClock.now + .microseconds(100)
            while ContinuousClock.now < going {}
            let start = ContinuousClock.now
            debounce(.seconds(3_600), identifier: "small", by: .taskContext) {}
            took.append((ContinuousClock.now - start).nanoseconds / 1_000)
            turns.finished.store(sample, ordering: .releasing)
        }
        return took
    }
    let took = await small.value
    let large = await hammer.value
    TempoRegistry.shared.cancelAll()
    return (percentile(took, 0.5), percentile(took, 0.9), took.max() ?? 0, large)
}

/// The pairs of calls two tasks have started and finished.
final class Turns: Sendable {
    let started = Atomic<Int>(0)
    let finished = Atomic<Int>(0)
}

/// A flag one task sets and others poll.
final class LoadFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
