import TempoTesting
import Testing

@testable import Tempo

// Every path on which a debounce or throttle call runs or is dropped reports it, at the
// decision's instant: the paths the main one does not take (a duration of zero or less, a
// catch-up run, a cancel that finds its call due, a deinitialised `Debouncer` or `Throttler`,
// `cancelAll`, `flushAll`, a `Task`-returning call whose task is cancelled). Late timers are
// driven by `ScriptedClock`, whose timers fire only when the test says so; the rest run on the
// manual clock.

extension EventLog {
    /// The lines of ``all()`` without their keys (a `Debouncer`'s key is its own).
    func keylessLines() async -> [String] {
        await all().map { "\($0.at) \($0.helper): \($0.decision)" }
    }
}

@Suite struct GroupEventPathTests {
    @Test(arguments: [Duration.zero, .seconds(-1)])
    func aDebounceOfNoDurationReportsItsRunInEveryMode(_ duration: Duration) async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let ran = Log<String>()
            await clock.advance(by: .seconds(2))
            for option in [DebounceOptions.default, .runFirst, .leading] {
                debounce(duration, identifier: "d", by: .taskContext, option: option) {
                    ran.append("\(option)")
                }
            }
            let saver = Debouncer(duration, by: .taskContext, option: .runFirst)
            saver { ran.append("debouncer") }
            await saver(onError: nil) { ran.append("debouncer task") }.value
            let task: Task<Void, Never> = debounce(
                duration, identifier: "t", by: .taskContext, onError: nil
            ) { ran.append("task") }
            await task.value
            let value = try await debounceResult(duration, identifier: "r", by: .taskContext) {
                ran.append("result")
                return 1
            }
            #expect(value == 1)
            #expect(ran.count == 7)
            #expect(
                await events.keylessLines()
                    == Array(repeating: "2.0 seconds debounce: ran", count: 7))
        }
    }

    @Test(arguments: [Duration.zero, .milliseconds(-5)])
    func aThrottleOfNoDurationReportsItsRunInEveryMode(_ duration: Duration) async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let ran = Log<String>()
            await clock.advance(by: .seconds(3))
            for option in [ThrottleOptions.default, .ensureLast, .trailing] {
                throttle(duration, identifier: "t", by: .taskContext, option: option) {
                    ran.append("\(option)")
                }
            }
            let throttler = Throttler(duration, by: .taskContext, option: .trailing)
            throttler { ran.append("throttler") }
            await throttler(onError: nil) { ran.append("throttler task") }.value
            let value = try await throttleResult(duration, identifier: "r", by: .taskContext) {
                ran.append("result")
                return 1
            }
            #expect(value == 1)
            #expect(ran.count == 6)
            #expect(
                await events.keylessLines()
                    == Array(repeating: "3.0 seconds throttle: ran", count: 6))
        }
    }

    @Test func aDebounceCatchUpRunReportsItsRunAtTheCallThatRunsIt() async {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let events = EventLog(registry)
        let ran = Log<String>()
        func call(_ label: String) {
            registry.withCurrent {
                debounce(.seconds(1), identifier: "d", by: .taskContext) { ran.append(label) }
            }
        }
        call("a")
        clock.set(.seconds(3))  // "a" was due at 1 s; its timer is late
        call("b")  // runs "a" first, as a catch-up
        #expect(ran.all == ["a"])
        #expect(await events.lines() == ["3.0 seconds debounce d: ran"])
    }

    @Test func aThrottleCatchUpRunReportsItsRunThenTheNewCall() async {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let events = EventLog(registry)
        let ran = Log<String>()
        func call(_ label: String) {
            registry.withCurrent {
                throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {
                    ran.append(label)
                }
            }
        }
        call("a")  // runs, opens [0, 1 s)
        clock.set(.milliseconds(500))
        call("b")  // the trailing call
        clock.set(.seconds(3))  // the timer is late
        call("c")  // "b" runs as a catch-up, then "c" at once
        #expect(ran.all == ["a", "b", "c"])
        #expect(
            await events.lines() == [
                "0.0 seconds throttle t: ran",
                "3.0 seconds throttle t: ran",
                "3.0 seconds throttle t: ran",
            ])
    }

    @Test func aCancelThatFindsItsCallDueReportsTheRun() async {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let events = EventLog(registry)
        let ran = Log<String>()
        registry.withCurrent {
            debounce(.seconds(1), identifier: "d", by: .taskContext) { ran.append("d") }
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .trailing) {
                ran.append("t")
            }
        }
        clock.set(.milliseconds(1_500))  // both are due; their timers are late
        registry.cancelDebounce(identifier: "d")
        registry.cancelThrottle(identifier: "t")
        #expect(ran.all == ["d", "t"])
        #expect(
            await events.lines() == [
                "1.5 seconds debounce d: ran",
                "1.5 seconds throttle t: ran",
            ])
    }

    @Test func aLateTimerReportsItsRunAtTheInstantItFired() async {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let events = EventLog(registry)
        registry.withCurrent { debounce(.seconds(1), identifier: "d", by: .taskContext) {} }
        clock.set(.seconds(2))
        _ = clock.fire(0)
        #expect(await events.lines() == ["2.0 seconds debounce d: ran"])
    }

    @Test func aTimerRunIsStampedWithTheInstantTheTimerFiredAtNotWhenItIsReported() async {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let events = EventLog(registry)
        registry.withCurrent { debounce(.seconds(1), identifier: "d", by: .taskContext) {} }
        clock.set(.seconds(5))  // the clock has moved on by the time the run is reported
        _ = clock.fire(0, at: .seconds(1))
        #expect(await events.lines() == ["1.0 seconds debounce d: ran"])
    }

    @Test func cancelAllReportsTheCallsItRunsAndDrops() async {
        let clock = ScriptedClock()
        let registry = TempoRegistry(clock: clock)
        let events = EventLog(registry)
        registry.withCurrent {
            debounce(.seconds(1), identifier: "due", by: .taskContext) {}
            clock.set(.milliseconds(500))
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .trailing) {}
        }
        clock.set(.seconds(1))  // "due" is due, its timer late; "t" waits until 1.5 s
        registry.cancelAll()
        #expect(
            await events.lines().sorted() == [
                "1.0 seconds debounce due: ran",
                "1.0 seconds throttle t: dropped",
            ])
    }

    @Test func flushAllReportsEveryRun() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            debounce(.seconds(1), identifier: "d", by: .taskContext) {}
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .trailing) {}
            await clock.advance(by: .milliseconds(250))
            registry.flushAll()
            #expect(
                await events.lines().sorted() == [
                    "0.25 seconds debounce d: ran",
                    "0.25 seconds throttle t: ran",
                ])
        }
    }

    @Test(arguments: [OnDeinit.flush, .cancel])
    func aDebouncerGoingAwayReportsItsPendingCall(_ onDeinit: OnDeinit) async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let ran = Log<String>()
            await clock.advance(by: .seconds(1))
            do {
                let saver = Debouncer(.seconds(1), by: .taskContext, onDeinit: onDeinit)
                saver { ran.append("save") }
                await clock.advance(by: .milliseconds(500))
            }
            await clock.advance(by: .seconds(5))
            let outcome = onDeinit == .flush ? "ran" : "dropped"
            #expect(ran.count == (onDeinit == .flush ? 1 : 0))
            #expect(await events.keylessLines() == ["1.5 seconds debounce: \(outcome)"])
        }
    }

    @Test(arguments: [OnDeinit.flush, .cancel])
    func aThrottlerGoingAwayReportsItsTrailingCall(_ onDeinit: OnDeinit) async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let ran = Log<String>()
            do {
                let throttler = Throttler(
                    .seconds(1), by: .taskContext, option: .ensureLast, onDeinit: onDeinit)
                throttler { ran.append("a") }
                await clock.advance(by: .milliseconds(500))
                throttler { ran.append("b") }
            }
            await clock.advance(by: .seconds(5))
            let outcome = onDeinit == .flush ? "ran" : "dropped"
            #expect(ran.all == (onDeinit == .flush ? ["a", "b"] : ["a"]))
            #expect(
                await events.keylessLines() == [
                    "0.0 seconds throttle: ran", "0.5 seconds throttle: \(outcome)",
                ])
        }
    }

    @Test func aCallWhoseTaskIsCancelledReportsItsDrop() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let ran = Log<String>()
            let saver = Debouncer(.seconds(1), by: .taskContext)
            let task: Task<Void, Never> = saver(onError: nil) { ran.append("d") }
            await clock.advance(by: .milliseconds(300))
            task.cancel()
            await task.value
            await clock.advance(by: .seconds(2))
            #expect(ran.all == [])
            #expect(await events.keylessLines() == ["0.3 seconds debounce: dropped"])
        }
    }

    @Test func aThrottleCallWhoseTaskIsCancelledReportsItsDrop() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let ran = Log<String>()
            let throttler = Throttler(.seconds(1), by: .taskContext, option: .trailing)
            let task: Task<Void, Never> = throttler(onError: nil) { ran.append("t") }
            await clock.advance(by: .milliseconds(300))
            task.cancel()
            await task.value
            await clock.advance(by: .seconds(2))
            #expect(ran.all == [])
            #expect(await events.keylessLines() == ["0.3 seconds throttle: dropped"])
        }
    }

    @Test func aDelayReportsNothingAndItsTaskRunsItsOperation() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry)
            let ran = Log<String>()
            await delay(.zero, by: .taskContext, onError: nil) { ran.append("now") }.value
            #expect(ran.all == ["now"])  // the task returned is the one that ran it
            let later: Task<Void, Never> = delay(.seconds(1), by: .taskContext, onError: nil) {
                ran.append("later")
            }
            let cancelled: Task<Void, Never> = delay(.seconds(1), by: .taskContext, onError: nil) {
                ran.append("cancelled")
            }
            cancelled.cancel()
            await cancelled.value
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .seconds(1))
            await later.value
            #expect(ran.all == ["now", "later"])
            #expect(await events.lines() == [])
        }
    }
}
