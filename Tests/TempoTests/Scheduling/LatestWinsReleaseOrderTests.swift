import Foundation
import TempoTesting
import Testing

@testable import Tempo

// Latest wins orders runs by their release: a run counts as started when the engine releases
// it (a timer fires, a flush, a call that runs at once), not when its caller's task gets round
// to it. A caller whose actor is busy when its call is released must not overtake a run the
// engine released after it.

/// A serial executor on a thread of its own that a test can hold: while it is held, the jobs
/// enqueued on it wait, as they would behind an actor busy with long work.
final class HoldableExecutor: SerialExecutor, @unchecked Sendable {
    // @unchecked: `jobs`, `held` and `stopped` are read and written only with `condition`
    // locked; the thread that runs the jobs takes it too.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var held = false
    private var stopped = false
    /// A job is running on the thread now.
    private var running = false

    init() {
        Thread.detachNewThread { [self] in run() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.broadcast()
        condition.unlock()
    }

    /// Keeps the jobs enqueued from now on waiting until ``release()``.
    ///
    /// Returns once no job runs: a job that was running when it was called (the caller's
    /// task, about to suspend) has finished its turn, so what the test does next finds the
    /// actor held, not busy with that job.
    func hold() {
        condition.lock()
        held = true
        while running { condition.wait() }
        condition.unlock()
    }

    /// ``hold()`` from inside one of this executor's jobs: the jobs enqueued from now on wait
    /// once the running job's turn ends. Returns at once (``hold()`` would wait for the job
    /// that calls it).
    func holdAfterThisJob() {
        condition.lock()
        held = true
        condition.unlock()
    }

    /// Runs the jobs waiting, and those that come later.
    func release() {
        condition.lock()
        held = false
        condition.broadcast()
        condition.unlock()
    }

    /// How many jobs wait to run.
    var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs.count
    }

    /// Ends the thread once the jobs enqueued so far have run.
    func stop() {
        condition.lock()
        stopped = true
        held = false
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while (jobs.isEmpty || held) && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            running = true
            condition.unlock()
            job.runSynchronously(on: asUnownedSerialExecutor())
            condition.lock()
            running = false
            condition.broadcast()
            condition.unlock()
        }
    }
}

/// The four awaited forms, each with its flush: a call of the form's group, made on the
/// caller's actor, and a release of the group's waiting call by the engine, now.
enum AwaitedForm: CaseIterable, Sendable {
    case debouncer, debounceResult, throttler, throttleResult

    /// A debounce (trailing) or throttle (`.trailing`) group of 100 ms on `.taskContext`.
    struct Group: Sendable {
        let form: AwaitedForm
        let debouncer: Debouncer
        let throttler: Throttler
        let name: String

        nonisolated(nonsending) func call(
            _ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> String
        ) async throws -> String {
            switch form {
            case .debouncer:
                return try await debouncer.result(latestWins: true, operation)
            case .debounceResult:
                return try await Tempo.debounceResult(
                    .milliseconds(100), identifier: name, by: .taskContext, latestWins: true,
                    operation: operation)
            case .throttler:
                return try await throttler.result(latestWins: true, operation)
            case .throttleResult:
                return try await Tempo.throttleResult(
                    .milliseconds(100), identifier: name, by: .taskContext, option: .trailing,
                    latestWins: true, operation: operation)
            }
        }

        /// Runs the group's waiting call now.
        func flush() {
            switch form {
            case .debouncer: debouncer.flush()
            case .debounceResult: flushDebounce(identifier: name)
            case .throttler: throttler.flush()
            case .throttleResult: flushThrottle(identifier: name)
            }
        }

        /// Whether the group has a call waiting for its time.
        func hasWaitingCall(_ registry: TempoRegistry) -> Bool {
            AwaitedForm.hasWaitingCall(registry)
        }
    }

    /// Whether a debounce or throttle group of `registry` has a call waiting for its time.
    static func hasWaitingCall(_ registry: TempoRegistry) -> Bool {
        registry.snapshot().entries.contains { entry in
            switch entry.state {
            case .debounce(let runsAt, _): runsAt != nil
            case .throttle(_, let trailingPending): trailingPending
            default: false
            }
        }
    }

    /// A group of this form in the current registry.
    func group(_ name: String = "busy") -> Group {
        Group(
            form: self, debouncer: Debouncer(.milliseconds(100), by: .taskContext),
            throttler: Throttler(.milliseconds(100), by: .taskContext, option: .trailing),
            name: name)
    }
}

