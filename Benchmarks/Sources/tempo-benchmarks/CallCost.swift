import Synchronization
@_spi(Benchmarks) import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    /// Timers the registry armed during the burst beyond one per run. A group arms one timer
    /// (an entry in the timer driver's heap) when it becomes live and is removed only after a
    /// run; a call that moves the deadline later arms nothing, the timer is pushed back when it
    /// fires. So anything above zero is a timer made for a replaced call (and, when it was
    /// earlier than the runner's wake-up, a new runner `Task`). (A call that finds the pending
    /// call overdue runs it itself and keeps the group and its timer, so runs may outnumber
    /// timers.)
    var extraTimers: Int
    /// Runs: 1, unless the caller stalled for longer than the window mid-burst.
    var runs: Int
    /// Whether the burst's last run was its last call.
    var lastRanLast: Bool
}

/// `calls` fire-and-forget `debounce` calls on one identifier, then waits for the trailing run.
/// The operation is `.taskContext`: fired by the timer driver's runner, it runs in a task of
/// its own that the runner starts (the runner never runs user code).
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
    let endToEnd = ran ? (runs[runs.count - 1].at - start - duration).nanoseconds : .infinity
    return BurstResult(
        caller: (end - start).nanoseconds / Double(calls),
        endToEnd: endToEnd / Double(calls),
        cpu: cpu / Double(calls),
        extraTimers: max(0, registry.timersArmed - timers - runs.count),
        runs: runs.count,
        lastRanLast: runs.last?.index == calls - 1)
}

/// `calls` fire-and-forget `debounce` calls whose operation captures nothing, so the caller
/// allocates no closure context: the engine's own cost. Returns nanoseconds per call.
func debounceNonCapturing(calls: Int, identifier: String) -> Double {
    let ns = wallNanoseconds {
        for _ in 0..<calls {
            debounce(.seconds(3_600), identifier: identifier, by: .taskContext) {}
        }
    }
    TempoRegistry.shared.cancelAll()
    return ns / Double(calls)
}

/// Runs the engine launches on an actor, one per call: `delay(.zero, by: .ownedActor)` hands
/// each operation to `TempoActor` at once, in a task of its own, counted as launched work until
/// it has run (what a drain waits for). Measured until the last one has run. Returns
/// nanoseconds per call.
func launchedRuns(calls: Int) async -> Double {
    let log = RunLog()
    let start = ContinuousClock.now
    for i in 0..<calls {
        delay(.zero, by: .ownedActor) { log.ran(i) }
    }
    while log.count < calls { await Task.yield() }
    return (ContinuousClock.now - start).nanoseconds / Double(calls)
}

/// Fire-and-forget `debounce` calls on one identifier, each operation capturing its call's
/// index and a log, as the burst of the cost section makes them, without waiting for the run:
/// the caller's side, for profilers. Returns nanoseconds per call.
func debounceCapturing(calls: Int, identifier: String) -> Double {
    let log = RunLog()
    let ns = wallNanoseconds {
        for i in 0..<calls {
            debounce(.seconds(3_600), identifier: identifier, by: .taskContext) { log.ran(i) }
        }
    }
    TempoRegistry.shared.cancelAll()
    return ns / Double(calls)
}

