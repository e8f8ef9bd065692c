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
