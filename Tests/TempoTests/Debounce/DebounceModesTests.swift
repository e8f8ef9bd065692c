import Tempo
import TempoTesting
import Testing

@Suite struct DebounceModesTests {
    // MARK: .leading

    @Test func leadingRunsTheFirstCallOfABurstAtOnceAndDropsTheRest() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 0..<4 {
                debounce(
                    .milliseconds(300), identifier: "submit", by: .taskContext, option: .leading
                ) {
                    log.mark("tap\(i)", registry)
                }
                await clock.advance(by: .milliseconds(200))
            }
            #expect(log.all == ["tap0@0"])
            await clock.advance(by: .seconds(5))
            #expect(log.all == ["tap0@0"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func leadingEveryCallPushesTheQuietWindowOut() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            func tap(_ label: String) {
                debounce(
                    .milliseconds(300), identifier: "submit", by: .taskContext, option: .leading
                ) {
                    log.mark(label, registry)
                }
            }
            tap("a")  // 0: runs, quiet until 300
            await clock.advance(to: .init(offset: .milliseconds(250)))
            tap("b")  // 250: dropped, quiet until 550
            await clock.advance(to: .init(offset: .milliseconds(500)))
            tap("c")  // 500: dropped, although 300 ms passed since the run; quiet until 800
            await clock.advance(to: .init(offset: .milliseconds(799)))
            tap("d")  // 799: dropped; quiet until 1099
            #expect(registry.liveKeyCount == 1)
            #expect(pendingDebounce(identifier: "submit") == nil)  // nothing is ever pending
            await clock.advance(to: .init(offset: .milliseconds(1_099)))
            #expect(registry.liveKeyCount == 0)
            tap("e")  // a new burst
            #expect(log.all == ["a@0", "e@1099"])
        }
    }

    @Test func leadingTaskOverloadFinishesDroppedCallsAtOnce() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let first = debounce(
                .milliseconds(300), identifier: "s", by: .taskContext, option: .leading,
                onError: nil
            ) { log.mark("first", registry) }
            let second = debounce(
                .milliseconds(300), identifier: "s", by: .taskContext, option: .leading,
                onError: nil
            ) { log.mark("second", registry) }
            await second.value  // dropped: done without running
            await first.value
            #expect(log.all == ["first@0"])
            await clock.advance(by: .milliseconds(300))
            #expect(registry.liveKeyCount == 0)
        }
    }

    // MARK: .runFirst

    @Test func runFirstSingleCallRunsOnce() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            debounce(.milliseconds(300), identifier: "r", by: .taskContext, option: .runFirst) {
                log.mark("only", registry)
            }
            await clock.advance(by: .seconds(2))
            #expect(log.all == ["only@0"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func runFirstBurstRunsFirstAndLast() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 0..<5 {
                debounce(.milliseconds(300), identifier: "r", by: .taskContext, option: .runFirst) {
                    log.mark("c\(i)", registry)
                }
                await clock.advance(by: .milliseconds(100))
            }
            await clock.advance(by: .seconds(2))
            #expect(log.all == ["c0@0", "c4@700"])
        }
    }

    // MARK: maxWait

    /// Ten calls 100 ms apart, with a 300 ms window: the burst never pauses.
    private func steadyBurst(
        option: DebounceOptions, maxWait: Duration?
    ) async -> [String] {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 0..<10 {
                debounce(
                    .milliseconds(300), identifier: "burst", by: .taskContext, option: option,
                    maxWait: maxWait
                ) { log.mark("c\(i)", registry) }
                await clock.advance(by: .milliseconds(100))
            }
            await clock.advance(by: .seconds(2))
            #expect(registry.liveKeyCount == 0)
        }
        return log.all
    }

    @Test func withoutMaxWaitANeverPausingBurstRunsOnlyAtItsEnd() async {
        #expect(await steadyBurst(option: .default, maxWait: nil) == ["c9@1200"])
    }

    @Test func maxWaitRunsTheLatestCallAtMostMaxWaitAfterTheFirst() async {
        // Calls at 0...900. The first waits from 0, so the latest call (400) runs at 500; the
        // call at 500 starts the next wait, which runs the call made at 900 at 1000.
        #expect(
            await steadyBurst(option: .default, maxWait: .milliseconds(500)) == [
                "c4@500", "c9@1000",
            ])
    }

    @Test func maxWaitBelowTheDurationIsRaisedToIt() async {
        #expect(
            await steadyBurst(option: .default, maxWait: .milliseconds(100)) == [
                "c2@300", "c5@600", "c8@900", "c9@1200",
            ])
    }

    @Test(arguments: [Duration.zero, .milliseconds(-5), .seconds(-1_000)])
    func maxWaitZeroOrNegativeMeansNoMaximum(maxWait: Duration) async {
        #expect(await steadyBurst(option: .default, maxWait: maxWait) == ["c9@1200"])
    }

    @Test func maxWaitWithRunFirst() async {
        // c0 runs at once and starts the count: c4 runs at 500 (its latest run) and starts the
        // count again while the burst goes on: c9 runs at 1000.
        #expect(
            await steadyBurst(option: .runFirst, maxWait: .milliseconds(500)) == [
                "c0@0", "c4@500", "c9@1000",
            ])
    }

    @Test func maxWaitCountsFromTheLatestRunWhileTheBurstGoesOn() async {
        // Calls 150 ms apart, a 300 ms window, maxWait 500, `.runFirst`: the group stays in its
        // burst after each run, so runs come every 500 ms: 0, 500, 1000, ...
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 0..<8 {
                debounce(
                    .milliseconds(300), identifier: "b", by: .taskContext, option: .runFirst,
                    maxWait: .milliseconds(500)
                ) { log.mark("c\(i)", registry) }
                await clock.advance(by: .milliseconds(150))
            }
            await clock.advance(by: .seconds(1))
        }
        // c0@0 leads; c3 (450) runs at 500; c6 (900) runs at 1000; c7 (1050) ends the burst
        // 300 ms after it.
        #expect(log.all == ["c0@0", "c3@500", "c6@1000", "c7@1350"])
    }

    @Test func maxWaitInDefaultModeStartsAgainAtTheNextCallAfterARun() async {
        // `.default` leaves the group idle after a run: the next call starts a new count.
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 0..<8 {
                debounce(
                    .milliseconds(300), identifier: "b", by: .taskContext,
                    maxWait: .milliseconds(500)
                ) { log.mark("c\(i)", registry) }
                await clock.advance(by: .milliseconds(150))
            }
            await clock.advance(by: .seconds(1))
        }
        // c3 (450) runs at 500; c4 (600) starts the next count: c7 (1050) runs at 1100.
        #expect(log.all == ["c3@500", "c7@1100"])
    }

    @Test func maxWaitDoesNotApplyToLeading() async {
        #expect(await steadyBurst(option: .leading, maxWait: .milliseconds(500)) == ["c0@0"])
    }

    @Test func maxWaitWithTheMainActorAndTaskOverloads() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 0..<6 {
                debounce(.milliseconds(300), identifier: "m", maxWait: .milliseconds(400)) {
                    @MainActor in log.mark("main\(i)", registry)
                }
                debounce(
                    .milliseconds(300), identifier: "t", by: .ownedActor,
                    maxWait: .milliseconds(400), onError: nil
                ) { log.mark("task\(i)", registry) }
                await clock.advance(by: .milliseconds(100))
            }
            await clock.advance(by: .seconds(1))
            #expect(log.all.sorted() == ["main3@400", "main5@800", "task3@400", "task5@800"])
        }
    }

    // MARK: Ties at equal instants

    /// Calls a 300 ms `debounce` at each `(label, ms)`, in order, on a manual clock, lets it
    /// run out, and returns the runs as `"label@ms"`.
    private func debounced(
        at calls: [(String, Int)], option: DebounceOptions = .default, maxWait: Duration? = nil
    ) async -> [String] {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for (label, ms) in calls {
                await clock.advance(to: .init(offset: .milliseconds(ms)))
                debounce(
                    .milliseconds(300), identifier: "tie", by: .taskContext, option: option,
                    maxWait: maxWait
                ) { log.mark(label, registry) }
            }
            await clock.advance(by: .seconds(5))
            #expect(registry.liveKeyCount == 0)
        }
        return log.all
    }

    @Test func defaultACallAtTheDeadlineRunsTheOverdueCallThenWaitsAFullDuration() async {
        #expect(await debounced(at: [("a", 0), ("b", 300)]) == ["a@300", "b@600"])
    }

    @Test func runFirstTiesAtTheQuietWindowsEndAndAtTheDeadline() async {
        // a leads, quiet until 300; b at 300 finds the window over and leads too (quiet until
        // 600); c waits until 700; d at 700: c runs first, and its run keeps the group quiet
        // until 1000, so d waits a full duration.
        #expect(
            await debounced(at: [("a", 0), ("b", 300), ("c", 400), ("d", 700)], option: .runFirst)
                == ["a@0", "b@300", "c@700", "d@1000"])
    }

    @Test func leadingACallAtTheQuietWindowsEndRunsAtOnce() async {
        // b at 200 is dropped and moves the end of the quiet window to 500.
        #expect(
            await debounced(at: [("a", 0), ("b", 200), ("c", 500)], option: .leading)
                == ["a@0", "c@500"])
    }

    @Test func maxWaitACallAtTheCappedDeadlineRunsTheOverdueCallThenWaitsAFullDuration() async {
        #expect(
            await debounced(at: [("a", 0), ("b", 250), ("c", 500)], maxWait: .milliseconds(500))
                == ["b@500", "c@800"])
    }

    @Test func maxWaitEqualToTheDurationIsAuditTime() async {
        // The first call opens a window of 300 ms and the latest call in it runs at its end; a
        // call at that instant opens the next window; a run opens none (f waits its own 300 ms).
        let calls = [("a", 0), ("b", 100), ("c", 250), ("d", 300), ("e", 450), ("f", 700)]
        #expect(
            await debounced(at: calls, maxWait: .milliseconds(300)) == ["c@300", "e@600", "f@1000"])
    }

    // MARK: Bad input

    @Test func hugeDurationsNeverTrap() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let forever = Duration.seconds(Int64.max)
            for option in [DebounceOptions.default, .runFirst, .leading] {
                for i in 0..<3 {
                    debounce(
                        forever, identifier: "\(option)", by: .taskContext, option: option,
                        maxWait: forever
                    ) { log.mark("\(option)\(i)", registry) }
                }
            }
            debounce(
                .milliseconds(10), identifier: "capped", by: .taskContext, maxWait: forever
            ) { log.mark("capped", registry) }
            await clock.advance(by: .seconds(1_000_000))
            #expect(log.all.sorted() == ["capped@10", "leading0@0", "runFirst0@0"])
            #expect(
                pendingDebounce(identifier: "default")?.remaining ?? .zero > .seconds(1_000_000))
            #expect(registry.liveKeyCount == 3)
            registry.cancelAll()
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func zeroDurationRunsAtOnceInEveryMode() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for option in [DebounceOptions.default, .runFirst, .leading] {
                for i in 0..<2 {
                    debounce(.zero, identifier: "z", by: .taskContext, option: option) {
                        log.mark("\(option)\(i)", registry)
                    }
                }
            }
            #expect(log.count == 6)
            #expect(registry.liveKeyCount == 0)
        }
    }
}

