import Foundation
import Synchronization
import TempoTesting
import Testing

@testable import Tempo

// Attacks on "current skips the task-local lookup while no binding of another registry is
// alive": every way a task or thread can hold a binding (child tasks, tasks that outlive their
// scope, plain threads, cancellation handlers, timers that fire outside any scope) must still
// see its registry, and code that holds no binding must see `shared`. Other suites open scopes
// at the same time, which only makes the count larger: run alone (`--filter`), these tests fail
// if the count ever misses a live binding.

@Suite struct CurrentRegistryAdversarialTests {
    @Test func structuredChildrenSeeTheScopeAndLandTheirCallsInIt() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let seen = await registry.withCurrent {
            async let child: Bool = {
                debounce(.seconds(5), identifier: "async let", by: .taskContext) {}
                return TempoRegistry.current === registry
            }()
            let group = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        debounce(.seconds(5), identifier: "child \(index)", by: .taskContext) {}
                        return TempoRegistry.current === registry
                    }
                }
                return await group.reduce(true) { $0 && $1 }
            }
            return await child && group
        }
        #expect(seen)
        #expect(registry.pendingDebounce(identifier: "async let") != nil)
        for index in 0..<8 {
            #expect(registry.pendingDebounce(identifier: "child \(index)") != nil)
        }
        #expect(TempoRegistry.shared.pendingDebounce(identifier: "async let") == nil)
        registry.cancelAll()
    }

    @Test func aTaskWithAnExecutorPreferenceKeepsTheScopeAfterItEnds() async {
        let registry = TempoRegistry(clock: ManualClock())
        let (gate, open) = AsyncStream<Void>.makeStream()
        let task = registry.withCurrent {
            Task(executorPreference: globalConcurrentExecutor) {
                for await _ in gate {}
                return TempoRegistry.current === registry
            }
        }
        open.finish()
        #expect(await task.value)
    }

    /// The binding of a scope opened on a thread with no task is copied into a `Task` started
    /// there: the task keeps it (and the count) after the thread's scope has ended.
    @Test func aTaskStartedInAScopeOnAPlainThreadOutlivesIt() async {
        let registry = TempoRegistry(clock: ManualClock())
        let (gate, open) = AsyncStream<Void>.makeStream()
        let made = Lock<Task<Bool, Never>?>(nil)
        let thread = Thread {
            let task = registry.withCurrent {
                Task.detached {}  // nothing inherited: only the plain `Task` below is
                return Task {
                    for await _ in gate {}
                    return TempoRegistry.current === registry
                        && TempoRegistry.withCurrentRegistry { $0 === registry }
                }
            }
            made.withLock { $0 = task }
        }
        thread.start()
        #expect(await eventually { made.withLock { $0 != nil } })
        open.finish()
        #expect(await made.withLock { $0 }!.value)
    }

    /// A handler that runs in the cancelled task itself (the task was cancelled before it
    /// installed the handler) sees the task's scope; one run by a canceller sees the
    /// canceller's scope, not the cancelled task's.
    @Test func cancellationHandlersSeeTheScopeOfWhereTheyRun() async {
        let inside = TempoRegistry(clock: ManualClock())
        let canceller = TempoRegistry(clock: ManualClock())
        let seen = Log<String>()
        let task = inside.withCurrent {
            Task {
                withUnsafeCurrentTask { $0?.cancel() }
                await withTaskCancellationHandler {
                } onCancel: {
                    seen.append(TempoRegistry.current === inside ? "own task: inside" : "wrong")
                }
            }
        }
        await task.value
        let (gate, open) = AsyncStream<Void>.makeStream()
        let waiting = inside.withCurrent {
            Task {
                await withTaskCancellationHandler {
                    for await _ in gate {}
                } onCancel: {
                    seen.append(
                        TempoRegistry.current === canceller ? "canceller's" : "not canceller's")
                }
            }
        }
        try? await Task.sleep(for: .milliseconds(20))
        canceller.withCurrent { waiting.cancel() }
        open.finish()
        await waiting.value
        #expect(seen.all == ["own task: inside", "canceller's"])
    }

    /// A timer of a registry on a manual clock, advanced where no scope is open: the operation
    /// it starts, and a task that operation starts, see the registry that fired it, after the
    /// timer's callback has returned too.
    @Test func aTimerAdvancedOutsideAnyScopeBindsItsRegistryForWhatItStarts() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let debouncer = Debouncer(.seconds(1), by: .taskContext, registry: registry)
        let throttler = Throttler(
            .seconds(1), by: .taskContext, option: .ensureLast, registry: registry)
        let seen = Log<String>()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let later = Lock<Task<Void, Never>?>(nil)
        debouncer {
            seen.append(TempoRegistry.current === registry ? "debounced" : "debounced: wrong")
            let task = Task {
                for await _ in gate {}
                seen.append(TempoRegistry.current === registry ? "task" : "task: wrong")
            }
            later.withLock { $0 = task }
        }
        // The leading call runs in the caller, which has no scope: it sees `shared`.
        throttler {
            seen.append(
                TempoRegistry.current === TempoRegistry.shared ? "leading" : "leading: wrong")
        }
        throttler {
            seen.append(TempoRegistry.current === registry ? "trailing" : "trailing: wrong")
        }
        #expect(TempoRegistry.current === TempoRegistry.shared)
        await clock.advance(by: .seconds(1))
        open.finish()
        #expect(await eventually { later.withLock { $0 != nil } })
        await later.withLock { $0 }!.value
        #expect(seen.all.sorted() == ["debounced", "leading", "task", "trailing"])
    }

    /// Real threads: some open scopes of their own registry (with a scope of `shared` nested
    /// inside, and tasks that outlive the scope), others open none, all at once. Every call must
    /// land in the registry its thread has bound, and `current` must say so, every time.
    @Test func realClockThreadsOpeningScopesWhileOthersCallFreeFunctions() async {
        let scoped = (0..<3).map { _ in TempoRegistry(clock: ManualClock()) }
        let wrong = Atomic<Int>(0)
        let calls = Atomic<Int>(0)
        let outliving = Lock<[Task<Bool, Never>]>([])
        // The tasks started in the scopes check their registry only once every scope has ended.
        let (stream, open) = AsyncStream<Void>.makeStream()
        let gate = Task { for await _ in stream {} }
        let done = Atomic<Int>(0)
        var threads: [Thread] = []
        for index in 0..<5 {
            threads.append(
                Thread {
                    for round in 1...10_000 {
                        if index < scoped.count {
                            let registry = scoped[index]
                            let name = "stress \(index) \(round)"
                            registry.withCurrent {
                                debounce(.seconds(100), identifier: name, by: .taskContext) {}
                                if TempoRegistry.current !== registry
                                    || registry.pendingDebounce(identifier: name) == nil
                                {
                                    wrong.add(1, ordering: .relaxed)
                                }
                                cancelDebounce(identifier: name)
                                TempoRegistry.shared.withCurrent {
                                    if TempoRegistry.current !== TempoRegistry.shared {
                                        wrong.add(1, ordering: .relaxed)
                                    }
                                }
                                if round % 64 == 0 {
                                    let task = Task {
                                        await gate.value
                                        return TempoRegistry.current === registry
                                    }
                                    outliving.withLock { $0.append(task) }
                                }
                            }
                        } else if TempoRegistry.current !== TempoRegistry.shared
                            || TempoRegistry.withCurrentRegistry({ $0 !== TempoRegistry.shared })
                        {
                            wrong.add(1, ordering: .relaxed)
                        }
                        calls.add(1, ordering: .relaxed)
                    }
                    done.add(1, ordering: .relaxed)
                })
        }
        for thread in threads { thread.start() }
        #expect(await eventually(within: .seconds(5)) { done.load(ordering: .relaxed) == 5 })
        open.finish()
        for task in outliving.withLock({ $0 }) { #expect(await task.value) }
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(calls.load(ordering: .relaxed) > 0)
        for registry in scoped { #expect(registry.liveKeyCount == 0) }
        #expect(
            !TempoRegistry.shared.snapshot().entries.contains { $0.key.hasPrefix("stress ") })
    }
}
