import Synchronization
import Testing

@testable import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Plain OS threads, more than there are cores, calling `debounce` on the real clock: the
/// callers a server's thread pool or event loops make. Bounded (a few seconds at most, also
/// under ThreadSanitizer); threads wait for runs by polling.
///
/// Each burst ends with a marked closing call made after every other call of the burst was
/// applied: it is the burst's last call, so it must run exactly once. A thread descheduled for
/// longer than the window in the middle of a burst (the machine is loaded, or runs under
/// ThreadSanitizer) legitimately splits the burst, so runs of earlier calls are allowed; no
/// call may run twice, and the registry must be empty at the end. Exact coalescing is checked
/// on the manual clock elsewhere; this checks the lock and the tables under contention.
@Suite struct ThreadStressTests {
    static let threads = 16
    static let rounds = 12
    static let callsPerBurst = 8
    static let window = Duration.milliseconds(5)
    /// The call number of a burst's closing call.
    static let closing = callsPerBurst

    struct Run: Hashable, Sendable {
        var thread: Int
        var round: Int
        var call: Int
    }

    /// Checks what holds whatever the scheduling: each round's closing calls ran exactly once,
    /// nothing ran twice.
    static func check(_ runs: [Run], closers: [Int]) {
        #expect(Set(runs).count == runs.count, "a call ran twice")
        for round in 0..<rounds {
            for thread in closers {
                let closing = Run(thread: thread, round: round, call: Self.closing)
                #expect(runs.filter { $0 == closing }.count == 1, "\(closing)")
            }
        }
    }

    /// One identifier per thread.
    @Test func realClockSixteenThreadsOnDistinctIdentifiers() async {
        let registry = TempoRegistry(clock: ContinuousClock())
        let ran = Log<Run>()
        let failed = Atomic<Bool>(false)
        await runOnThreads(Self.threads) { thread in
            registry.withCurrent {
                for round in 0..<Self.rounds {
                    for call in 0...Self.closing {
                        debounce(Self.window, identifier: "thread-\(thread)", by: .taskContext) {
                            ran.append(Run(thread: thread, round: round, call: call))
                        }
                    }
                    let closing = Run(thread: thread, round: round, call: Self.closing)
                    guard waitUntil({ ran.all.contains(closing) }) else {
                        failed.store(true, ordering: .relaxed)
                        return
                    }
                }
            }
        }
        let stalled = failed.load(ordering: .relaxed)
        #expect(!stalled, "a burst's closing call never ran (60 s)")
        Self.check(ran.all, closers: Array(0..<Self.threads))
        #expect(await eventually { registry.liveKeyCount == 0 })
    }

    /// All threads call on one identifier in each round; thread 0 closes the round once every
    /// thread's calls are in.
    @Test func realClockSixteenThreadsOnOneSharedIdentifier() async {
        let registry = TempoRegistry(clock: ContinuousClock())
        let ran = Log<Run>()
        let applied = Atomic<Int>(0)
        let closed = Atomic<Int>(0)
        let failed = Atomic<Bool>(false)
        await runOnThreads(Self.threads) { thread in
            registry.withCurrent {
                for round in 0..<Self.rounds {
                    // Start together, once the previous round's closing call has run.
                    guard waitUntil({ closed.load(ordering: .acquiring) >= round }) else {
                        failed.store(true, ordering: .relaxed)
                        return
                    }
                    for call in 0..<Self.callsPerBurst {
                        debounce(Self.window, identifier: "shared", by: .taskContext) {
                            ran.append(Run(thread: thread, round: round, call: call))
                        }
                    }
                    applied.add(1, ordering: .acquiringAndReleasing)
                    guard thread == 0 else { continue }
                    let everyone = (round + 1) * Self.threads
                    guard waitUntil({ applied.load(ordering: .acquiring) >= everyone }) else {
                        failed.store(true, ordering: .relaxed)
                        return
                    }
                    debounce(Self.window, identifier: "shared", by: .taskContext) {
                        ran.append(Run(thread: 0, round: round, call: Self.closing))
                    }
                    let closing = Run(thread: 0, round: round, call: Self.closing)
                    guard waitUntil({ ran.all.contains(closing) }) else {
                        failed.store(true, ordering: .relaxed)
                        return
                    }
                    closed.store(round + 1, ordering: .releasing)
                }
            }
        }
        let stalled = failed.load(ordering: .relaxed)
        #expect(!stalled, "a round's closing call never ran (60 s)")
        Self.check(ran.all, closers: [0])
        #expect(await eventually { registry.liveKeyCount == 0 })
    }
}

/// Polls `condition` every 0.2 ms for up to 60 seconds. The pause is a polling interval, not
/// a timing assumption: spinning instead (even with `sched_yield`) lets 16 threads take the
/// cores from the task pool that runs the timers they wait for.
private func waitUntil(_ condition: () -> Bool) -> Bool {
    let end = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < end {
        if condition() { return true }
        usleep(200)
    }
    return condition()
}

private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// Runs `body(k)` on `count` new OS threads and returns when all of them have finished. It
/// suspends rather than joining, so the test holds no thread of the task pool that runs the
/// timers the threads wait for.
private func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    let left = Atomic<Int>(count)
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        for k in 0..<count {
            let thread = ThreadBody {
                body(k)
                if left.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
                    done.resume()
                }
            }
            let context = Unmanaged.passRetained(thread).toOpaque()
            #if os(Linux)
                var handle = pthread_t()
            #else
                var handle: pthread_t? = nil
            #endif
            let status = pthread_create(
                &handle, nil,
                { raw in
                    Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().run()
                    return nil
                }, context)
            precondition(status == 0, "pthread_create failed: \(status)")
            #if os(Linux)
                pthread_detach(handle)
            #else
                pthread_detach(handle!)
            #endif
        }
    }
}
