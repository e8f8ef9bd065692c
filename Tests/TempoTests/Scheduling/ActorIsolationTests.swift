import TempoTesting
import Testing

@testable import Tempo

/// Whether the code that evaluated `isolation` (its `#isolation`) runs on `actorType`'s actor.
/// Checked statically first, so a wrong actor records a failure rather than trapping, then by
/// the runtime's `assertIsolated()`.
@Sendable private func runs(on actorType: ActorType, _ isolation: (any Actor)?) -> Bool {
    switch actorType {
    case .mainActor:
        guard isolation === MainActor.shared else { return false }
        MainActor.assertIsolated()
    case .ownedActor:
        guard isolation === TempoActor.shared else { return false }
        TempoActor.shared.assertIsolated()
    case .taskContext:
        break
    }
    return true
}

/// Blocks the calling thread, and so the actor it runs on, for `duration`: a window in which
/// work sent to that actor cannot start. It waits for nothing else, so a busy pool cannot
/// stretch it.
private func hold(for duration: Duration) {
    let clock = ContinuousClock()
    let end = clock.now + duration
    while clock.now < end {}
}

@Suite struct ActorIsolationTests {
    // MARK: The operation runs on its actor (issue 9, item 1)

    @Test(arguments: [ActorType.mainActor, .ownedActor])
    func everyAsyncOverloadRunsItsOperationOnItsActor(_ actor: ActorType) async {
        let checks = Log<String>()
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.milliseconds(10), by: actor, registry: registry)
            let throttler = Throttler(.milliseconds(10), by: actor, registry: registry)
            let tasks = [
                debounce(.milliseconds(10), identifier: "iso", by: actor) {
                    () async in
                    if runs(on: actor, #isolation) { checks.append("debounce") }
                },
                debounce(.zero, by: actor) {
                    () async in
                    if runs(on: actor, #isolation) { checks.append("debounce now") }
                },
                throttle(.milliseconds(10), identifier: "iso", by: actor) {
                    () async in
                    if runs(on: actor, #isolation) { checks.append("throttle") }
                },
                delay(.milliseconds(10), by: actor) {
                    () async in
                    if runs(on: actor, #isolation) { checks.append("delay") }
                },
                execute(with: .milliseconds(10), on: actor) {
                    () async in
                    if runs(on: actor, #isolation) { checks.append("execute later") }
                },
                execute(on: actor) {
                    () async in
                    if runs(on: actor, #isolation) { checks.append("execute now") }
                },
                `repeat`(every: .seconds(1), times: 1, startingImmediately: true, by: actor) {
                    () async in
                    if runs(on: actor, #isolation) { checks.append("repeat") }
                },
                debouncer {
                    () async in
                    if runs(on: actor, #isolation) { checks.append("Debouncer") }
                },
                throttler {
                    () async in
                    if runs(on: actor, #isolation) { checks.append("Throttler") }
                },
            ]
            await clock.advance(by: .milliseconds(10))
            for task in tasks { await task.value }
            withExtendedLifetime((debouncer, throttler)) {}
        }
        #expect(
            Set(checks.all) == [
                "debounce", "debounce now", "throttle", "delay", "execute later", "execute now",
                "repeat", "Debouncer", "Throttler",
            ])
        #expect(checks.count == 9)
    }

    @Test func aSuspendedOperationKeepsItsActorAcrossAwait() async {
        let checks = Log<Bool>()
        await onManualClock { clock, _ in
            let main = delay(.milliseconds(5), by: .mainActor) {
                await Task.yield()
                checks.append(runs(on: .mainActor, #isolation))
            }
            let owned = delay(.milliseconds(5), by: .ownedActor) {
                await Task.yield()
                checks.append(runs(on: .ownedActor, #isolation))
            }
            await clock.advance(by: .milliseconds(5))
            await main.value
            await owned.value
        }
        #expect(checks.all == [true, true])
    }

    // MARK: .ownedActor operations never overlap (issue 9, item 1)

    @Test func ownedActorOperationsRunOneAtATimeAcrossTheirAwaits() async {
        let running = Lock((now: 0, most: 0, syncSawOthers: false))
        @Sendable func enter() {
            running.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
        }
        @Sendable func leave() { running.withLock { $0.now -= 1 } }
        for _ in 0..<3 {
            var tasks: [Task<Void, Never>] = []
            for index in 0..<4 {
                tasks.append(
                    execute(on: .ownedActor) {
                        enter()
                        for _ in 0..<50 { await Task.yield() }
                        leave()
                    })
                if index == 0 {
                    // A synchronous operation waits for its turn too.
                    delay(.zero, by: .ownedActor) {
                        running.withLock { if $0.now > 0 { $0.syncSawOthers = true } }
                    }
                }
            }
            for task in tasks { await task.value }
        }
        let result = running.withLock { $0 }
        #expect(result.most == 1)
        #expect(!result.syncSawOthers)
    }

    @Test func anOwnedActorOperationAsleepOnTheManualClockDoesNotHangAdvance() async {
        let log = Log<String>()
        await onManualClock { clock, _ in
            let sleeper = delay(.seconds(1), by: .ownedActor) {
                log.append("sleeper starts")
                try await Task.sleep(for: .seconds(1), clock: clock)
                log.append("sleeper ends")
            }
            let next = delay(.milliseconds(1_500), by: .ownedActor) { () async in
                log.append("next")
            }
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["sleeper starts"])
            // At 1.5 s the next operation waits for the turn the sleeper holds while asleep on
            // the clock: it counts as asleep too, so the advance goes on to 2 s.
            let advanced = Lock(false)
            Task {
                await clock.advance(by: .seconds(1))
                advanced.withLock { $0 = true }
            }
            #expect(await eventually { advanced.withLock { $0 } })
            guard advanced.withLock({ $0 }) else { return }  // stuck: don't hang the run
            #expect(log.all == ["sleeper starts", "sleeper ends", "next"])
            await sleeper.value
            await next.value
        }
    }

    // MARK: A cancel stops an operation that was launched but has not started (item 3)

    @Test @MainActor func cancellingALaunchedThrottleTaskOnItsActorStopsIt() async {
        let ran = Log<Int>()
        let registry = TempoRegistry(clock: ContinuousClock())
        for round in 0..<10 {
            // The leading call is launched at once; its operation needs the main actor, which
            // this test holds until it has cancelled the task.
            let task = registry.withCurrent {
                throttle(.seconds(1), identifier: "launched", by: .mainActor) { () async in
                    ran.append(round)
                }
            }
            hold(for: .milliseconds(10))
            task.cancel()
            await task.value
            registry.cancelThrottle(identifier: "launched")
        }
        #expect(ran.all == [])
    }

    @Test @MainActor func cancellingAFiredDebounceTaskOnItsActorStopsIt() async {
        let ran = Log<Int>()
        for round in 0..<10 {
            let clock = ScriptedClock()
            let registry = TempoRegistry(clock: clock)
            let task = registry.withCurrent {
                debounce(.milliseconds(10), by: .mainActor) { () async in ran.append(round) }
            }
            // The timer fires here, releasing the call; its operation needs the main actor,
            // which this test holds until it has cancelled the task.
            clock.set(.milliseconds(10))
            #expect(clock.fire(0) == nil)
            hold(for: .milliseconds(10))
            task.cancel()
            await task.value
            #expect(registry.liveKeyCount == 0)
        }
        #expect(ran.all == [])
    }

    @Test @MainActor func cancellingAnImmediateTaskOnItsActorStopsIt() async {
        let ran = Log<Int>()
        for round in 0..<10 {
            let task = execute(on: .mainActor) { () async in ran.append(round) }
            hold(for: .milliseconds(10))
            task.cancel()
            await task.value
        }
        #expect(ran.all == [])
    }

    // MARK: The timer runner's flag stays on the runner (issue 9, item 6)

    @Test(arguments: ["mainActor", "ownedActor", "onMainActor"])
    func aLeadingCallInsideAnOperationATimerReleasedRunsInline(_ variant: String) async {
        let inline = Log<Bool>()
        await onManualClock { clock, registry in
            let inner = Debouncer(
                .seconds(60), by: .taskContext, option: .runFirst, registry: registry)
            let outer = Debouncer(
                .milliseconds(1), by: variant == "ownedActor" ? .ownedActor : .mainActor,
                registry: registry)
            @Sendable func leadingCall() {
                let ran = Lock(false)
                inner { ran.withLock { $0 = true } }
                inline.append(ran.withLock { $0 })
                inner.cancel()
            }
            if variant == "onMainActor" {
                outer.onMainActor { leadingCall() }
            } else {
                outer { leadingCall() }
            }
            // A real clock's timer runner fires timers with this flag set; fire this one the same
            // way. The advance returns once the operation it released has run.
            await TimerDriver.$isRunner.withValue(true) {
                await clock.advance(by: .milliseconds(1))
            }
            withExtendedLifetime((inner, outer)) {}
        }
        #expect(inline.all == [true])
    }

    // MARK: Named closures still compile (source compatibility)

    @Test func namedAsyncClosuresAreAcceptedAndRun() async {
        let ran = Log<String>()
        let work: @Sendable () async throws -> Void = { ran.append("throws") }
        let plain: @Sendable () async -> Void = { ran.append("plain") }
        let onMain: @MainActor @Sendable () async -> Void = { ran.append("main") }
        await onManualClock { clock, registry in
            let tasks = [
                debounce(.milliseconds(1), by: .taskContext, operation: work),
                throttle(.milliseconds(1), by: .ownedActor, operation: work),
                delay(.milliseconds(1), by: .mainActor, operation: work),
                execute(on: .ownedActor, operation: plain),
                execute(on: .mainActor, operation: onMain),
                `repeat`(times: 1, startingImmediately: true, by: .taskContext, operation: work),
                Debouncer(.zero, registry: registry)(work),
            ]
            await clock.advance(by: .milliseconds(1))
            for task in tasks { await task.value }
        }
        #expect(ran.count == 7)
    }
}