/// Dropped `throttle` calls whose operation captures nothing: the engine's own cost. Returns
/// nanoseconds per call.
func droppedThrottleNonCapturing(calls: Int, identifier: String) -> Double {
    throttle(.seconds(3_600), identifier: identifier, by: .taskContext) {}
    let ns = wallNanoseconds {
        for _ in 0..<calls {
            throttle(.seconds(3_600), identifier: identifier, by: .taskContext) {}
        }
    }
    TempoRegistry.shared.cancelAll()
    return ns / Double(calls)
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
/// dropped, each task's value (done at once) awaited before the next call. Returns nanoseconds
/// per call.
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
/// every returned task awaited (each is done at once: it stands for the call having been
/// applied), then the run. Returns nanoseconds per call from the first call to the run, not
/// counting the debounce duration.
func awaitedDebounceBurst(calls: Int, identifier: String, duration: Duration) async -> BurstResult {
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
    _ = await waitUntil(timeout: .seconds(10)) { log.count > 0 }
    let ns = ((log.last?.at ?? ContinuousClock.now) - start - duration).nanoseconds
    _ = await waitUntil(timeout: .seconds(10)) { registry.liveKeyCount == 0 }
    let runs = log.entries
    return BurstResult(
        caller: (end - start).nanoseconds / Double(calls), endToEnd: ns / Double(calls), cpu: 0,
        extraTimers: max(0, registry.timersArmed - timers - runs.count), runs: runs.count,
        lastRanLast: runs.last?.index == calls - 1)
}

/// Tells the threads of a throughput benchmark when to stop, and counts their calls.
private final class RunControl: Sendable {
    let stop = Atomic<Bool>(false)
    let calls = Atomic<Int>(0)
    let table = Mutex<[String: ContinuousClock.Instant]>([:])
}

/// Runs `body` (which makes 64 calls) on `callers` threads until `length` has passed; returns
/// the total calls per second.
private func throughput(
    callers: Int, length: Duration, _ body: @escaping @Sendable (RunControl, Int) -> Void
) -> Double {
    let control = RunControl()
    let stopper = Task.detached {
        try? await Task.sleep(for: length)
        control.stop.store(true, ordering: .releasing)
    }
    let ns = runOnThreads(callers) { k in
        var calls = 0
        while !control.stop.load(ordering: .acquiring) {
            body(control, k)
            calls += 64
        }
        control.calls.add(calls, ordering: .relaxed)
    }
    _ = stopper
    return Double(control.calls.load(ordering: .relaxed)) / (ns / 1e9)
}

/// Numbers the measurements of `concurrentDebounce`, for fresh identifiers.
private let measurementRound = Atomic<Int>(0)

/// `callers` threads calling `debounce` at once for `length`, each on its own identifier
/// (`shared == false`) or all on one. Calls replace a pending call (the window is an hour
/// long). Returns total calls per second.
/// With `shards`, the calls go to a registry of that many shards instead of the shared one.
func concurrentDebounce(callers: Int, length: Duration, shared: Bool, shards: Int? = nil)
    -> Double
{
    let log = RunLog()
    let registry =
        shards.map { TempoRegistry(clock: ContinuousClock(), shardCount: $0) }
        ?? TempoRegistry.shared
    // Fresh identifiers for every measurement: two distinct identifiers share a shard with a
    // chance of one in the shard count, and a process keeps its hash seed, so the same two
    // names would fall in one shard in every repetition of an unlucky process (one in eight
    // runs with 8 shards). With fresh names an unlucky pair costs one repetition, not the row.
    let round = measurementRound.add(1, ordering: .relaxed).newValue
    let result = throughput(callers: callers, length: length) { _, k in
        let identifier = shared ? "shared-\(round)" : "caller-\(k)-\(round)"
        registry.withCurrent {
            for i in 0..<64 {
                debounce(.seconds(3_600), identifier: identifier, by: .taskContext) { log.ran(i) }
            }
        }
    }
    registry.cancelAll()
    return result
}

/// `callers` threads calling `delay` at once for `length`, each from its own call site (so on
/// its own shard), on a new registry: every call arms a timer, and every timer of the registry
/// sits in its one timer driver, so this is what the driver sustains when the shards do not
/// stand in the way. Returns total calls per second.
func concurrentTimers(callers: Int, length: Duration) -> Double {
    let registry = TempoRegistry(clock: ContinuousClock())
    let result = throughput(callers: callers, length: length) { _, k in
        let line = UInt(k + 1)
        registry.withCurrent {
            for _ in 0..<64 {
                delay(.seconds(3_600), by: .taskContext, fileID: #fileID, line: line, column: 1) {}
            }
        }
    }
    registry.cancelAll()
    return result
}

/// Which lock guards the dictionary of a concurrency floor.
enum FloorLock: Sendable {
    /// A plain `pthread_mutex_t` (no priority inheritance), as Tempo's lock on Linux.
    case pthread
    /// `Synchronization.Mutex` (a priority-inheriting futex on Linux, `os_unfair_lock` on Apple).
    case mutex
}

/// The floor under the same concurrency: `callers` threads writing one dictionary on one
/// shared key, behind the given lock. Returns total calls per second.
func concurrentFloor(callers: Int, length: Duration, lock: FloorLock) -> Double {
    switch lock {
    case .mutex:
        return throughput(callers: callers, length: length) { control, _ in
            for _ in 0..<64 {
                let now = ContinuousClock.now
                control.table.withLock { $0["shared"] = now }
            }
        }
    case .pthread:
        let table = PthreadTable()
        return throughput(callers: callers, length: length) { _, _ in
            for _ in 0..<64 { table.set("shared", ContinuousClock.now) }
        }
    }
}

/// A dictionary behind a `pthread_mutex_t` kept at a stable address.
private final class PthreadTable: @unchecked Sendable {
    // `values` is touched only between `pthread_mutex_lock` and `pthread_mutex_unlock` on
    // `mutex`, whose storage is allocated once and never moves.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var values: [String: ContinuousClock.Instant] = [:]

    init() {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func set(_ key: String, _ value: ContinuousClock.Instant) {
        pthread_mutex_lock(mutex)
        values[key] = value
        pthread_mutex_unlock(mutex)
    }
}
