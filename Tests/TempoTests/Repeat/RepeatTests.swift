import Tempo
import TempoTesting
import Testing

@Suite struct RepeatContractTests {
    @Test func runsTimesIterationsEveryIntervalAfterWaitingFirst() async {
        await onManualClock { clock, registry in
            let runs = Log<Duration>()
            let task = `repeat`(every: .seconds(1), times: 3, by: .taskContext) {
                runs.append(registry.now)
            }
            await clock.advance(by: .milliseconds(999))
            #expect(runs.all == [])
            await clock.advance(by: .seconds(5))
            await task.value
            #expect(runs.all == [.seconds(1), .seconds(2), .seconds(3)])
            #expect(registry.snapshot().isEmpty)
            #expect(clock.sleeperCount == 0)
        }
    }

    @Test func startingImmediatelyRunsOnceAtOnceThenWaits() async {
        await onManualClock { clock, registry in
            let runs = Log<Duration>()
            let task = `repeat`(
                every: .milliseconds(500), times: 3, startingImmediately: true, by: .taskContext
            ) { runs.append(registry.now) }
            await clock.advance(by: .zero)
            #expect(runs.all == [.zero])
            await clock.advance(by: .seconds(2))
            await task.value
            #expect(runs.all == [.zero, .milliseconds(500), .seconds(1)])
        }
    }

    @Test func startingImmediatelyKeepsItsTimeWhenTheClockIsAdvancedRightAway() async {
        await onManualClock { clock, registry in
            let runs = Log<Duration>()
            let task = `repeat`(
                every: .seconds(1), times: 3, startingImmediately: true, by: .taskContext
            ) { runs.append(registry.now) }
            await clock.advance(by: .seconds(2))
            await task.value
            #expect(runs.all == [.zero, .seconds(1), .seconds(2)])
        }
    }

    @Test func startingImmediatelyRunsWithoutAnyAdvance() async {
        await onManualClock { clock, registry in
            let ran = Flag()
            let task = `repeat`(every: .seconds(1), startingImmediately: true, by: .taskContext) {
                ran.set()
            }
            for _ in 0..<100_000 where !ran.isSet { await Task.yield() }
            #expect(ran.isSet)
            #expect(registry.now == .zero)
            task.cancel()
            await task.value
        }
    }

    @Test func timesNilRepeatsUntilCancelled() async {
        await onManualClock { clock, registry in
            let runs = Log<Duration>()
            let task = `repeat`(every: .seconds(1), by: .taskContext) { runs.append(registry.now) }
            await clock.advance(by: .seconds(5))
            #expect(runs.count == 5)
            task.cancel()
            await task.value
            await clock.advance(by: .seconds(5))
            #expect(runs.count == 5)
            #expect(registry.snapshot().isEmpty)
            #expect(clock.sleeperCount == 0)
        }
    }

    @Test func cancelledTaskNeverStartsAnotherIteration() async {
        await onManualClock { clock, _ in
            let runs = Log<Int>()
            let task = `repeat`(every: .seconds(1), by: .taskContext) { runs.append(1) }
            task.cancel()
            await clock.advance(by: .seconds(10))
            await task.value
            #expect(runs.count == 0)
        }
    }

