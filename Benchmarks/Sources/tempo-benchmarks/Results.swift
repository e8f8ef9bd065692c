import Tempo

// What an awaited call whose result is dropped costs: `Throttler.result` and `throttleResult`
// (a continuation, no task; the caller gets `DiscardedCall.notRun`) against today's
// `Task`-returning forms (the Throttler's makes a task per call; the free function's returns
// one shared, finished task). Each repetition opens a one-hour window with a first call that
// runs, then makes `calls` calls that the window drops, awaiting each.

/// The four ways of making an awaited throttle call, for the rows.
enum DroppedAwaitedForm: CaseIterable {
    case throttlerTask, throttlerResult, freeTask, freeResult

    var name: String {
        switch self {
        case .throttlerTask: "Throttler, Task-returning form, dropped call, its task awaited"
        case .throttlerResult: "Throttler.result, dropped call awaited (DiscardedCall.notRun)"
        case .freeTask: "free async throttle (Task-returning), dropped call, its task awaited"
        case .freeResult: "throttleResult, dropped call awaited (DiscardedCall.notRun)"
        }
    }
}

/// Nanoseconds per dropped, awaited call of `form`.
func droppedAwaitedCall(_ form: DroppedAwaitedForm, calls: Int, identifier: String) async
    -> Double
{
    let window = Duration.seconds(3_600)
    let throttler = Throttler(window, by: .taskContext)
    let log = RunLog()
    // The first call opens the window and runs.
    switch form {
    case .throttlerTask: await throttler(onError: nil) { () async throws in log.ran(-1) }.value
    case .throttlerResult: _ = try? await throttler.result { log.ran(-1) }
    case .freeTask:
        let task: Task<Void, Never> = throttle(window, identifier: identifier, by: .taskContext) {
            () async throws in log.ran(-1)
        }
        await task.value
    case .freeResult:
        _ = try? await throttleResult(window, identifier: identifier, by: .taskContext) {
            log.ran(-1)
        }
    }
    var discarded = 0
    let start = ContinuousClock.now
    switch form {
    case .throttlerTask:
        for i in 0..<calls { await throttler(onError: nil) { () async throws in log.ran(i) }.value }
    case .throttlerResult:
        for i in 0..<calls {
            do { try await throttler.result { log.ran(i) } } catch { discarded += 1 }
        }
    case .freeTask:
        for i in 0..<calls {
            let task: Task<Void, Never> = throttle(
                window, identifier: identifier, by: .taskContext
            ) { () async throws in log.ran(i) }
            await task.value
        }
    case .freeResult:
        for i in 0..<calls {
            do {
                try await throttleResult(window, identifier: identifier, by: .taskContext) {
                    log.ran(i)
                }
            } catch {
                discarded += 1
            }
        }
    }
    let ns = (ContinuousClock.now - start).nanoseconds / Double(calls)
    throttler.cancel()
    cancelThrottle(identifier: identifier)
    let expected = form == .throttlerResult || form == .freeResult ? calls : 0
    precondition(log.count == 1 && discarded == expected, "a dropped call ran or was not settled")
    return ns
}

extension Suite {
    /// The `results` section: awaited dropped calls, result forms against `Task`-returning ones.
    func results(into report: inout Report) async {
        var measured: [DroppedAwaitedForm: [Double]] = [:]
        for repetition in 0..<config.repetitions {
            progress("awaited results: repetition \(repetition + 1) of \(config.repetitions)")
            for form in DroppedAwaitedForm.allCases {
                measured[form, default: []].append(
                    await droppedAwaitedCall(
                        form, calls: config.awaitedCalls, identifier: "results-\(form)"))
            }
        }
        for form in DroppedAwaitedForm.allCases {
            report.rows.append(
                Row(
                    section: "results", name: form.name, unit: .nanosecondsPerCall,
                    stats: Stats(measured[form]!)))
        }
    }
}
