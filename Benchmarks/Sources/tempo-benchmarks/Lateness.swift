import Tempo

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