    @Test(arguments: [
        (Duration.zero, Int?.none), (.seconds(-1), nil), (.seconds(Int64.min), 3),
        (.seconds(1), 0), (.seconds(1), -4), (.seconds(1), Int.min),
    ])
    func invalidIntervalOrTimesFinishesWithoutRunning(_ interval: Duration, _ times: Int?) async {
        await onManualClock { clock, registry in
            let ran = Flag()
            let task = `repeat`(
                every: interval, times: times, startingImmediately: true, by: .taskContext
            ) { ran.set() }
            await task.value
            await clock.advance(by: .seconds(10))
            #expect(!ran.isSet)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func anErrorGoesToOnErrorAndStopsTheLoop() async {
        await onManualClock { clock, _ in
            let runs = Log<Int>()
            let errors = Log<Boom>()
            let task = `repeat`(
                every: .seconds(1), by: .taskContext, onError: { errors.append($0 as! Boom) }
            ) {
                runs.append(runs.count + 1)
                if runs.count == 2 { throw Boom(attempt: 2) }
            }
            await clock.advance(by: .seconds(10))
            await task.value
            #expect(runs.all == [1, 2])
            #expect(errors.all == [Boom(attempt: 2)])
        }
    }

    @Test func cancellationErrorStopsTheLoopSilently() async {
        await onManualClock { clock, _ in
            let runs = Log<Int>()
            let errors = Log<String>()
            let task = `repeat`(
                every: .seconds(1), by: .taskContext, onError: { errors.append("\($0)") }
            ) {
                runs.append(1)
                throw CancellationError()
            }
            await clock.advance(by: .seconds(3))
            await task.value
            #expect(runs.count == 1)
            #expect(errors.all == [])
        }
    }

    @Test func iterationsNeverOverlap() async {
        await onManualClock { clock, _ in
            let events = Log<String>()
            let task = `repeat`(every: .milliseconds(100), times: 3, by: .taskContext) {
                events.append("start")
                try await clock.sleep(for: .milliseconds(250))
                events.append("end")
            }
            await clock.advance(by: .seconds(2))
            await task.value
            #expect(events.all == ["start", "end", "start", "end", "start", "end"])
        }
    }

    @Test func defaultActorIsTheMainActor() async {
        await onManualClock { clock, _ in
            let onMain = Log<Bool>()
            let task = `repeat`(every: .seconds(1), times: 2) {
                await MainActor.run { MainActor.assertIsolated() }
                onMain.append(true)
            }
            await clock.advance(by: .seconds(2))
            await task.value
            #expect(onMain.count == 2)
        }
    }

    @Test func ownedActorRuns() async {
        await onManualClock { clock, _ in
            let runs = Log<Int>()
            let task = `repeat`(every: .seconds(1), times: 2, by: .ownedActor) { runs.append(1) }
            await clock.advance(by: .seconds(2))
            await task.value
            #expect(runs.count == 2)
        }
    }

    @Test func hugeIntervalNeitherTrapsNorHangsACancelledLoop() async {
        await onManualClock { clock, registry in
            let runs = Log<Int>()
            let task = `repeat`(
                every: .seconds(Int64.max), mode: .fixedRate, startingImmediately: true,
                by: .taskContext
            ) { runs.append(1) }
            await clock.advance(by: .seconds(86_400 * 365))
            #expect(runs.count == 1)
            #expect(
                registry.snapshot().entries(.repeat).first?.state
                    == .repeating(runs: 1, nextRunAt: .seconds(Int64.max)))
            task.cancel()
            await task.value
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func realClockHugeIntervalIsCancellable() async {
        // Real clock: the loop sleeps on ContinuousClock in bounded steps.
        let task = `repeat`(every: .seconds(Int64.max), by: .taskContext) {}
        await Task.yield()
        task.cancel()
        await task.value
    }

    @Test func realClockShortRepeatRuns() async {
        // Real clock, generous margins: three 10 ms iterations finish well within the wait.
        let runs = Log<Int>()
        let line = #line + 1
        let task = `repeat`(every: .milliseconds(10), times: 3, by: .taskContext) {
            runs.append(1)
        }
        await task.value
        #expect(runs.count == 3)
        // Other tests share this registry: look only at this call site.
        #expect(
            TempoRegistry.shared.snapshot().entries(.repeat).allSatisfy {
                !$0.key.hasPrefix("TempoTests/RepeatTests.swift:\(line):")
            })
    }
}

@Suite struct RepeatModeTests {
    @Test func fixedDelayWaitsFromTheEndOfEachRun() async {
        await onManualClock { clock, registry in
            let starts = Log<Duration>()
            let task = `repeat`(every: .seconds(1), times: 3, by: .taskContext) {
                starts.append(registry.now)
                try await clock.sleep(for: .milliseconds(300))
            }
            await clock.advance(by: .seconds(10))
            await task.value
            #expect(starts.all == [.seconds(1), .milliseconds(2_300), .milliseconds(3_600)])
        }
    }

