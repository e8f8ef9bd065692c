import Synchronization
import Tempo

// The loops. Each returns wall nanoseconds per call (printed for the reader; the gate judges
// instructions, or the process's CPU time). Every identifier is used by one row only.

/// Wall nanoseconds `body` takes, over `calls`.
private func perCall(_ calls: Int, _ body: () -> Void) -> Double {
    let start = ContinuousClock.now
    body()
    return nanoseconds(since: start, calls)
}

/// What any library must do to record a call: read the clock and write one entry of a
/// `Mutex`-guarded dictionary.
func floor(_ calls: Int) -> Double {
    let table = Mutex<[String: ContinuousClock.Instant]>([:])
    let key = "hot"
    return perCall(calls) {
        for _ in 0..<calls {
            let now = ContinuousClock.now
            table.withLock { $0[key] = now }
        }
    }
}

/// A log an operation writes to, so it captures something.
final class Log: Sendable {
    private let count = Atomic<Int>(0)
    func ran(_ index: Int) { count.add(1, ordering: .relaxed) }
}

/// `debounce` calls whose operation captures nothing: the engine's own cost.
func debounceRow(_ calls: Int) -> Double {
    perCall(calls) {
        for _ in 0..<calls {
            debounce(.seconds(3_600), identifier: "debounce", by: .taskContext) {}
        }
    }
}

/// `debounce` calls whose operation captures its call's index and a log.
func debounceCapturingRow(_ calls: Int) -> Double {
    let log = Log()
    return perCall(calls) {
        for i in 0..<calls {
            debounce(.seconds(3_600), identifier: "debounce-capturing", by: .taskContext) {
                log.ran(i)
            }
        }
    }
}

/// `throttle` calls that find the window open and are dropped; the operation captures nothing.
func throttleRow(_ calls: Int) -> Double {
    throttle(.seconds(3_600), identifier: "throttle", by: .taskContext) {}
    return perCall(calls) {
        for _ in 0..<calls {
            throttle(.seconds(3_600), identifier: "throttle", by: .taskContext) {}
        }
    }
}

/// Dropped `throttle` calls whose operation captures its call's index and a log.
func throttleCapturingRow(_ calls: Int) -> Double {
    let log = Log()
    throttle(.seconds(3_600), identifier: "throttle-capturing", by: .taskContext) { log.ran(-1) }
    return perCall(calls) {
        for i in 0..<calls {
            throttle(.seconds(3_600), identifier: "throttle-capturing", by: .taskContext) {
                log.ran(i)
            }
        }
    }
}

/// A bucket that admits every call of a run: a permit a millisecond, a burst of a trillion.
private let roomy = RateLimit(1_000, per: .seconds(1), burst: 1_000_000_000_000)
/// A bucket that refuses every call after the first: a permit an hour.
private let tight = RateLimit(1, per: .seconds(3_600))

/// `takeRatePermit`, every call admitted.
func ratePermitRow(_ calls: Int) -> Double {
    perCall(calls) { for _ in 0..<calls { try? takeRatePermit(roomy, identifier: "permit") } }
}

/// `takeRatePermit`, every call refused.
func ratePermitRefusedRow(_ calls: Int) -> Double {
    try? takeRatePermit(tight, identifier: "permit-refused")
    var refused = 0
    let ns = perCall(calls) {
        for _ in 0..<calls {
            do { try takeRatePermit(tight, identifier: "permit-refused") } catch { refused += 1 }
        }
    }
    precondition(refused == calls, "a call was admitted")
    return ns
}

/// `try await rateLimit(…) { }`, every call admitted.
func rateLimitRow(_ calls: Int) async -> Double {
    var ran = 0
    let start = ContinuousClock.now
    for _ in 0..<calls { _ = try? await rateLimit(roomy, identifier: "rate") { ran += 1 } }
    precondition(ran == calls, "a call was refused")
    return nanoseconds(since: start, calls)
}

/// `try await rateLimit(…, whenLimited: .reject) { }`, every call refused.
func rateLimitRefusedRow(_ calls: Int) async -> Double {
    try? takeRatePermit(tight, identifier: "rate-refused")
    var ran = 0
    let start = ContinuousClock.now
    for _ in 0..<calls {
        _ = try? await rateLimit(tight, whenLimited: .reject, identifier: "rate-refused") {
            ran += 1
        }
    }
    precondition(ran == 0, "a call was admitted")
    return nanoseconds(since: start, calls)
}

/// A breaker that never opens in a run: its window holds successes only.
private let closed = CircuitBreakerPolicy(window: .lastCalls(100))

/// `try await circuitBreaker(…) { }` through a closed breaker.
func breakerRow(_ calls: Int) async -> Double {
    var ran = 0
    let start = ContinuousClock.now
    for _ in 0..<calls { _ = try? await circuitBreaker(closed, identifier: "breaker") { ran += 1 } }
    precondition(ran == calls, "a call was rejected")
    return nanoseconds(since: start, calls)
}

/// `try await circuitBreaker(…) { }` rejected by a breaker opened by hand.
func breakerOpenRow(_ calls: Int) async -> Double {
    openCircuitBreaker(identifier: "breaker-open")
    var rejected = 0
    let start = ContinuousClock.now
    for _ in 0..<calls {
        do { _ = try await circuitBreaker(closed, identifier: "breaker-open") { 1 } } catch {
            rejected += 1
        }
    }
    precondition(rejected == calls, "a call ran")
    return nanoseconds(since: start, calls)
}

/// Admitted `concurrencyLimit` calls one after another; with `busy` another call holds a slot
/// meanwhile, so the key stays live.
func concurrencyRow(_ calls: Int, busy: Bool, on executor: InlineExecutor) async -> Double {
    let identifier = busy ? "limit-busy" : "limit-idle"
    let holder = busy ? await SlotHolder(identifier, limit: 2, on: executor) : nil
    var ran = 0
    let start = ContinuousClock.now
    for _ in 0..<calls { _ = try? await concurrencyLimit(2, identifier: identifier) { ran += 1 } }
    let ns = nanoseconds(since: start, calls)
    await holder?.release()
    precondition(ran == calls, "a call was turned away")
    return ns
}

/// `concurrencyLimit` calls turned away at once: the only slot is held, the queue takes nobody.
func concurrencyRefusedRow(_ calls: Int, on executor: InlineExecutor) async -> Double {
    let holder = await SlotHolder("limit-full", limit: 1, on: executor)
    var rejected = 0
    let start = ContinuousClock.now
    for _ in 0..<calls {
        do { try await concurrencyLimit(1, queue: 0, identifier: "limit-full") {} } catch {
            rejected += 1
        }
    }
    let ns = nanoseconds(since: start, calls)
    await holder.release()
    precondition(rejected == calls, "a call was admitted")
    return ns
}

/// A call that holds a slot of a concurrency limit until released, in a task on `executor`.
private struct SlotHolder {
    let task: Task<Void, Never>
    let gate: AsyncStream<Void>.Continuation

    init(_ identifier: String, limit: Int, on executor: InlineExecutor) async {
        let (stream, gate) = AsyncStream<Void>.makeStream()
        let (entered, enteredGate) = AsyncStream<Void>.makeStream()
        task = Task(executorPreference: executor) {
            _ = try? await concurrencyLimit(limit, identifier: identifier) {
                enteredGate.finish()
                for await _ in stream {}
            }
        }
        self.gate = gate
        for await _ in entered {}
    }

    func release() async {
        gate.finish()
        await task.value
    }
}

private func nanoseconds(since start: ContinuousClock.Instant, _ calls: Int) -> Double {
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(max(calls, 1))
}
