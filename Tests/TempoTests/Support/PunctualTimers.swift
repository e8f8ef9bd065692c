import Tempo

// For the real-network tests that measure on the real clock: a wait until the machine keeps
// their timers.

/// Waits, at most 60 s, until a high-priority task on `executor` (as the network tests'
/// clients are) finds its timers punctual: 25 sleeps of 20 ms in a row, each waking at most
/// 20 ms after its deadline. While a parallel run starts its hundreds of tests, a loaded
/// two-core machine wakes even a high-priority task's sleep up to seconds late (measured: up to
/// 3 s, and only in a run's first 7 s); what the tests measure is Tempo's rate or latency, not
/// that of a machine that cannot keep a 50 ms timer. It never fails a test: after 60 s the
/// test goes on and measures anyway.
func waitForPunctualTimers(on executor: ThreadExecutor) async {
    await Task(executorPreference: executor, priority: .high) {
        let clock = ContinuousClock()
        let end = clock.now + .seconds(60)
        var punctual = 0
        while punctual < 25, clock.now < end {
            let deadline = clock.now + .milliseconds(20)
            try? await clock.sleep(until: deadline)
            punctual = clock.now - deadline <= .milliseconds(20) ? punctual + 1 : 0
        }
    }.value
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The network tests that measure a rate or a latency on the real clock take turns, and each
/// measures once the rest of the test run has gone quiet: this process has used less than a
/// quarter of one core in each of four 250 ms windows in a row (at most 120 s of waiting; then
/// it measures anyway, and never fails a test for the wait). In a parallel run of the whole
/// suite its hundreds of other tests keep both cores of a small machine busy for half a minute,
/// and a client that is not scheduled for 100 ms measures the machine, not Tempo: a window
/// limit's late start pushes the next window out (the rate read 84% of the allowed rate
/// there), and trips that bunch by more than the margin draw a 429. Run on their own, the same
/// tests measure the same with no wait.
func measuredAlone<R>(_ body: () async throws -> R) async rethrows -> R {
    await NetworkMeasurements.turns.acquire()
    await waitForAQuietProcess()
    do {
        let result = try await body()
        await NetworkMeasurements.turns.release()
        return result
    } catch {
        await NetworkMeasurements.turns.release()
        throw error
    }
}

/// The process's CPU time, all threads.
private func processCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
}

private func waitForAQuietProcess() async {
    let clock = ContinuousClock()
    let end = clock.now + .seconds(120)
    var quiet = 0
    while quiet < 4, clock.now < end {
        let before = processCPUTime()
        try? await clock.sleep(for: .milliseconds(250))
        quiet = processCPUTime() - before < .milliseconds(62) ? quiet + 1 : 0
    }
}

/// One measurement at a time, first come first served.
private actor NetworkMeasurements {
    static let turns = NetworkMeasurements()
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}

/// Runs `body` while a high-priority probe sleeps 10 ms at a time beside it, and returns how
/// late the probe woke at the worst: how far behind the machine was scheduling tasks while the
/// body measured. A network test asserts what depends on punctual clients (a rate, trips that
/// vary by less than a margin) only when this stayed under the margin: a machine loaded from
/// outside the test process (a build beside the tests) can delay a client's start past it,
/// which measures the machine, not Tempo.
func withLatenessProbe<R>(_ body: () async throws -> R) async rethrows -> (R, Duration) {
    let worst = Lock<Duration>(.zero)
    let done = Lock(false)
    let probe = Task.detached(priority: .high) {
        let clock = ContinuousClock()
        while !done.withLock({ $0 }) {
            let deadline = clock.now + .milliseconds(10)
            try? await clock.sleep(until: deadline)
            let late = clock.now - deadline
            worst.withLock { $0 = max($0, late) }
        }
    }
    do {
        let result = try await body()
        done.withLock { $0 = true }
        await probe.value
        return (result, worst.withLock { $0 })
    } catch {
        done.withLock { $0 = true }
        await probe.value
        throw error
    }
}