    @Test func fixedRateStaysOnTheGrid() async {
        await onManualClock { clock, registry in
            let starts = Log<Duration>()
            let task = `repeat`(every: .seconds(1), mode: .fixedRate, times: 3, by: .taskContext) {
                starts.append(registry.now)
                try await clock.sleep(for: .milliseconds(300))
            }
            await clock.advance(by: .seconds(10))
            await task.value
            #expect(starts.all == [.seconds(1), .seconds(2), .seconds(3)])
        }
    }

    @Test func fixedRateSkipsTicksMissedByAnOverrunAndNeverBunchesThem() async {
        await onManualClock { clock, registry in
            let starts = Log<Duration>()
            let durations: [Duration] = [
                .milliseconds(100), .milliseconds(2_500), .milliseconds(100), .seconds(1),
                .milliseconds(100),
            ]
            let task = `repeat`(every: .seconds(1), mode: .fixedRate, times: 5, by: .taskContext) {
                let index = starts.count
                starts.append(registry.now)
                try await clock.sleep(for: durations[index])
            }
            await clock.advance(by: .seconds(20))
            await task.value
            // Run 2 (at 2 s) ends at 4.5 s: ticks 3 s and 4 s are skipped, the next runs at 5 s.
            // Run 4 (at 6 s) takes exactly one interval and ends on tick 7 s, which runs then.
            #expect(
                starts.all == [.seconds(1), .seconds(2), .seconds(5), .seconds(6), .seconds(7)])
        }
    }

    @Test func fixedRateDriftOverAThousandTicksIsZero() async {
        await onManualClock { clock, registry in
            let interval = Duration.nanoseconds(333_333_333)
            let starts = Log<Duration>()
            let task = `repeat`(every: interval, mode: .fixedRate, times: 1_000, by: .taskContext) {
                starts.append(registry.now)
                try await clock.sleep(for: .milliseconds(7))
            }
            await clock.advance(by: interval * 1_000)
            #expect(starts.count == 1_000)
            await clock.advance(by: .milliseconds(7))  // the last run's own sleep
            await task.value
            #expect(starts.count == 1_000)
            #expect(starts.all == (1...1_000).map { interval * $0 })
        }
    }

    @Test func fixedDelayDriftsByTheRunTimeEveryTick() async {
        await onManualClock { clock, registry in
            let starts = Log<Duration>()
            let task = `repeat`(every: .seconds(1), times: 100, by: .taskContext) {
                starts.append(registry.now)
                try await clock.sleep(for: .milliseconds(7))
            }
            await clock.advance(by: .seconds(200))
            await task.value
            #expect(starts.all == (1...100).map { .seconds($0) + .milliseconds(7) * ($0 - 1) })
        }
    }

    @Test func explicitClockOverload() async {
        let clock = ManualClock()
        let starts = Log<Duration>()
        let task = `repeat`(
            every: .seconds(2), mode: .fixedRate, times: 2, by: .taskContext, clock: clock
        ) { starts.append(clock.now.offset) }
        await clock.advance(by: .seconds(4))
        await task.value
        #expect(starts.all == [.seconds(2), .seconds(4)])
    }
}

