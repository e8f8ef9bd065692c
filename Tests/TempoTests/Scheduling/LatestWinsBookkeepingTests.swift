import TempoTesting
import Testing

@testable import Tempo

// The awaited forms' bookkeeping, each rule on its own: a run overtaken while its task waits
// for its actor, the default (no latest wins), a caller cancelled after its release, the
// table of runs in flight, and groups of two kinds under one name.

/// Holds the owned actor's turn: an async `.ownedActor` operation asleep on `clock` for 10 s.
/// Returns once it is asleep.
private func holdOwnedActor(_ clock: ManualClock) async {
    debounce(.zero, identifier: "turn", by: .ownedActor) {
        try await clock.sleep(for: .seconds(10))
    }
    await clock.advance(by: .zero)
}

@Suite(.timeLimit(.minutes(2))) struct LatestWinsBookkeepingTests {
    /// A's caller woke and its task waits for the owned actor's turn when B is released: A is
    /// overtaken and, once it has the turn, does not start its operation.
    @Test func aRunOvertakenWhileItWaitsForItsActorNeverStartsItsOperation() async {
        await onManualClock { clock, registry in
            await holdOwnedActor(clock)
            let debouncer = Debouncer(.milliseconds(100), by: .ownedActor)
            let ran = Log<String>()
            let first = Task {
                try await debouncer.result(latestWins: true) {
                    ran.append("A")
                    return "A"
                }
            }
            #expect(await eventually { debouncer.pending != nil })
            debouncer.flush()
            // Returns once A's task waits for the turn (it counts as asleep then).
            await clock.advance(by: .zero)
            let second = Task {
                try await debouncer.result(latestWins: true) {
                    ran.append("B")
                    return "B"
                }
            }
            #expect(await eventually { debouncer.pending != nil })
            debouncer.flush()
            await clock.advance(by: .seconds(10))
            #expect(await Outcome(first) == .overtaken)
            #expect(await Outcome(second) == .value("B"))
            #expect(ran.all == ["B"])
            #expect(await eventually { LatestRuns.count(registry) == 0 })
        }
    }

    /// Without `latestWins` (the parameter left out), a run still in flight when a newer one is
    /// released is not overtaken: both callers get their own values.
    @Test(arguments: AwaitedForm.allCases)
    func byDefaultARunningOperationIsNeverOvertaken(_ form: AwaitedForm) async {
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.milliseconds(100), by: .taskContext)
            let throttler = Throttler(.milliseconds(100), by: .taskContext, option: .trailing)
            let call: @Sendable (String, Duration) async throws -> String = { label, length in
                let operation: nonisolated(nonsending) @Sendable () async throws -> String = {
                    try await clock.sleep(for: length)
                    return label
                }
                switch form {
                case .debouncer: return try await debouncer.result(operation)
                case .debounceResult:
                    return try await debounceResult(
                        .milliseconds(100), identifier: "default", by: .taskContext,
                        operation: operation)
                case .throttler: return try await throttler.result(operation)
                case .throttleResult:
                    return try await throttleResult(
                        .milliseconds(100), identifier: "default", by: .taskContext,
                        option: .trailing, operation: operation)
                }
            }
            let first = Task { try await call("A", .milliseconds(500)) }
            #expect(await eventually { AwaitedForm.hasWaitingCall(registry) })
            await clock.advance(by: .milliseconds(150))
            let second = Task { try await call("B", .milliseconds(10)) }
            #expect(await eventually { AwaitedForm.hasWaitingCall(registry) })
            await clock.advance(by: .seconds(1))
            #expect(await Outcome(first) == .value("A"))
            #expect(await Outcome(second) == .value("B"))
        }
    }

    /// A latest-wins caller whose call was released while its actor was busy, and who is
    /// cancelled before it wakes, gets `CancellationError`, and its run leaves the table of
    /// runs in flight; a later run of the group then runs as usual.
    @Test func aCallerCancelledAfterItsReleaseLeavesNoRunBehind() async {
        await onManualClock { clock, registry in
            let caller = HeldCaller()
            defer { caller.executor.stop() }
            let group = AwaitedForm.debouncer.group()
            let ran = Log<String>()
            let first = Task { try await caller.call(group, "A", log: ran) }
            #expect(await eventually { group.hasWaitingCall(registry) })
            caller.executor.hold()
            group.flush()
            #expect(LatestRuns.count(registry) == 1)
            first.cancel()
            #expect(LatestRuns.count(registry) == 0)
            caller.executor.release()
            #expect(await Outcome(first) == .cancelled)
            let second = Task { try await caller.call(group, "B", log: ran) }
            #expect(await eventually { group.hasWaitingCall(registry) })
            await clock.advance(by: .milliseconds(100))
            #expect(await Outcome(second) == .value("B"))
            #expect(ran.all == ["B"])
            #expect(await eventually { LatestRuns.count(registry) == 0 })
        }
    }

    /// A caller cancelled while its released run's task waits for its actor gets
    /// `CancellationError` (not `notRun`), and the operation never starts.
    @Test func aCallerCancelledWhileItsRunWaitsForItsActorGetsCancellationError() async {
        await onManualClock { clock, registry in
            await holdOwnedActor(clock)
            let debouncer = Debouncer(.milliseconds(100), by: .ownedActor)
            let ran = Log<String>()
            let first = Task {
                try await debouncer.result(latestWins: true) {
                    ran.append("A")
                    return "A"
                }
            }
            #expect(await eventually { debouncer.pending != nil })
            debouncer.flush()
            await clock.advance(by: .zero)
            first.cancel()
            await clock.advance(by: .seconds(10))
            #expect(await Outcome(first) == .cancelled)
            #expect(ran.all.isEmpty)
            #expect(await eventually { LatestRuns.count(registry) == 0 })
        }
    }

    /// Three runs of one group, each released while the one before runs: each newer one
    /// overtakes the one in flight, also after the first overtaken run's task has ended.
    @Test func anOvertakenRunEndingLeavesTheNewerRunInFlight() async {
        await onManualClock { clock, registry in
            let debouncer = Debouncer(.milliseconds(100), by: .taskContext)
            var callers: [Task<String, any Error>] = []
            for label in ["A", "B", "C"] {
                callers.append(
                    Task {
                        try await debouncer.result(latestWins: true) {
                            try await clock.sleep(for: .seconds(1))
                            return label
                        }
                    })
                #expect(await eventually { debouncer.pending != nil })
                // Released, and the run before it (cancelled) has ended.
                await clock.advance(by: .milliseconds(100))
            }
            await clock.advance(by: .seconds(2))
            #expect(await outcomes(callers) == [.overtaken, .overtaken, .value("C")])
            #expect(await eventually { LatestRuns.count(registry) == 0 })
        }
    }

    /// A debounce group and a throttle group of one name are two groups: a latest-wins run of
    /// one never overtakes a run of the other.
    @Test func aDebounceAndAThrottleOfOneNameDoNotOvertakeEachOther() async {
        await onManualClock { clock, _ in
            let debounced = Task {
                try await debounceResult(
                    .milliseconds(100), identifier: "shared", by: .taskContext, latestWins: true
                ) {
                    try await clock.sleep(for: .seconds(1))
                    return "debounced"
                }
            }
            await clock.advance(by: .milliseconds(100))
            let throttled = Task {
                try await throttleResult(
                    .milliseconds(100), identifier: "shared", by: .taskContext, latestWins: true
                ) { "throttled" }
            }
            #expect(await Outcome(throttled) == .value("throttled"))
            await clock.advance(by: .seconds(1))
            #expect(await Outcome(debounced) == .value("debounced"))
        }
    }
}
