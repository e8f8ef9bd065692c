import Synchronization
import Tempo

/// The least any library must do to record a call: read the clock once and write one entry of
/// a `Mutex`-guarded dictionary, uncontended, keyed by the same identifier string the Tempo
/// benchmarks use. Returns nanoseconds per call.
func floorCost(calls: Int) -> Double {
    let table = Mutex<[String: ContinuousClock.Instant]>([:])
    let key = "hot"
    table.withLock { $0[key] = .now }
    return wallNanoseconds {
        for _ in 0..<calls {
            let now = ContinuousClock.now
            table.withLock { $0[key] = now }
        }
    } / Double(calls)
}

/// The floor plus what every debounce library also pays: the caller's operation is an escaping
/// closure capturing its call's data, allocated by the caller and stored. Returns nanoseconds
/// per call.
func floorWithClosureCost(calls: Int) -> Double {
    let table = Mutex<[String: (ContinuousClock.Instant, @Sendable () -> Void)]>([:])
    let log = RunLog()
    let key = "hot"
    let ns = wallNanoseconds {
        for i in 0..<calls {
            let now = ContinuousClock.now
            let operation: @Sendable () -> Void = { log.ran(i) }
            let replaced = table.withLock { $0.updateValue((now, operation), forKey: key) }
            _ = replaced  // released outside the lock, as the engine does
        }
    }
    return ns / Double(calls)
}

/// One burst of fire-and-forget debounce calls on one hot identifier, and its single run.
struct BurstResult {
    /// Time per call at the caller.
    var caller: Double
    /// From the first call until the trailing run started, minus the debounce duration (time
    /// spent waiting, not working), per call.
    var endToEnd: Double
    /// CPU time of every thread of the process from the first call until the run, per call.
    var cpu: Double
    /// Timers the registry armed during the burst (the group's own one is expected).
    var timersArmed: Int
    /// Whether exactly one call ran and it was the last.
    var ranOnlyLast: Bool
}

/// `calls` fire-and-forget `debounce` calls on one identifier, operation run inline on the timer
/// task (`.taskContext`), then waits for the trailing run.
func debounceBurst(calls: Int, identifier: String, duration: Duration) async -> BurstResult {
    let registry = TempoRegistry.shared
    let log = RunLog()
    let timers = registry.timersArmed
    let cpuStart = processCPUNanoseconds()
    let start = ContinuousClock.now
    for i in 0..<calls {
        debounce(duration, identifier: identifier, by: .taskContext) { log.ran(i) }
    }
    let end = ContinuousClock.now
    try? await Task.sleep(until: end + duration, clock: .continuous)
    let ran = await waitUntil(timeout: .seconds(10)) { log.count > 0 }
    let cpu = processCPUNanoseconds() - cpuStart
    _ = await waitUntil(timeout: .seconds(10)) { registry.liveKeyCount == 0 }
    let runs = log.entries
    let endToEnd = ran ? (runs[0].at - start - duration).nanoseconds : .infinity
    return BurstResult(
        caller: (end - start).nanoseconds / Double(calls),
        endToEnd: endToEnd / Double(calls),
        cpu: cpu / Double(calls),
        timersArmed: registry.timersArmed - timers,
        ranOnlyLast: runs.count == 1 && runs[0].index == calls - 1)
}

/// Calls that find a throttle window open and are dropped.
struct DroppedResult {
    var perCall: Double
    var timersArmed: Int
    var runs: Int
}

/// Opens a long throttle window, then makes `calls` calls that are all dropped.
func droppedThrottle(calls: Int, identifier: String) -> DroppedResult {
    let registry = TempoRegistry.shared
    let log = RunLog()
    throttle(.seconds(3_600), identifier: identifier, by: .taskContext) { log.ran(-1) }
    let timers = registry.timersArmed
    let ns = wallNanoseconds {
        for i in 0..<calls {
            throttle(.seconds(3_600), identifier: identifier, by: .taskContext) { log.ran(i) }
        }
    }
    let result = DroppedResult(
        perCall: ns / Double(calls), timersArmed: registry.timersArmed - timers, runs: log.count)
    registry.cancelAll()
    return result
}

