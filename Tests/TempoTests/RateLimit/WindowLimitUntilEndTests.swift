import Synchronization
import TempoTesting
import Testing

@testable import Tempo

// A window limit that wraps an operation holds the operation's slot from its admission until
// the operation ends (returns, throws, or is cancelled while it runs), and counts it at that
// end: a server counts the request when it arrives, which can be any instant before the
// operation returns. A call cancelled before its operation starts gives its slot back. The
// operations here sleep on the manual clock, so their ends are exact.

@Suite struct WindowLimitUntilEndTests {
    /// 2 in any second, no margin.
    let limit = RateLimit.window(2, per: .seconds(1), margin: .zero)

    /// Runs `rateLimit(limit)` around an operation that sleeps `duration` on `clock`, then
    /// throws `Failure` when `fails`, in a task of the clock's; returns once it is admitted
    /// and asleep (or waits in the queue).
    /// `onStart` and `onEnd` run as the operation starts and as its sleep ends.
    static func run(
        _ limit: RateLimit, for duration: Duration, failing fails: Bool = false,
        clock: ManualClock, registry: TempoRegistry,
        onStart: @escaping @Sendable () -> Void = {}, onEnd: @escaping @Sendable () -> Void = {}
    ) async -> ManualClock.Started<Void> {
        await clock.start {
            try await registry.withCurrent {
                try await rateLimit(limit, identifier: "k") {
                    onStart()
                    try await clock.sleep(for: duration)
                    onEnd()
                    if fails { throw Failure() }
                }
            }
        }
    }

    struct Failure: Error {}