@Suite struct DebounceModesEngineTests {
    @Test func aLeadingBurstFromALoopArmsOneTimer() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 0..<1_000 {
                debounce(.milliseconds(300), identifier: "l", by: .taskContext, option: .leading) {
                    log.mark("c\(i)", registry)
                }
            }
            #expect(registry.timersArmed == 1)
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["c0@0"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func aMaxWaitBurstArmsOneTimerPerRun() async {
        await onManualClock { clock, registry in
            for _ in 0..<100 {
                debounce(
                    .milliseconds(300), identifier: "m", by: .taskContext,
                    maxWait: .milliseconds(1_000)
                ) {}
                await clock.advance(by: .milliseconds(100))
            }
            await clock.advance(by: .seconds(1))
            // Runs at 1000, 2000, ... 10000 and at the end: each run leaves the group, and the
            // next call arms one new timer.
            #expect(registry.timersArmed <= 11)
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func theSnapshotShowsTheNewModesAndScopedObjects() async {
        await onManualClock { clock, registry in
            debounce(.milliseconds(300), identifier: "guard", by: .taskContext, option: .leading) {}
            throttle(.milliseconds(300), identifier: "tail", by: .taskContext, option: .trailing) {}
            let debouncer = Debouncer(.milliseconds(200), by: .taskContext)
            debouncer {}
            let snapshot = registry.snapshot()
            #expect(snapshot.entries.count == 3)
            #expect(
                snapshot.entries.contains {
                    $0.key == "guard"
                        && $0.state == .debounce(runsAt: nil, quietUntil: .milliseconds(300))
                })
            #expect(
                snapshot.entries.contains {
                    $0.key == "tail"
                        && $0.state
                            == .throttle(windowClosesAt: .milliseconds(300), trailingPending: true)
                })
            #expect(
                snapshot.entries.contains {
                    $0.key.hasPrefix("instance #")
                        && $0.state == .debounce(runsAt: .milliseconds(200), quietUntil: nil)
                })
            await clock.advance(by: .seconds(1))
            #expect(registry.snapshot().isEmpty)
            withExtendedLifetime(debouncer) {}
        }
    }
}