/// Async code that awaits each call: the `Task`-returning `throttle` overload, every call
/// dropped, each task's value awaited before the next call. Returns nanoseconds per call.
func awaitedDroppedThrottle(calls: Int, identifier: String) async -> DroppedResult {
    let registry = TempoRegistry.shared
    let log = RunLog()
    let first: Task<Void, Never> = throttle(
        .seconds(3_600), identifier: identifier, by: .taskContext
    ) { () async throws in log.ran(-1) }
    await first.value
    let timers = registry.timersArmed
    let start = ContinuousClock.now
    for i in 0..<calls {
        let task: Task<Void, Never> = throttle(
            .seconds(3_600), identifier: identifier, by: .taskContext
        ) { () async throws in log.ran(i) }
        await task.value
    }
    let ns = (ContinuousClock.now - start).nanoseconds
    let result = DroppedResult(
        perCall: ns / Double(calls), timersArmed: registry.timersArmed - timers, runs: log.count)
    registry.cancelAll()
    return result
}

/// Async code that debounces with the `Task`-returning overload: a burst of `calls` calls, then
/// every returned task awaited (the replaced ones finish at once, the last after its run).
/// Returns nanoseconds per call, not counting the debounce duration.
func awaitedDebounceBurst(calls: Int, identifier: String, duration: Duration) async -> BurstResult
{
    let registry = TempoRegistry.shared
    let log = RunLog()
    let timers = registry.timersArmed
    var tasks: [Task<Void, Never>] = []
    tasks.reserveCapacity(calls)
    let start = ContinuousClock.now
    for i in 0..<calls {
        let task: Task<Void, Never> = debounce(
            duration, identifier: identifier, by: .taskContext
        ) { () async throws in log.ran(i) }
        tasks.append(task)
    }
    let end = ContinuousClock.now
    for task in tasks { await task.value }
    let ns = (ContinuousClock.now - start - duration).nanoseconds
    _ = await waitUntil(timeout: .seconds(10)) { registry.liveKeyCount == 0 }
    let runs = log.entries
    return BurstResult(
        caller: (end - start).nanoseconds / Double(calls), endToEnd: ns / Double(calls), cpu: 0,
        timersArmed: registry.timersArmed - timers,
        ranOnlyLast: runs.count == 1 && runs[0].index == calls - 1)
}

/// `callers` threads calling `debounce` at once, `totalCalls` in all, each on its own
/// identifier (`shared == false`) or all on one. Calls replace a pending call (the window is
/// an hour long). Returns total calls per second.
func concurrentDebounce(callers: Int, totalCalls: Int, shared: Bool) -> Double {
    let perCaller = totalCalls / callers
    let log = RunLog()
    let ns = runOnThreads(callers) { k in
        let identifier = shared ? "shared" : "caller-\(k)"
        for i in 0..<perCaller {
            debounce(.seconds(3_600), identifier: identifier, by: .taskContext) { log.ran(i) }
        }
    }
    TempoRegistry.shared.cancelAll()
    return Double(perCaller * callers) / (ns / 1e9)
}

/// The floor under the same concurrency: `callers` threads writing one `Mutex`-guarded
/// dictionary. Returns total calls per second.
func concurrentFloor(callers: Int, totalCalls: Int, shared: Bool) -> Double {
    let perCaller = totalCalls / callers
    let table = TableBox()
    let ns = runOnThreads(callers) { k in
        let key = shared ? "shared" : "caller-\(k)"
        for _ in 0..<perCaller {
            let now = ContinuousClock.now
            table.table.withLock { $0[key] = now }
        }
    }
    return Double(perCaller * callers) / (ns / 1e9)
}

private final class TableBox: Sendable {
    let table = Mutex<[String: ContinuousClock.Instant]>([:])
}