    /// Two operations of 500 ms admitted at 0 end at 0.5 s, and count until 1.5 s: a third
    /// call is refused at 1 s (counting their starts, it was admitted), and admitted at 1.5 s.
    @Test(arguments: [false, true])
    func anOperationCountsFromItsEnd(listening: Bool) async throws {
        try await onManualClock { clock, registry in
            let limit = listening ? limit.holdingOnRetryAfter() : limit
            let a = await Self.run(limit, for: .milliseconds(500), clock: clock, registry: registry)
            let b = await Self.run(limit, for: .milliseconds(500), clock: clock, registry: registry)
            // Running, they hold their slots: in every window, however long they run.
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(1)))
            await clock.advance(by: .milliseconds(500))
            try await a.value()
            try await b.value()
            #expect(take(limit, key: "k") == .limited(retryAfter: .seconds(1)))
            await clock.advance(by: .milliseconds(500))
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(500)))
            await clock.advance(by: .milliseconds(499))
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(1)))
            await clock.advance(by: .milliseconds(1))
            #expect(take(limit, weight: 2, key: "k") == nil)
            #expect(registry.liveKeyCount == 1)
        }
    }

    /// While an operation runs, its key stays, with no instant known for its window to empty;
    /// once it ends, the key leaves a window later.
    @Test func aRunningOperationKeepsItsKeyUntilAWindowAfterItEnds() async throws {
        try await onManualClock { clock, registry in
            let a = await Self.run(limit, for: .seconds(5), clock: clock, registry: registry)
            await clock.advance(by: .seconds(3))
            #expect(registry.liveKeyCount == 1)
            #expect(rateRow(registry, "k")?.tokens == 1)
            await clock.advance(by: .seconds(2))
            try await a.value()
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .milliseconds(999))
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .milliseconds(1))
            #expect(registry.liveKeyCount == 0)
        }
    }

    /// A reset empties the window of the calls it counted, but an operation still running
    /// keeps its slot until it ends, and is counted then: with 1 a second, `a` runs from 0 to
    /// 10 s across a reset at 1 s; `b`, made at 2 s, waits for `a`'s slot (its end, 10 s, plus
    /// the window: 11 s) and runs until 29 s, and `c`, made at 2 s, waits for `b`'s (30 s).
    /// Before this held, the reset freed `a`'s slot, `b` ran from 2 s, and `a`'s end gave back
    /// `b`'s slot: `c` started at 11 s while `b` still ran, two operations at once under a
    /// limit of one.
    @Test func anOperationRunningAcrossAResetKeepsItsSlotAndCountsAtItsEnd() async throws {
        try await onManualClock { clock, registry in
            let limit = RateLimit.window(1, per: .seconds(1), margin: .zero)
            let starts = Log<Duration>()
            func call(running duration: Duration) async -> ManualClock.Started<Void> {
                await Self.run(
                    limit, for: duration, clock: clock, registry: registry,
                    onStart: { starts.append(clock.now.offset) })
            }
            let a = await call(running: .seconds(10))
            await clock.advance(by: .seconds(1))
            registry.resetRateLimit(identifier: "k")
            #expect(registry.liveKeyCount == 1)
            await clock.advance(by: .seconds(1))
            let b = await call(running: .seconds(18))
            let c = await call(running: .zero)
            await clock.advance(by: .seconds(8))
            #expect(starts.all == [.zero])
            await clock.advance(by: .seconds(1))
            #expect(starts.all == [.zero, .seconds(11)])
            await clock.advance(by: .seconds(18))
            #expect(starts.all == [.zero, .seconds(11)])
            await clock.advance(by: .seconds(1))
            #expect(starts.all == [.zero, .seconds(11), .seconds(30)])
            for call in [a, b, c] { try await call.value() }
        }
    }

    /// Waiters a reset admits hold their slots until their operations end, whatever the
    /// operations that ran before the reset do: with 2 a second, `a` and `b` run from 0 to
    /// 10 s; `c` and `d` wait, and the reset at 1 s finds no room for them (`a` and `b` still
    /// hold theirs); `e` and `f` wait behind them.
    @Test func aResetNeverLetsMoreThanTheLimitRunAtOnce() async throws {
        try await onManualClock { clock, registry in
            let limit = RateLimit.window(2, per: .seconds(1), margin: .zero)
            // +1 as an operation starts, -1 as it ends, in order.
            let steps = Log<Int>()
            func call(running duration: Duration) async -> ManualClock.Started<Void> {
                await Self.run(
                    limit, for: duration, clock: clock, registry: registry,
                    onStart: { steps.append(1) }, onEnd: { steps.append(-1) })
            }
            var calls = [await call(running: .seconds(10)), await call(running: .seconds(10))]
            calls.append(await call(running: .seconds(30)))
            calls.append(await call(running: .seconds(30)))
            await clock.advance(by: .seconds(1))
            registry.resetRateLimit(identifier: "k")
            calls.append(await call(running: .seconds(5)))
            calls.append(await call(running: .seconds(5)))
            await clock.runUntilIdle(limit: .seconds(120))
            for call in calls { try await call.value() }
            let running = steps.all.reduce(into: [0]) { $0.append($0.last! + $1) }
            #expect(running.max() == 2)
            #expect(running.last == 0)
            #expect(steps.all.count == 12)
        }
    }

    /// An operation that throws counts from the instant it threw.
    @Test func aThrowingOperationCountsFromWhenItThrew() async throws {
        // Its only `try`s are inside `#expect`: the closure's effects are inferred before the
        // macros expand, so it says `async throws`.
        try await onManualClock { clock, registry async throws in
            let a = await Self.run(
                limit, for: .milliseconds(500), failing: true, clock: clock, registry: registry)
            let b = await Self.run(
                limit, for: .milliseconds(300), failing: true, clock: clock, registry: registry)
            await clock.advance(by: .milliseconds(500))
            await #expect(throws: Failure.self) { try await a.value() }
            await #expect(throws: Failure.self) { try await b.value() }
            // At 1.2 s: counting their starts (0), both had left the window.
            await clock.advance(by: .milliseconds(700))
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(100)))
            await clock.advance(by: .milliseconds(100))
            // At 1.3 s: b's end (0.3 s) has left the window, a's (0.5 s) leaves at 1.5 s.
            #expect(take(limit, key: "k") == nil)
            #expect(take(limit, key: "k") == .limited(retryAfter: .milliseconds(200)))
        }
    }

    /// A waiter admitted by the key's timer holds its slot from that admission until its
    /// operation ends, and counts from the end.
    @Test func aWaiterCountsFromTheEndOfItsOperation() async throws {
        try await onManualClock { clock, registry in
            let one = RateLimit.window(1, per: .seconds(1), margin: .zero)
            #expect(take(one, key: "k") == nil)
            let w = await Self.run(one, for: .milliseconds(500), clock: clock, registry: registry)
            #expect(rateWaiters(registry, "k") == 1)
            await clock.advance(by: .seconds(1))  // admitted at 1 s, runs until 1.5 s
            #expect(rateWaiters(registry, "k") == 0)
            await clock.advance(by: .milliseconds(500))
            try await w.value()
            await clock.advance(by: .milliseconds(500))
            // At 2 s: counting its start (1 s), the next call was free.
            #expect(take(one, key: "k") == .limited(retryAfter: .milliseconds(500)))
            await clock.advance(by: .milliseconds(500))
            #expect(take(one, key: "k") == nil)
        }
    }

    /// An operation whose task is cancelled while it runs has made its request, maybe: it
    /// counts from the instant it ended (here, when its sleep threw `CancellationError`).
    @Test func anOperationCancelledWhileItRunsCountsFromItsEnd() async {
        await onManualClock { clock, registry in
            let one = RateLimit.window(1, per: .seconds(1), margin: .zero)
            let a = await Self.run(one, for: .seconds(10), clock: clock, registry: registry)
            await clock.advance(by: .milliseconds(200))
            a.cancel()
            await #expect(throws: CancellationError.self) { try await a.value() }
            await clock.advance(by: .milliseconds(800))
            #expect(take(one, key: "k") == .limited(retryAfter: .milliseconds(200)))
            await clock.advance(by: .milliseconds(200))
            #expect(take(one, key: "k") == nil)
        }
    }

    /// A waiter cancelled while it waits takes nothing, and the call admitted behind it holds
    /// its slot until its own operation ends.
    @Test func aWaiterCancelledWhileItWaitsTakesNothing() async throws {
        try await onManualClock { clock, registry in
            let one = RateLimit.window(1, per: .seconds(1), margin: .zero)
            #expect(take(one, key: "k") == nil)
            let gone = await Self.run(one, for: .seconds(1), clock: clock, registry: registry)
            let next = await Self.run(
                one, for: .milliseconds(100), clock: clock, registry: registry)
            #expect(rateWaiters(registry, "k") == 2)
            gone.cancel()
            await #expect(throws: CancellationError.self) { try await gone.value() }
            #expect(rateWaiters(registry, "k") == 1)
            await clock.advance(by: .seconds(1))  // next admitted at 1 s, ends at 1.1 s
            await clock.advance(by: .milliseconds(100))
            try await next.value()
            await clock.advance(by: .milliseconds(999))
            #expect(take(one, key: "k") == .limited(retryAfter: .milliseconds(1)))
            await clock.advance(by: .milliseconds(1))
            #expect(take(one, key: "k") == nil)
        }
    }

    /// `takeRatePermit` and `rateLimit` without an operation count at their admission.
    @Test func aPermitWithoutAnOperationCountsAtItsAdmission() async throws {
        try await onManualClock { clock, registry in
            let one = RateLimit.window(1, per: .seconds(1), margin: .zero)
            try await rateLimit(one, identifier: "k")
            await clock.advance(by: .milliseconds(700))
            #expect(take(one, key: "k") == .limited(retryAfter: .milliseconds(300)))
            await clock.advance(by: .milliseconds(300))
            #expect(take(one, key: "k") == nil)
            #expect(take(one, key: "k") == .limited(retryAfter: .seconds(1)))
        }
    }

    /// `rateLimit` without an operation that waits counts when its task resumes: its start is
    /// recorded then, and leaves the window one interval later.
    @Test func aWaitingPermitWithoutAnOperationCountsWhenItResumes() async throws {
        try await onManualClock { clock, registry in
            let one = RateLimit.window(1, per: .seconds(1), margin: .zero)
            #expect(take(one, key: "k") == nil)
            let waiter = Task {
                try await registry.withCurrent { try await rateLimit(one, identifier: "k") }
            }
            #expect(await eventually { rateWaiters(registry, "k") == 1 })
            await clock.advance(by: .seconds(1))
            try await waiter.value
            #expect(take(one, key: "k") == .limited(retryAfter: .seconds(1)))
            await clock.advance(by: .seconds(1))
            #expect(take(one, key: "k") == nil)
        }
    }

    /// The promise, against a server that counts arrivals: operations of random durations,
    /// started at random instants, each "arriving" at a random instant between its start and
    /// its end (a request late on its way, or a slow connection). However late they arrive, no
    /// window of the interval (no margin) ever holds more than `permits` arrivals. (Counted at
    /// their starts, the limit let late arrivals pile up in one window.)
    @Test(arguments: 0..<24 as Range<UInt64>)
    func arrivalsAnywhereBeforeTheEndNeverExceedTheLimit(seed: UInt64) async throws {
        try await onManualClock { clock, registry in
            var random = SplitMix64(seed: 0x0E4D_0000 &+ seed)
            let permits = Int.random(in: 1...3, using: &random)
            let limit = RateLimit.window(permits, per: .seconds(1), margin: .zero)
            let arrivals = Log<Duration>()
            var calls: [ManualClock.Started<Void>] = []
            for _ in 0..<12 {
                let duration = Duration.milliseconds(50 * Int.random(in: 0...16, using: &random))
                let arrival = duration * Double.random(in: 0...1, using: &random)
                calls.append(
                    await clock.start {
                        try await registry.withCurrent {
                            try await rateLimit(limit, identifier: "k") {
                                try await clock.sleep(for: arrival)
                                arrivals.append(clock.now.offset)
                                try await clock.sleep(for: duration - arrival)
                            }
                        }
                    })
                await clock.advance(
                    by: .milliseconds(50 * Int.random(in: 0...6, using: &random)))
            }
            await clock.advance(by: .seconds(60))
            for call in calls { try await call.value() }
            let all = arrivals.all.sorted()
            #expect(all.count == 12)
            for (index, first) in all.enumerated() {
                let inWindow = all[index...].prefix { $0 < first + .seconds(1) }.count
                #expect(inWindow <= permits, "seed \(seed): \(inWindow) arrivals from \(first)")
            }
        }
    }

    /// The state machine: ends recorded with clock reads out of order keep the log in order
    /// (the later read is kept for both), and a call admitted `untilEnd` is in flight until
    /// its end, in every window.
    @Test func endsReadOutOfOrderKeepTheLogInOrder() {
        var state = WindowLimitState<Int>(permits: 2, span: .seconds(1))
        let ask = WindowLimitState<Int>.Ask(weight: 1, permits: 2, span: .seconds(1))
        #expect(state.call(at: .zero, ask: ask, untilEnd: true) == .admitted)
        #expect(state.call(at: .zero, ask: ask, untilEnd: true) == .admitted)
        #expect(state.call(at: .seconds(4), ask: ask) == .limited(retryAfter: .seconds(1)))
        #expect(state.log.inFlight == 2)
        state.ended(ask, at: .seconds(5))
        state.ended(ask, at: .seconds(3))  // read before the other, recorded after
        #expect(state.log.inFlight == 0)
        #expect(state.log.held.map(\.at) == [.seconds(5)])
        #expect(state.log.held.map(\.count) == [2])
        #expect(state.call(at: .milliseconds(5_999), ask: ask) != .admitted)
        #expect(state.call(at: .seconds(6), ask: ask) == .admitted)
    }
}
