import Tempo
import TempoTesting
import Testing

/// Issue 12, item 4: `repeat(afterError: .keepGoing)` reports every error and keeps looping;
/// the default still stops at the first error.
private struct PollFailed: Error, Equatable {
    let iteration: Int
}

/// An operation that fails on the iterations listed, counting every iteration.
private final class FlakyPoll: Sendable {
    let runs = Log<Duration>()
    let errors = Log<Int>()
    private let failing: Set<Int>
    private let registry: TempoRegistry

    init(failingOn failing: Set<Int>, registry: TempoRegistry) {
        self.failing = failing
        self.registry = registry
    }

    func poll() throws {
        runs.append(registry.now)
        if failing.contains(runs.count) { throw PollFailed(iteration: runs.count) }
    }

    func report(_ error: any Error) {
        errors.append((error as? PollFailed)?.iteration ?? -1)
    }
}

@Suite struct RepeatErrorPolicyTests {
    @Test func keepGoingReportsEachErrorAndRunsEveryIteration() async {
        await onManualClock { clock, registry in
            let flaky = FlakyPoll(failingOn: [2, 4], registry: registry)
            let loop = `repeat`(
                every: .seconds(1), times: 6, by: .taskContext, onError: { flaky.report($0) },
                afterError: .keepGoing
            ) { try flaky.poll() }
            await clock.advance(by: .seconds(6))
            await loop.value
            #expect(flaky.runs.all == (1...6).map { .seconds($0) })
            #expect(flaky.errors.all == [2, 4])
            #expect(registry.snapshot().isEmpty)
            #expect(clock.sleeperCount == 0)
        }
    }

    @Test func aFailedFirstIterationRunAtOnceIsReportedAndTheLoopGoesOn() async {
        await onManualClock { clock, registry in
            let flaky = FlakyPoll(failingOn: [1], registry: registry)
            let loop = `repeat`(
                every: .seconds(1), times: 3, startingImmediately: true, by: .ownedActor,
                onError: { flaky.report($0) }, afterError: .keepGoing
            ) { try flaky.poll() }
            await clock.advance(by: .zero)
            #expect(flaky.errors.all == [1])
            await clock.advance(by: .seconds(2))
            await loop.value
            #expect(flaky.runs.all == [.zero, .seconds(1), .seconds(2)])
            #expect(registry.snapshot().isEmpty)
        }
    }

    /// On every actor: an `.ownedActor` iteration reports its error outside the actor's turn, a
    /// path of its own, and must end the loop there too.
    @Test(arguments: [ActorType.taskContext, .ownedActor, .mainActor])
    func theDefaultStillStopsAtTheFirstError(on actorType: ActorType) async {
        await onManualClock { clock, registry in
            let flaky = FlakyPoll(failingOn: [2, 4], registry: registry)
            let loop = `repeat`(
                every: .seconds(1), times: 6, by: actorType, onError: { flaky.report($0) }
            ) { try flaky.poll() }
            await clock.advance(by: .seconds(6))
            await loop.value
            #expect(flaky.runs.all == [.seconds(1), .seconds(2)])
            #expect(flaky.errors.all == [2])
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func cancellingTheTaskStillStopsALoopThatKeepsGoing() async {
        await onManualClock { clock, registry in
            let flaky = FlakyPoll(failingOn: Set(1...100), registry: registry)
            let loop = `repeat`(
                every: .seconds(1), by: .taskContext, onError: { flaky.report($0) },
                afterError: .keepGoing
            ) { try flaky.poll() }
            await clock.advance(by: .seconds(3))
            loop.cancel()
            await loop.value
            await clock.advance(by: .seconds(3))
            #expect(flaky.runs.count == 3)
            #expect(flaky.errors.all == [1, 2, 3])
            #expect(registry.snapshot().isEmpty)
            #expect(clock.sleeperCount == 0)
        }
    }

    @Test func aCancellationErrorEndsALoopThatKeepsGoingSilently() async {
        await onManualClock { clock, registry in
            let runs = Log<Int>()
            let errors = Log<String>()
            let loop = `repeat`(
                every: .seconds(1), times: 5, by: .taskContext,
                onError: { errors.append("\($0)") }, afterError: .keepGoing
            ) {
                runs.append(runs.count + 1)
                if runs.count == 2 { throw CancellationError() }
            }
            await clock.advance(by: .seconds(5))
            await loop.value
            #expect(runs.all == [1, 2])
            #expect(errors.all.isEmpty)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func aFixedRateLoopThatKeepsGoingStaysOnItsGrid() async {
        await onManualClock { clock, registry in
            let flaky = FlakyPoll(failingOn: [1, 3], registry: registry)
            let loop = `repeat`(
                every: .seconds(2), mode: .fixedRate, times: 4, by: .taskContext,
                onError: { flaky.report($0) }, afterError: .keepGoing
            ) {
                try await clock.sleep(for: .milliseconds(500))
                try flaky.poll()
            }
            await clock.advance(by: .seconds(10))
            await loop.value
            #expect(
                flaky.runs.all == [
                    .milliseconds(2500), .milliseconds(4500), .milliseconds(6500),
                    .milliseconds(8500),
                ])
            #expect(flaky.errors.all == [1, 3])
        }
    }

    @Test func aNamedLoopThatKeepsGoingStopsByName() async {
        await onManualClock { clock, registry in
            let flaky = FlakyPoll(failingOn: [1, 2], registry: registry)
            let loop = `repeat`(
                every: .seconds(1), identifier: "flaky-poll", by: .ownedActor,
                onError: { error in
                    TempoActor.shared.assertIsolated()
                    flaky.report(error)
                },
                afterError: .keepGoing
            ) { try flaky.poll() }
            await clock.advance(by: .seconds(3))
            #expect(registry.isRepeating(identifier: "flaky-poll"))
            #expect(cancelRepeat(identifier: "flaky-poll"))
            await loop.value
            await clock.advance(by: .seconds(3))
            #expect(flaky.runs.count == 3)
            #expect(flaky.errors.all == [1, 2])
            #expect(!registry.isRepeating(identifier: "flaky-poll"))
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test @MainActor func aMainActorModelSeesEachErrorByTheTimeAdvanceReturns() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let model = PollingModel()
        await registry.withCurrent {
            let loop = model.startPolling()
            await clock.advance(by: .seconds(1))
            #expect(model.lastError == "1" && model.polls == 1)
            await clock.advance(by: .seconds(1))
            #expect(model.polls == 2 && model.lastError == nil)
            await clock.advance(by: .seconds(1))
            #expect(model.lastError == "3" && model.polls == 3)
            loop.cancel()
            await loop.value
        }
        #expect(registry.snapshot().isEmpty)
    }
}

/// Polls every second; odd polls fail. Written the way a view model would, with no `Task`.
@MainActor
private final class PollingModel {
    var polls = 0
    var lastError: String?

    func startPolling() -> Task<Void, Never> {
        `repeat`(
            every: .seconds(1),
            onError: { self.lastError = "\(($0 as? PollFailed)?.iteration ?? -1)" },
            afterError: .keepGoing
        ) { @MainActor in
            self.polls += 1
            if self.polls.isMultiple(of: 2) {
                self.lastError = nil
            } else {
                throw PollFailed(iteration: self.polls)
            }
        }
    }
}
