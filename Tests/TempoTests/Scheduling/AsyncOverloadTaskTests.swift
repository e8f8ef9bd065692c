import Tempo
import TempoTesting
import Testing

/// What the `Task` returned by the free async `debounce` and `throttle` means: as in Throttler
/// 3.0.1, the call having been handed to the engine. The engine keeps the operation and runs it
/// when the group says; awaiting each returned task in a loop still coalesces. Each test is a
/// shape of Throttler's own tests, with the outcome Throttler gives. (When the returned task
/// carried the operation, the awaited loops on the manual clock waited forever for a run that
/// only `advance` could start: the time limit turns that into a failure. It is generous because
/// a ThreadSanitizer run of the whole suite on a loaded machine takes minutes.)
@Suite(.timeLimit(.minutes(5))) struct AsyncOverloadTaskTests {
    // MARK: The awaited loops coalesce

    @Test func anAwaitedDebounceLoopRunsOnlyTheLastCall() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for value in 1...5 {
                let task: Task<Void, Never> = debounce(
                    .milliseconds(20), identifier: "i", by: .taskContext
                ) {
                    log.mark("\(value)", registry)
                }
                await task.value
                await clock.advance(by: .milliseconds(5))
            }
            await clock.advance(by: .milliseconds(100))
            // The last call came at 20 ms: it runs 20 ms later.
            #expect(log.all == ["5@40"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func anAwaitedDebounceLoopFromOneCallSiteRunsOnlyTheLastCall() async {
        let log = Log<Int>()
        await onManualClock { clock, _ in
            for value in 1...5 {
                await debounce(.milliseconds(20), by: .taskContext) { log.append(value) }.value
            }
            await clock.advance(by: .milliseconds(100))
            #expect(log.all == [5])
        }
    }

    @Test func anAwaitedRunFirstLoopRunsTheFirstCallAndTheLast() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let first: Task<Void, Never> = debounce(
                .milliseconds(40), identifier: "r", by: .taskContext, option: .runFirst
            ) { log.mark("1", registry) }
            await first.value
            // The first call ran at once, in the task it returned.
            #expect(log.all == ["1@0"])
            await clock.advance(by: .milliseconds(10))
            for value in 2...3 {
                let task: Task<Void, Never> = debounce(
                    .milliseconds(40), identifier: "r", by: .taskContext, option: .runFirst
                ) { log.mark("\(value)", registry) }
                await task.value
            }
            await clock.advance(by: .milliseconds(120))
            #expect(log.all == ["1@0", "3@50"])
        }
    }

    @Test func aRunningOperationFinishesAfterTheNewerCallAwaitedAfterIt() async {
        let log = Log<Int>()
        await onManualClock { clock, _ in
            let first: Task<Void, Never> = debounce(
                .milliseconds(20), identifier: "o", by: .taskContext
            ) {
                try await clock.sleep(for: .milliseconds(80))
                log.append(1)
            }
            await first.value
            await clock.advance(by: .milliseconds(40))  // the first operation is running
            let second: Task<Void, Never> = debounce(
                .milliseconds(20), identifier: "o", by: .taskContext
            ) {
                log.append(2)
            }
            await second.value
            await clock.advance(by: .milliseconds(160))
            #expect(log.all == [2, 1])
        }
    }

    @Test func aThousandAwaitedDebounceCallsRunTheLastOnceAndMakeNoTaskEach() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            let armed = registry.timersArmed
            var tasks: Set<Task<Void, Never>> = []
            for value in 0..<1_000 {
                let task: Task<Void, Never> = debounce(
                    .milliseconds(20), identifier: "h", by: .taskContext
                ) {
                    log.append(value)
                }
                await task.value
                tasks.insert(task)
            }
            await clock.advance(by: .milliseconds(120))
            #expect(log.all == [999])
            // One shared task stands for every call that did not run at once; one timer.
            #expect(tasks.count == 1)
            #expect(registry.timersArmed - armed == 1)
        }
    }

    @Test func anAwaitedThrottleLoopRunsOnlyTheFirstCall() async {
        let log = Log<Int>()
        await onManualClock { clock, _ in
            for value in 1...5 {
                await throttle(.milliseconds(80), identifier: "t", by: .taskContext) {
                    log.append(value)
                }.value
            }
            #expect(log.all == [1])
            await clock.advance(by: .milliseconds(160))
            #expect(log.all == [1])
        }
    }

    @Test func anAwaitedEnsureLastLoopRunsTheFirstCallAndTheLast() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let first: Task<Void, Never> = throttle(
                .milliseconds(80), identifier: "e", by: .taskContext, option: .ensureLast
            ) { log.mark("1", registry) }
            await first.value
            #expect(log.all == ["1@0"])
            await clock.advance(by: .milliseconds(20))
            for value in 2...5 {
                let task: Task<Void, Never> = throttle(
                    .milliseconds(80), identifier: "e", by: .taskContext, option: .ensureLast
                ) { log.mark("\(value)", registry) }
                await task.value
            }
            await clock.advance(by: .milliseconds(160))
            #expect(log.all == ["1@0", "5@80"])
        }
    }

    @Test func aThousandAwaitedEnsureLastCallsRunTheFirstAndTheLast() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            let armed = registry.timersArmed
            await throttle(
                .milliseconds(100), identifier: "b", by: .taskContext, option: .ensureLast
            ) { log.append(0) }.value
            for value in 1...1_000 {
                await throttle(
                    .milliseconds(100), identifier: "b", by: .taskContext, option: .ensureLast
                ) { log.append(value) }.value
            }
            await clock.advance(by: .milliseconds(220))
            #expect(log.all == [0, 1_000])
            #expect(registry.timersArmed - armed == 1)
        }
    }

    // MARK: What the returned task carries

    @Test func aCallThatRunsAtOnceReturnsTheTaskRunningIt() async {
        let log = Log<String>()
        await onManualClock { _, _ in
            // Each operation yields before it logs: only awaiting the task that runs it is sure
            // to see the entry.
            let leading: Task<Void, Never> = throttle(
                .seconds(1), identifier: "l", by: .taskContext
            ) {
                for _ in 0..<100 { await Task.yield() }
                log.append("throttle")
            }
            let stored: Task<Void, Never> = debounce(.seconds(1), identifier: "s", by: .taskContext)
            {}
            #expect(leading != stored)
            await leading.value
            #expect(log.all == ["throttle"])
            await debounce(.seconds(1), identifier: "f", by: .taskContext, option: .leading) {
                for _ in 0..<100 { await Task.yield() }
                log.append("leading")
            }.value
            await debounce(.zero, identifier: "z", by: .taskContext) {
                for _ in 0..<100 { await Task.yield() }
                log.append("zero")
            }.value
            await throttle(.zero, identifier: "z", by: .ownedActor) {
                for _ in 0..<100 { await Task.yield() }
                log.append("zero 2")
            }.value
            #expect(log.all == ["throttle", "leading", "zero", "zero 2"])
            cancelDebounce(identifier: "s")
        }
    }

    @Test func cancellingTheTaskOfAStoredCallDoesNotWithdrawIt() async {
        let log = Log<Int>()
        await onManualClock { clock, registry in
            let task: Task<Void, Never> = debounce(.seconds(1), identifier: "k", by: .taskContext) {
                log.append(1)
            }
            task.cancel()
            await task.value
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .seconds(1))
            #expect(log.all == [1])
        }
    }

    @Test func errorsOfStoredCallsGoToOnError() async {
        let errors = Log<String>()
        await onManualClock { clock, _ in
            throttle(.seconds(1), identifier: "x", by: .taskContext, option: .ensureLast) {}
            let kept: Task<Void, Never> = throttle(
                .seconds(1), identifier: "x", by: .ownedActor, option: .ensureLast,
                onError: { errors.append("\($0)") }
            ) { throw Boom(attempt: 2) }
            await kept.value
            #expect(errors.all == [])
            await clock.advance(by: .seconds(1))
            #expect(errors.all == ["boom 2"])
        }
    }

    // MARK: A wrapper that forwards its caller's file ID as a String

    @Test func aWrapperForwardingAStringFileIDGroupsByItsCallersSite() async {
        let log = Log<String>()
        await onManualClock { clock, _ in
            for i in 0..<3 { debounceHere { log.append("loop \(i)") } }
            debounceHere { log.append("other site") }
            for i in 0..<3 { throttleHere { log.append("throttled \(i)") } }
            await clock.advance(by: .seconds(1))
            #expect(log.all.sorted() == ["loop 2", "other site", "throttled 0"])
        }
    }

    @Test @MainActor func everyFormTakesAForwardedStringFileID() async {
        let log = Log<String>()
        let clock = ManualClock()
        await TempoRegistry(clock: clock).withCurrent {
            Wrappers.debounceMain { log.append("debounce main") }
            Wrappers.debounceSync { log.append("debounce sync") }
            Wrappers.debounceAsync { log.append("debounce async") }
            Wrappers.throttleMain { log.append("throttle main") }
            Wrappers.throttleSync { log.append("throttle sync") }
            Wrappers.throttleAsync { log.append("throttle async") }
            await clock.advance(by: .seconds(1))
            #expect(
                log.all.sorted() == [
                    "debounce async", "debounce main", "debounce sync", "throttle async",
                    "throttle main", "throttle sync",
                ])
        }
    }

    @Test func aStringFileIDNamesTheSameSiteAsTheStaticOne() async {
        let log = Log<Int>()
        await onManualClock { clock, _ in
            let file = "Module/File.swift"
            debounce(by: .taskContext, fileID: file, line: 1, column: 1) { log.append(1) }
            debounce(
                by: .taskContext, fileID: "Module/File.swift" as StaticString, line: 1, column: 1
            ) {
                log.append(2)
            }
            debounce(by: .taskContext, fileID: file, line: 1, column: 2) { log.append(3) }
            await clock.advance(by: .seconds(1))
            #expect(log.all.sorted() == [2, 3])
        }
    }

    // MARK: On the real clock

    // Windows are seconds long, so that the loop's calls normally all fall in one window: then
    // nothing but a leading run may have happened right after the loop (it never waited for a
    // stored call to run), and the burst runs as on the manual clock. A machine so loaded that
    // the loop itself took longer than the window legitimately splits the burst; the checks
    // that hold whatever the load (the last call runs, last; nothing runs twice or out of
    // order) are made every time, the exact outcome only when the loop fit in the window.

    @Test func realClockAwaitedDebounceLoopRunsOnlyTheLastCall() async {
        let log = Log<Int>()
        let registry = TempoRegistry(clock: ContinuousClock())
        let window = Duration.seconds(2)
        let start = ContinuousClock.now
        var loop = Duration.zero
        await registry.withCurrent {
            for value in 1...5 {
                let task: Task<Void, Never> = debounce(
                    window, identifier: "d", by: .taskContext
                ) { log.append(value) }
                await task.value
                loop = ContinuousClock.now - start
            }
        }
        let fitInWindow = loop < window
        if fitInWindow { #expect(log.all == []) }
        #expect(await eventually(within: .seconds(15)) { log.all.last == 5 })
        #expect(await eventually { registry.liveKeyCount == 0 })
        let runs = log.all
        #expect(runs == runs.sorted() && Set(runs).count == runs.count)
        if fitInWindow { #expect(runs == [5]) }
    }

    @Test func realClockAwaitedEnsureLastLoopRunsTheFirstCallAndTheLast() async {
        let log = Log<Int>()
        let registry = TempoRegistry(clock: ContinuousClock())
        let window = Duration.seconds(5)
        let start = ContinuousClock.now
        var loop = Duration.zero
        await registry.withCurrent {
            for value in 1...5 {
                let task: Task<Void, Never> = throttle(
                    window, identifier: "t", by: .taskContext, option: .ensureLast
                ) { log.append(value) }
                await task.value
                loop = ContinuousClock.now - start
            }
        }
        let fitInWindow = loop < window
        // The first call ran at once, in the task it returned.
        #expect(log.all.first == 1)
        if fitInWindow { #expect(log.all == [1]) }
        #expect(await eventually(within: .seconds(15)) { log.all.last == 5 })
        let runs = log.all
        #expect(runs == runs.sorted() && Set(runs).count == runs.count)
        if fitInWindow { #expect(runs == [1, 5]) }
        registry.cancelAll()
    }
}

/// A wrapper as Throttler users write them: it captures its caller's call site, the file ID as
/// a `String`, and forwards it.
private func debounceHere(
    fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
    _ work: @escaping @Sendable () -> Void
) {
    debounce(.seconds(1), by: .taskContext, fileID: fileID, line: line, column: column) { work() }
}

private func throttleHere(
    fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
    _ work: @escaping @Sendable () async throws -> Void
) {
    throttle(.seconds(1), by: .taskContext, fileID: fileID, line: line, column: column) {
        try await work()
    }
}

/// One wrapper per form, each forwarding its caller's site with a `String` file ID.
@MainActor enum Wrappers {
    static func debounceMain(
        fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
        _ work: @escaping @MainActor @Sendable () -> Void
    ) {
        debounce(fileID: fileID, line: line, column: column, operation: work)
    }

    static func debounceSync(
        fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
        _ work: @escaping @Sendable () -> Void
    ) {
        debounce(by: .taskContext, fileID: fileID, line: line, column: column, operation: work)
    }

    @discardableResult
    static func debounceAsync(
        fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
        _ work: @escaping @Sendable () async throws -> Void
    ) -> Task<Void, Never> {
        debounce(fileID: fileID, line: line, column: column, operation: work)
    }

    static func throttleMain(
        fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
        _ work: @escaping @MainActor @Sendable () -> Void
    ) {
        throttle(fileID: fileID, line: line, column: column, operation: work)
    }

    static func throttleSync(
        fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
        _ work: @escaping @Sendable () -> Void
    ) {
        throttle(by: .taskContext, fileID: fileID, line: line, column: column, operation: work)
    }

    @discardableResult
    static func throttleAsync(
        fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
        _ work: @escaping @Sendable () async throws -> Void
    ) -> Task<Void, Never> {
        throttle(fileID: fileID, line: line, column: column, operation: work)
    }
}
