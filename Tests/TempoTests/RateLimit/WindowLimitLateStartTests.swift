import Dispatch
import Testing

@testable import Tempo

// A window limit counts operations when they start, not when its timer admits them: a waiter
// whose task resumes late (its actor busy, the machine loaded) records its start at the instant
// it resumes, so the margin stays for the request's trip. These tests hold the waiter's actor
// on an executor the test pumps by hand, and move a clock the test sets by hand, so the late
// resume is exact and the run deterministic.

/// A clock the test sets: `now` is what was set last, and a sleeper wakes when the clock is set
/// to its deadline or later (or throws when its task is cancelled).
final class SetClock: Clock, @unchecked Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private struct Sleeper {
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Duration.zero
        var sleepers: [UInt64: Sleeper] = [:]
        var lastID: UInt64 = 0
    }

    private let state = Lock(State())

    var now: Instant { Instant(offset: state.withLock { $0.now }) }
    var minimumResolution: Duration { .nanoseconds(1) }

    /// The sleepers waiting now (the timer driver's runner, when a timer is armed).
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state -> UInt64 in
            state.lastID += 1
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if Task.isCancelled || deadline.offset <= state.now { return true }
                    state.sleepers[id] = Sleeper(
                        deadline: deadline.offset, continuation: continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// Sets the clock to `offset` and wakes the sleepers due by then.
    func set(_ offset: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = offset
            let due = state.sleepers.filter { $0.value.deadline <= offset }
            for id in due.keys { state.sleepers[id] = nil }
            return Array(due.values)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}

/// A serial executor whose jobs run in order on a queue of their own, except while the test
/// holds it: an actor on it is then busy, and its jobs wait until ``release()``.
final class HeldExecutor: SerialExecutor, @unchecked Sendable {
    private struct State {
        var held = false
        var jobs: [UnownedJob] = []
    }

    private let state = Lock(State())
    private let queue = DispatchQueue(label: "HeldExecutor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let run = state.withLock { state -> Bool in
            if state.held { state.jobs.append(job) }
            return !state.held
        }
        if run { queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) } }
    }

    /// The jobs held back.
    var pending: Int { state.withLock { $0.jobs.count } }

    /// From now on, jobs wait for ``release()``.
    func hold() { state.withLock { $0.held = true } }

    /// Runs the jobs held back, in order, and the later ones as they come.
    func release() {
        let jobs = state.withLock { state -> [UnownedJob] in
            state.held = false
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in jobs { queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) } }
    }
}

/// An actor whose turns the test hands out: its calls wait in ``HeldExecutor`` until pumped.
actor LateStarter {
    nonisolated let executor = HeldExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private(set) var startedAt: Duration?

    /// Waits for a start of `limit` under `identifier`, then notes the clock's reading.
    func start(_ limit: RateLimit, identifier: String, registry: TempoRegistry, clock: SetClock)
        async throws
    {
        try await registry.withCurrent {
            try await rateLimit(limit, identifier: identifier) {
                startedAt = clock.now.offset
            }
        }
    }
}

/// A limit of one start a second (a window, unless another is given) on a ``SetClock``, with one
/// start at 0 and a waiter on a ``LateStarter`` that the key's timer admits at 1 s, held there:
/// its actor is busy.
struct HeldWaiter {
    let clock = SetClock()
    let registry: TempoRegistry
    let limit: RateLimit
    let caller = LateStarter()
    let waiting: Task<Void, any Error>
    /// The rate-limit admissions reported: "instant admitted after waited".
    let admissions = Log<String>()
    let observer: TempoObserver

    init(_ limit: RateLimit = .window(1, per: .seconds(1), margin: .zero)) async throws {
        let clock = clock
        let registry = TempoRegistry(clock: clock)
        self.limit = limit
        let caller = caller
        self.registry = registry
        let admissions = admissions
        observer = registry.observe { event in
            if case .rateLimitAdmitted(let waited) = event.decision {
                admissions.append("\(event.at) admitted after \(waited)")
            }
        }
        try registry.withCurrent { try takeRatePermit(limit, identifier: "api") }
        waiting = Task {
            try await caller.start(limit, identifier: "api", registry: registry, clock: clock)
        }
        #expect(await eventually { WindowLimitLateStartTests.waiters(registry) == 1 })
        caller.executor.hold()
        clock.set(.seconds(1))
        #expect(await eventually { caller.executor.pending > 0 })
        #expect(WindowLimitLateStartTests.waiters(registry) == 0)
    }