@Suite struct NamedRepeatTests {
    @Test func aNamedRepeatReplacesTheRunningLoopOfTheSameName() async {
        await onManualClock { clock, registry in
            let runs = Log<String>()
            let old = `repeat`(every: .seconds(1), identifier: "poll", by: .taskContext) {
                runs.append("old")
            }
            await clock.advance(by: .seconds(2))
            let new = `repeat`(every: .seconds(1), identifier: "poll", by: .taskContext) {
                runs.append("new")
            }
            await old.value  // the old loop has ended
            await clock.advance(by: .seconds(2))
            #expect(runs.all == ["old", "old", "new", "new"])
            let entries = registry.snapshot().entries(.repeat)
            #expect(entries.map(\.key) == ["poll"])
            #expect(registry.isRepeating(identifier: "poll"))
            new.cancel()
            await new.value
            #expect(!registry.isRepeating(identifier: "poll"))
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func cancelByName() async {
        await onManualClock { clock, registry in
            let runs = Log<String>()
            let heartbeat = `repeat`(every: .seconds(1), identifier: "heartbeat", by: .taskContext)
            {
                runs.append("beat")
            }
            let other = `repeat`(every: .seconds(1), identifier: "other", by: .taskContext) {
                runs.append("other")
            }
            await clock.advance(by: .seconds(1))
            #expect(cancelRepeat(identifier: "heartbeat"))
            #expect(!cancelRepeat(identifier: "heartbeat"))
            #expect(!cancelRepeat(identifier: "never started"))
            await heartbeat.value
            await clock.advance(by: .seconds(2))
            #expect(runs.all.filter { $0 == "beat" }.count == 1)
            #expect(runs.all.filter { $0 == "other" }.count == 3)
            #expect(registry.cancelRepeat(identifier: "other"))
            await other.value
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func namesAreScopedToTheirRegistry() async {
        let runs = Log<String>()
        let clockA = ManualClock()
        let clockB = ManualClock()
        let a = TempoRegistry(clock: clockA)
        let b = TempoRegistry(clock: clockB)
        let taskA = a.withCurrent {
            `repeat`(every: .seconds(1), identifier: "sync", by: .taskContext) { runs.append("a") }
        }
        let taskB = b.withCurrent {
            `repeat`(every: .seconds(1), identifier: "sync", by: .taskContext) { runs.append("b") }
        }
        await clockA.advance(by: .seconds(1))
        await clockB.advance(by: .seconds(1))
        #expect(runs.all == ["a", "b"])
        #expect(a.cancelRepeat(identifier: "sync"))
        #expect(b.cancelRepeat(identifier: "sync"))
        await taskA.value
        await taskB.value
    }

    @Test func anInvalidRepeatWithANameStillStopsTheOldLoop() async {
        await onManualClock { clock, registry in
            let runs = Log<Int>()
            let old = `repeat`(every: .seconds(1), identifier: "job", by: .taskContext) {
                runs.append(1)
            }
            await clock.advance(by: .seconds(1))
            let invalid = `repeat`(every: .zero, identifier: "job", by: .taskContext) {
                runs.append(2)
            }
            await old.value
            await invalid.value
            await clock.advance(by: .seconds(3))
            #expect(runs.all == [1])
            #expect(!registry.isRepeating(identifier: "job"))
        }
    }

    @Test func snapshotShowsRunsSoFarAndTheNextTick() async {
        await onManualClock { clock, registry in
            let task = `repeat`(every: .seconds(1), mode: .fixedRate, by: .taskContext) {}
            let first = registry.snapshot().entries(.repeat)
            #expect(first.count == 1)
            #expect(first.first?.key.hasPrefix("TempoTests/RepeatTests.swift:") == true)
            #expect(first.first?.state == .repeating(runs: 0, nextRunAt: .seconds(1)))
            await clock.advance(by: .seconds(2))
            #expect(
                registry.snapshot().entries(.repeat).first?.state
                    == .repeating(runs: 2, nextRunAt: .seconds(3)))
            task.cancel()
            await task.value
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func snapshotShowsNoNextTickWhileRunning() async {
        await onManualClock { clock, registry in
            let seen = Log<TempoSnapshot.State>()
            let task = `repeat`(every: .seconds(1), times: 1, by: .taskContext) {
                seen.append(registry.snapshot().entries(.repeat)[0].state)
            }
            await clock.advance(by: .seconds(1))
            await task.value
            #expect(seen.all == [.repeating(runs: 0, nextRunAt: nil)])
        }
    }

    @Test func loopLeavesTheSnapshotAfterAnError() async {
        await onManualClock { clock, registry in
            let task = `repeat`(every: .seconds(1), identifier: "failing", by: .taskContext) {
                throw Boom()
            }
            await clock.advance(by: .seconds(1))
            await task.value
            #expect(registry.snapshot().isEmpty)
            #expect(!registry.isRepeating(identifier: "failing"))
        }
    }
}