/// An actor on a ``HoldableExecutor``: its awaited calls resume on it, so holding the executor
/// is a busy caller.
actor HeldCaller {
    let executor = HoldableExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func call(_ group: AwaitedForm.Group, _ label: String, log: Log<String>) async throws
        -> String
    {
        try await group.call {
            log.append(label)
            return label
        }
    }

    /// Starts `call` in a task on this actor and returns the task once the call has reached its
    /// first suspension (an awaited call has then been applied). Call it while the executor is
    /// not held.
    nonisolated func start<T: Sendable>(
        _ call: nonisolated(nonsending) @escaping @Sendable () async throws -> T
    ) async -> Task<T, any Error> {
        var task: Task<T, any Error>?
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            task = Task { try await self.run(call, signalling: continuation) }
        }
        // Enqueued after the job that runs the call, which has begun: this returns once that
        // job has given up the actor.
        await barrier()
        return task!
    }

    private func run<T: Sendable>(
        _ call: nonisolated(nonsending) @Sendable () async throws -> T,
        signalling continuation: CheckedContinuation<Void, Never>
    ) async throws -> T {
        continuation.resume()
        return try await call()
    }

    /// Returns once every job enqueued on the actor before it has run (its executor runs jobs
    /// in the order they come).
    func barrier() {}
}

@Suite(.timeLimit(.minutes(2))) struct LatestWinsReleaseOrderTests {
    /// Call A, made on an actor, is released by its timer while that actor is busy; call B,
    /// made later from a free task, is released next (a flush) and starts its operation, which
    /// runs for 3 s on the clock; then the actor is free again. B was released after A, so B
    /// overtakes A: A gets `overtaken` without running its operation, and B's value is
    /// delivered. Before the fix A was counted as started only when its caller woke, so A
    /// overtook B and delivered "A".
    @Test(arguments: AwaitedForm.allCases)
    func aRunReleasedLaterOvertakesOneWhoseCallerIsBusy(_ form: AwaitedForm) async {
        await onManualClock { clock, registry in
            let caller = HeldCaller()
            defer { caller.executor.stop() }
            let group = form.group()
            let ran = Log<String>()
            let first = Task { try await caller.call(group, "A", log: ran) }
            #expect(await eventually { group.hasWaitingCall(registry) })
            caller.executor.hold()
            // A's timer fires; the advance then waits for A's caller, whose actor is busy.
            let advancing = Task { await clock.advance(by: .milliseconds(100)) }
            #expect(await eventually { caller.executor.waiting == 1 })
            let second = Task {
                try await group.call {
                    ran.append("B")
                    try await clock.sleep(for: .seconds(3))
                    return "B"
                }
            }
            #expect(await eventually { group.hasWaitingCall(registry) })
            group.flush()
            #expect(await eventually { ran.all == ["B"] })
            caller.executor.release()
            #expect(await finishes { await advancing.value })
            await clock.advance(by: .seconds(3))
            #expect(await Outcome(first) == .overtaken)
            #expect(await Outcome(second) == .value("B"))
            #expect(ran.all == ["B"])
            #expect(await eventually { LatestRuns.count(registry) == 0 })
        }
    }

    /// Two zero-duration latest-wins `throttleResult` calls, the second made right after the
    /// first was released (a hundred such pairs at a time, each in a group of its own): the second
    /// overtakes the first (or the first had already handed its value over), never the other
    /// way round. Before the fix each run counted as started in a task of its own, and the
    /// first one's task sometimes got there after the second one's: the older call is made at
    /// a low priority and the newer at a high one, which made that happen in about one pair in
    /// 200-500 (40 to 120 of the 20,000 pairs, in three runs).
    @MainActor @Test func backToBackZeroDurationRunsOvertakeInReleaseOrder() async {
        await onMainManualClock { _, registry in
            var wrong: [String] = []
            for round in 0..<200 {
                var pairs: [(Task<String, any Error>, Task<String, any Error>)] = []
                for pair in 0..<100 {
                    let name = "pair \(round) \(pair)"
                    let older = await started(at: .background) {
                        try await throttleResult(
                            .zero, identifier: name, by: .taskContext, latestWins: true
                        ) { "older" }
                    }
                    let newer = await started(at: .high) {
                        try await throttleResult(
                            .zero, identifier: name, by: .taskContext, latestWins: true
                        ) { "newer" }
                    }
                    pairs.append((older, newer))
                }
                for (older, newer) in pairs {
                    let outcomes = (await Outcome(older), await Outcome(newer))
                    if outcomes.1 != .value("newer") { wrong.append("round \(round): \(outcomes)") }
                }
                if wrong.count >= 3 { break }
            }
            #expect(wrong.isEmpty, "\(wrong)")
            #expect(await eventually { LatestRuns.count(registry) == 0 })
        }
    }
}

/// ``started(_:)`` for a task of the given priority.
@MainActor
private func started<T: Sendable>(
    at priority: TaskPriority, _ body: @escaping @MainActor @Sendable () async throws -> T
) async -> Task<T, any Error> {
    var task: Task<T, any Error>?
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        task = Task(priority: priority) { @MainActor in
            continuation.resume()
            return try await body()
        }
    }
    return task!
}