    /// Takes a start at once, or throws ``RateLimitError``.
    func take() throws {
        try registry.withCurrent { try takeRatePermit(limit, identifier: "api") }
    }

    /// Lets the waiter's actor go at `offset`: the operation starts then.
    func release(at offset: Duration) async throws {
        clock.set(offset)
        caller.executor.release()
        try await waiting.value
        #expect(await caller.startedAt == offset)
    }
}

@Suite struct WindowLimitLateStartTests {
    /// A waiter admitted at 1 s whose actor lets it start only at 1.1 s. A call at 2.05 s is
    /// 0.95 s after that start: the server would count two requests in a second, so the limit
    /// refuses it (counting the admission at 1 s, it let it through).
    @Test func aWaiterThatResumesLateCountsWhenItStarts() async throws {
        let held = try await HeldWaiter()
        try await held.release(at: .milliseconds(1_100))
        held.clock.set(.milliseconds(2_050))
        #expect(throws: RateLimitError.self) { try held.take() }
        // A second after the late start, the next one is free.
        held.clock.set(.milliseconds(2_100))
        try held.take()
    }

    /// Admitted but not started, a start counts in every window: four seconds later nobody
    /// takes its slot, and it counts from when it starts.
    @Test func aStartInFlightCountsInEveryWindowUntilItStarts() async throws {
        let held = try await HeldWaiter()
        held.clock.set(.milliseconds(1_500))
        #expect(throws: RateLimitError.self) { try held.take() }
        held.clock.set(.seconds(5))
        #expect(throws: RateLimitError.self) { try held.take() }
        #expect(held.registry.liveKeyCount == 1)
        try await held.release(at: .seconds(5))
        held.clock.set(.milliseconds(5_999))
        #expect(throws: RateLimitError.self) { try held.take() }
        held.clock.set(.seconds(6))
        try held.take()
    }

    /// The admission is reported when the waiter starts, at that instant, with the time it
    /// waited until then.
    @Test func aLateWaitersAdmissionIsReportedWhenItStarts() async throws {
        let held = try await HeldWaiter()
        try await held.release(at: .milliseconds(1_100))
        await held.observer.waitUntilDelivered()
        #expect(held.admissions.all == ["1.1 seconds admitted after 1.1 seconds"])
    }

    /// A reset empties the window of the starts it recorded, not of those in flight: the
    /// admitted waiter that has not resumed keeps its slot, and is counted when it starts.
    /// (Before, the reset freed the slot: a call took it at 1.2 s and the late start came at
    /// 1.3 s, two starts in a window of one.)
    @Test func aResetKeepsTheStartsInFlight() async throws {
        let held = try await HeldWaiter()
        held.clock.set(.milliseconds(1_200))
        held.registry.resetRateLimit(identifier: "api")
        #expect(throws: RateLimitError.self) { try held.take() }
        try await held.release(at: .milliseconds(1_300))
        held.clock.set(.milliseconds(2_250))
        #expect(throws: RateLimitError.self) { try held.take() }
        held.clock.set(.milliseconds(2_300))
        try held.take()
    }

    /// A waiter cancelled after its admission, before its task resumed to start the
    /// operation, throws `CancellationError` where the operation would start, never runs it,
    /// and gives its slot back at once.
    @Test func aWaiterCancelledBeforeItStartsGivesItsSlotBack() async throws {
        let held = try await HeldWaiter()
        held.clock.set(.milliseconds(1_500))
        #expect(throws: RateLimitError.self) { try held.take() }
        held.waiting.cancel()
        held.caller.executor.release()
        await #expect(throws: CancellationError.self) { try await held.waiting.value }
        #expect(await held.caller.startedAt == nil)
        try held.take()
        #expect(held.admissions.all.isEmpty)
    }

    /// The same for a token bucket, whose tokens were taken at the admission and stay taken.
    @Test func aBucketWaiterCancelledBeforeItStartsDoesNotRun() async throws {
        let held = try await HeldWaiter(RateLimit(1, per: .seconds(1), burst: 1))
        held.waiting.cancel()
        held.caller.executor.release()
        await #expect(throws: CancellationError.self) { try await held.waiting.value }
        #expect(await held.caller.startedAt == nil)
        #expect(throws: RateLimitError.self) { try held.take() }
    }

    static func waiters(_ registry: TempoRegistry) -> Int {
        registry.snapshot().entries.reduce(0) { sum, entry in
            guard case .rateLimit(_, _, let waiters) = entry.state else { return sum }
            return sum + waiters
        }
    }
}
