import Foundation
import Synchronization
import Tempo
import TempoTesting
import Testing

/// `repeat` at its edges: stopping a loop by name while an iteration runs, stopping it while an
/// iteration is about to start, loops faster than their own iterations, and what a stopped loop
/// leaves in the registry.
@Suite struct RepeatStopTests {
    @Test func cancelRepeatLetsTheRunningIterationFinish() async {
        await onManualClock { clock, registry in
            let events = Log<String>()
            let errors = Log<String>()
            let task = `repeat`(
                every: .seconds(1), identifier: "sync", by: .taskContext,
                onError: { errors.append("\($0)") }
            ) {
                events.append("start")
                try await clock.sleep(for: .milliseconds(500))
                events.append("end")
            }
            await clock.advance(by: .seconds(1))
            #expect(events.all == ["start"])
            #expect(cancelRepeat(identifier: "sync"))
            await clock.advance(by: .seconds(5))
            await task.value
            #expect(events.all == ["start", "end"])
            #expect(errors.all == [])
            #expect(!task.isCancelled)
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func replacingANamedRepeatLetsTheRunningIterationFinish() async {
        await onManualClock { clock, registry in
            let events = Log<String>()
            let old = `repeat`(every: .seconds(1), identifier: "sync", by: .taskContext) {
                events.append("old start")
                try await clock.sleep(for: .milliseconds(500))
                events.append("old end")
            }
            await clock.advance(by: .seconds(1))
            let new = `repeat`(every: .seconds(1), identifier: "sync", by: .taskContext) {
                events.append("new")
            }
            await clock.advance(by: .seconds(1))
            // The replaced loop ends after its iteration (it would otherwise run on, and this
            // wait would hang).
            #expect(await finishes { await old.value })
            #expect(events.all == ["old start", "old end", "new"])
            new.cancel()
            await new.value
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aLoopThatStopsItselfByNameFinishesTheIteration() async {
        await onManualClock { clock, _ in
            let events = Log<String>()
            let task = `repeat`(every: .seconds(1), identifier: "once", by: .taskContext) {
                events.append("start")
                cancelRepeat(identifier: "once")
                try await clock.sleep(for: .milliseconds(500))
                events.append("end")
            }
            await clock.advance(by: .seconds(5))
            await task.value
            #expect(events.all == ["start", "end"])
        }
    }

    @Test func cancellingTheReturnedTaskCancelsTheRunningIteration() async {
        await onManualClock { clock, registry in
            let events = Log<String>()
            let task = `repeat`(every: .seconds(1), identifier: "sync", by: .taskContext) {
                events.append("start")
                do {
                    try await clock.sleep(for: .milliseconds(500))
                    events.append("end")
                } catch {
                    events.append("cancelled")
                    throw error
                }
            }
            await clock.advance(by: .seconds(1))
            task.cancel()
            await task.value
            await clock.advance(by: .seconds(5))
            #expect(events.all == ["start", "cancelled"])
            #expect(registry.liveKeyCount == 0)
        }
    }
}

/// Holds once operations run on their actor (`ActorType.run` keeping the hop to it): only then
/// is an iteration's claim, made inside the closure given to `ActorType.run`, ordered with code
/// on that actor. Serialized: each round holds the main actor or `TempoActor` while it
/// waits for the tick.
@Suite(.serialized) struct RepeatActorClaimTests {
    /// `cancelRepeat` is called on the loop's own actor while an iteration waits for that
    /// actor: the actor is held while the tick comes (the snapshot shows no next tick), then the
    /// loop is stopped from it. The iteration claims its run only once it is on the actor,
    /// after the cancel, so it never starts.
    @Test(arguments: [ActorType.mainActor, .ownedActor])
    func cancelRepeatOnTheLoopsActorStopsAnIterationWaitingForIt(_ actorType: ActorType) async {
        var lateRounds = 0
        var unseenTicks = 0
        for _ in 0..<100 {
            let clock = ManualClock()
            let registry = TempoRegistry(clock: clock)
            let cancelled = Flag()
            let late = Flag()
            // The operations are isolated to the actor, as their first line would be if they
            // touched its state.
            let task = registry.withCurrent {
                actorType == .mainActor
                    ? `repeat`(every: .seconds(1), identifier: "poll", by: .mainActor) {
                        @MainActor in if cancelled.isSet { late.set() }
                    }
                    : `repeat`(every: .seconds(1), identifier: "poll", by: .ownedActor) {
                        @TempoActor in if cancelled.isSet { late.set() }
                    }
            }
            let holdTickAndStop: @Sendable () -> (Task<Void, Never>, Bool) = {
                let advance = Task.detached { await clock.advance(by: .seconds(1)) }
                let due = TempoSnapshot.State.repeating(runs: 0, nextRunAt: nil)
                let end = ContinuousClock.now + .seconds(2)
                var seen = false
                while !seen, ContinuousClock.now < end {
                    seen = registry.snapshot().entries(.repeat).first?.state == due
                }
                registry.cancelRepeat(identifier: "poll")
                cancelled.set()
                return (advance, seen)
            }
            let (advance, seen) =
                actorType == .mainActor
                ? await MainActor.run(body: holdTickAndStop) : await onTempoActor(holdTickAndStop)
            await advance.value
            await task.value
            if !seen { unseenTicks += 1 }
            if late.isSet { lateRounds += 1 }
        }
        #expect(lateRounds == 0)
        // A round in which the tick did not come within 2 s (a machine so loaded that the
        // advancing task got no thread) proves nothing either way; most rounds must see it.
        #expect(unseenTicks <= 10)
    }
}

@TempoActor private func onTempoActor<T: Sendable>(_ body: @Sendable () -> T) -> T { body() }

@Suite struct RepeatRegistryTests {
    /// A poller stopped by name, as a new user would write it: the registry is empty once
    /// `cancelRepeat` returns, and stays so through the next advance.
    @Test(arguments: [ActorType.mainActor, .taskContext])
    func aLoopCancelledByNameLeavesTheRegistry(_ actorType: ActorType) async {
        var stuck = 0
        for _ in 0..<200 {
            await onManualClock { clock, registry in
                let polls = Log<Int>()
                `repeat`(every: .seconds(30), identifier: "inbox-poll", by: actorType) {
                    polls.append(1)
                }
                await clock.advance(by: .seconds(30))
                cancelRepeat(identifier: "inbox-poll")
                let atCancel = registry.liveKeyCount
                await clock.advance(by: .seconds(120))
                if atCancel != 0 || registry.liveKeyCount != 0 || clock.sleeperCount != 0
                    || registry.isRepeating(identifier: "inbox-poll") || polls.count != 1
                {
                    stuck += 1
                }
            }
        }
        #expect(stuck == 0)
    }

    /// Stopped while an iteration sleeps on the clock: the iteration finishes during the next
    /// advance, and the registry is empty when that advance returns.
    @Test func aLoopCancelledByNameDuringAnIterationLeavesTheRegistryByTheNextAdvance() async {
        var stuck = 0
        for _ in 0..<100 {
            await onManualClock { clock, registry in
                let ends = Log<Int>()
                `repeat`(every: .seconds(30), identifier: "inbox-poll", by: .taskContext) {
                    try await clock.sleep(for: .seconds(1))
                    ends.append(1)
                }
                await clock.advance(by: .seconds(30))
                cancelRepeat(identifier: "inbox-poll")
                await clock.advance(by: .seconds(120))
                if registry.liveKeyCount != 0 || clock.sleeperCount != 0 || ends.count != 1 {
                    stuck += 1
                }
            }
        }
        #expect(stuck == 0)
    }

    @Test func aCancelledTaskLeavesTheRegistryAtOnceWhileWaiting() async {
        var stuck = 0
        for _ in 0..<100 {
            await onManualClock { clock, registry in
                let task = `repeat`(every: .seconds(30), by: .taskContext) {}
                await clock.advance(by: .seconds(30))
                task.cancel()
                if registry.liveKeyCount != 0 || clock.sleeperCount != 0 { stuck += 1 }
                await task.value
            }
        }
        #expect(stuck == 0)
    }
}

@Suite struct RepeatFairnessTests {
    /// Loops whose interval is shorter than one pass, one per core, on the real clock: each
    /// iteration still gives the executor a turn, so a 10 ms delay fires while they run. The
    /// loops stop themselves once it has fired, or after 3 s.
    @Test func realClockTightLoopsLeaveTheExecutorATurn() async {
        let fired = Flag()
        let gaveUp = Flag()
        let start = ContinuousClock.now
        let loops = (0..<max(2, ProcessInfo.processInfo.activeProcessorCount)).map { _ in
            `repeat`(every: .nanoseconds(1), by: .taskContext) {
                if fired.isSet { throw CancellationError() }
                if ContinuousClock.now - start > .seconds(3) {
                    gaveUp.set()
                    throw CancellationError()
                }
            }
        }
        delay(.milliseconds(10), by: .taskContext) { fired.set() }
        for loop in loops { await loop.value }
        #expect(!gaveUp.isSet)
        for _ in 0..<1_000 where !fired.isSet { try? await Task.sleep(for: .milliseconds(5)) }
        #expect(fired.isSet)
    }
}
