import Synchronization
import Tempo
import TempoTesting
import Testing

@Suite struct RetryContractTests {
    @Test func threeAttemptsWaitOnlyAfterFailuresAndThrowTheLastError() async throws {
        await onManualClock { clock, registry in
            let attempts = Log<Duration>()
            let task = Task {
                try await retry(3, every: .milliseconds(300)) {
                    attempts.append(registry.now)
                    throw Boom(attempt: attempts.count)
                }
            }
            await clock.waitForSleepers(1)
            #expect(attempts.all == [.zero])
            await clock.advance(by: .milliseconds(299))
            #expect(attempts.count == 1)
            await clock.advance(by: .milliseconds(1))
            await clock.waitForSleepers(1)
            #expect(attempts.all == [.zero, .milliseconds(300)])
            await clock.advance(by: .milliseconds(300))
            await #expect(throws: Boom(attempt: 3)) { try await task.value }
            #expect(attempts.all == [.zero, .milliseconds(300), .milliseconds(600)])
            #expect(clock.sleeperCount == 0)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func firstSuccessReturnsItsValue() async throws {
        try await onManualClock { clock, registry in
            let attempts = Log<Int>()
            let task = Task {
                try await retry(5, every: .seconds(1)) {
                    attempts.append(attempts.count + 1)
                    if attempts.count < 2 { throw Boom(attempt: attempts.count) }
                    return "ok \(attempts.count)"
                }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .seconds(1))
            let value = try await task.value
            #expect(value == "ok 2")
            #expect(attempts.all == [1, 2])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func successAtOnceNeverWaits() async throws {
        try await onManualClock { clock, _ in
            let value = try await retry { 42 }
            #expect(value == 42)
            #expect(clock.sleeperCount == 0)
        }
    }

    @Test(arguments: [0, -1, Int.min])
    func nonPositiveAttemptCountThrowsWithoutRunning(_ count: Int) async {
        let ran = Flag()
        await #expect(throws: RetryError.invalidAttemptCount(count)) {
            try await retry(count, every: .zero) { ran.set() }
        }
        #expect(!ran.isSet)
    }

    @Test(arguments: [Duration.zero, .milliseconds(-5), .seconds(Int64.min)])
    func zeroOrNegativeDelayRetriesAtOnce(_ delay: Duration) async {
        await onManualClock { clock, _ in
            let attempts = Log<Int>()
            await #expect(throws: Boom(attempt: 4)) {
                try await retry(4, every: delay) {
                    attempts.append(attempts.count + 1)
                    throw Boom(attempt: attempts.count)
                }
            }
            #expect(attempts.all == [1, 2, 3, 4])
            #expect(clock.now.offset == .zero)
        }
    }

    @Test func cancellationErrorIsNeverRetried() async {
        let attempts = Log<Int>()
        await #expect(throws: CancellationError.self) {
            try await retry(5, every: .zero) {
                attempts.append(1)
                throw CancellationError()
            }
        }
        #expect(attempts.count == 1)
    }

    @Test func cancellationErrorIsNeverRetriedEvenWhenThePredicateSaysYes() async {
        let attempts = Log<Int>()
        let asked = Flag()
        await #expect(throws: CancellationError.self) {
            try await retry(
                5, backoff: .constant(.zero),
                shouldRetry: { _ in
                    asked.set()
                    return true
                },
                operation: {
                    attempts.append(1)
                    throw CancellationError()
                })
        }
        #expect(attempts.count == 1)
        #expect(!asked.isSet)
    }

    @Test func cancellingDuringAWaitThrowsCancellationError() async {
        await onManualClock { clock, registry in
            let attempts = Log<Int>()
            let task = Task {
                try await retry(3, every: .seconds(10)) {
                    attempts.append(1)
                    throw Boom()
                }
            }
            await clock.waitForSleepers(1)
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(attempts.count == 1)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func cancellingDuringAnAttemptThrowsCancellationErrorNotTheAttemptsError() async {
        let attempts = Log<Int>()
        let told = Log<Int>()
        let task = Task {
            try await retry(
                3, backoff: .constant(.zero), onRetry: { attempt, _, _ in told.append(attempt) },
                operation: {
                    attempts.append(1)
                    withUnsafeCurrentTask { $0?.cancel() }
                    throw Boom(attempt: 1)
                })
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(attempts.count == 1)
        #expect(told.all == [])  // a cancelled caller is not retried, so nothing to announce
    }

    @Test func cancellingDuringASleepingAttemptStopsIt() async {
        await onManualClock { clock, _ in
            let attempts = Log<Int>()
            let task = Task {
                try await retry(3, every: .seconds(1)) {
                    attempts.append(1)
                    try await clock.sleep(for: .seconds(5))
                }
            }
            await clock.waitForSleepers(1)
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(attempts.count == 1)
        }
    }

    @Test func hugeDelayNeitherTrapsNorHangsACancelledCaller() async {
        await onManualClock { clock, _ in
            let task = Task {
                try await retry(2, every: .seconds(Int64.max)) { throw Boom() }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .seconds(86_400 * 30))
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }

    @Test func realClockHugeDelayIsCancellable() async {
        // Real clock: checks the wiring to ContinuousClock; no sleeping in the test itself.
        let started = Flag()
        let task = Task {
            try await retry(2, every: .seconds(Int64.max)) {
                started.set()
                throw Boom()
            }
        }
        while !started.isSet { await Task.yield() }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func snapshotShowsTheAttemptAndTheWaitWhileLive() async {
        await onManualClock { clock, registry in
            let inAttempt = Log<TempoSnapshot>()
            let task = Task {
                try await retry(3, every: .milliseconds(250)) {
                    inAttempt.append(registry.snapshot())
                    throw Boom()
                }
            }
            await clock.waitForSleepers(1)
            let waiting = registry.snapshot().entries(.retry)
            #expect(waiting.count == 1)
            #expect(waiting.first?.key.hasPrefix("TempoTests/RetryTests.swift:") == true)
            #expect(
                waiting.first?.state
                    == .retrying(attempt: 1, maxAttempts: 3, waitingUntil: .milliseconds(250)))
            await clock.advance(by: .milliseconds(250))
            await clock.waitForSleepers(1)
            await clock.advance(by: .milliseconds(250))
            await #expect(throws: Boom.self) { try await task.value }
            #expect(
                inAttempt.all.map { $0.entries(.retry).map(\.state) } == [
                    [.retrying(attempt: 1, maxAttempts: 3, waitingUntil: nil)],
                    [.retrying(attempt: 2, maxAttempts: 3, waitingUntil: nil)],
                    [.retrying(attempt: 3, maxAttempts: 3, waitingUntil: nil)],
                ])
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func explicitClockDrivesTheWaits() async throws {
        let clock = ManualClock()
        let attempts = Log<Duration>()
        let task = Task {
            try await retry(2, every: .seconds(3), clock: clock) {
                attempts.append(clock.now.offset)
                if attempts.count == 1 { throw Boom() }
                return attempts.count
            }
        }
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(3))
        let value = try await task.value
        #expect(value == 2)
        #expect(attempts.all == [.zero, .seconds(3)])
    }
}

@Suite struct RetryBackoffTests {
    /// Runs a retry that always fails on an immediate clock; returns the waits told to
    /// `onRetry` and the clock time of each attempt.
    func schedule(
        _ attempts: Int, backoff: RetryBackoff, jitter: RetryJitter = .none,
        random: some RandomNumberGenerator = SystemRandomNumberGenerator(),
        error: @escaping @Sendable (Int) -> any Error = { Boom(attempt: $0) }
    ) async -> (waits: [Duration], starts: [Duration], hooks: [Int]) {
        let clock = ImmediateClock()
        let starts = Log<Duration>()
        let waits = Log<Duration>()
        let hooks = Log<Int>()
        _ = try? await retry(
            attempts, backoff: backoff, jitter: jitter, random: random,
            onRetry: { attempt, error, delay in
                hooks.append(attempt)
                waits.append(delay)
                #expect((error as? Boom)?.attempt ?? attempt == attempt)
            }, clock: clock,
            operation: { () async throws -> Void in
                starts.append(clock.now.offset)
                throw error(starts.count)
            })
        return (waits.all, starts.all, hooks.all)
    }

    @Test func constantBackoff() async {
        let result = await schedule(4, backoff: .constant(.milliseconds(500)))
        #expect(result.waits == Array(repeating: .milliseconds(500), count: 3))
        #expect(result.starts == [.zero, .milliseconds(500), .seconds(1), .milliseconds(1_500)])
        #expect(result.hooks == [1, 2, 3])
    }

    @Test func linearBackoffGrowsByTheIncrementUpToTheMaximum() async {
        let result = await schedule(
            6, backoff: .linear(initial: .seconds(1), maximum: .milliseconds(3_500)))
        #expect(
            result.waits == [
                .seconds(1), .seconds(2), .seconds(3), .milliseconds(3_500), .milliseconds(3_500),
            ])
        let custom = await schedule(
            4, backoff: .linear(initial: .milliseconds(100), increment: .milliseconds(50)))
        #expect(custom.waits == [.milliseconds(100), .milliseconds(150), .milliseconds(200)])
    }

    @Test func exponentialBackoffMultipliesUpToTheMaximum() async {
        let result = await schedule(
            7,
            backoff: .exponential(
                initial: .milliseconds(100), multiplier: 2, maximum: .milliseconds(1_000)))
        #expect(
            result.waits == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                .milliseconds(1_000), .milliseconds(1_000),
            ])
        #expect(
            result.starts == [
                .zero, .milliseconds(100), .milliseconds(300), .milliseconds(700),
                .milliseconds(1_500), .milliseconds(2_500), .milliseconds(3_500),
            ])
    }

    @Test func fractionalMultiplier() {
        let backoff = RetryBackoff.exponential(initial: .milliseconds(100), multiplier: 1.5)
        #expect(
            (1...4).map(backoff.delay(forRetry:)) == [
                .milliseconds(100), .milliseconds(150), .milliseconds(225),
                .microseconds(337_500),
            ])
    }

    @Test func multiplierBelowOneIsTakenAsOne() {
        let backoff = RetryBackoff.exponential(initial: .seconds(2), multiplier: 0.5)
        #expect(backoff.delay(forRetry: 5) == .seconds(2))
        #expect(
            RetryBackoff.exponential(initial: .seconds(2), multiplier: .nan).delay(forRetry: 3)
                == .seconds(2))
    }

    @Test func growthThatWouldOverflowSaturatesAtTheMaximum() {
        let capped = RetryBackoff.exponential(initial: .seconds(1), maximum: .seconds(3_600))
        #expect(capped.delay(forRetry: 1_000) == .seconds(3_600))
        #expect(capped.delay(forRetry: .max) == .seconds(3_600))
        let uncapped = RetryBackoff.exponential(initial: .seconds(1), multiplier: 10)
        let largest = Duration(attoseconds: .max)
        #expect(uncapped.delay(forRetry: 200) == largest)
        #expect(
            RetryBackoff.exponential(initial: .seconds(1), multiplier: 1e300)
                .delay(forRetry: 50) == largest)
        #expect(
            RetryBackoff.exponential(initial: .seconds(1), multiplier: 2.5)
                .delay(forRetry: 1_000) == largest)
        let linear = RetryBackoff.linear(initial: .seconds(Int64.max), maximum: .seconds(60))
        #expect(linear.delay(forRetry: .max) == .seconds(60))
        #expect(RetryBackoff.linear(initial: .seconds(Int64.max)).delay(forRetry: .max) == largest)
    }

    @Test func negativeInitialDelayRetriesAtOnce() {
        #expect(RetryBackoff.constant(.seconds(-1)).delay(forRetry: 2) == .zero)
        #expect(RetryBackoff.exponential(initial: .seconds(-1)).delay(forRetry: 3) == .zero)
    }

    @Test func hugeBackoffUnderAManualClockIsCancellable() async {
        await onManualClock { clock, _ in
            let task = Task {
                try await retry(
                    3, backoff: .exponential(initial: .seconds(Int64.max), multiplier: 1e10)
                ) { throw Boom() }
            }
            await clock.waitForSleepers(1)
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }
}

@Suite struct RetryJitterTests {
    let backoff = RetryBackoff.exponential(
        initial: .milliseconds(100), multiplier: 2, maximum: .seconds(1))

    /// The documented draw, `a + (b − a) × r / 2⁶⁴`, computed with a full-width multiply.
    func draw(_ lower: Duration, _ upper: Duration, _ r: UInt64) -> Duration {
        guard upper > lower else { return lower }
        let span = UInt128(upper.attoseconds - lower.attoseconds)
        let (high, low) = span.multipliedFullWidth(by: UInt128(r))
        let shifted = (high << 64) | (low >> 64)
        return Duration(attoseconds: lower.attoseconds + Int128(shifted))
    }

    func waits(_ jitter: RetryJitter, _ random: some RandomNumberGenerator, attempts: Int = 7)
        async -> [Duration]
    {
        await RetryBackoffTests().schedule(
            attempts, backoff: backoff, jitter: jitter, random: random
        ).waits
    }

    @Test func halfwayDrawsGiveTheMidpointOfEachFormula() async {
        let half = FixedRandom(value: 1 << 63)
        let ms = Duration.milliseconds
        #expect(
            await waits(.full, half) == [ms(50), ms(100), ms(200), ms(400), ms(500), ms(500)])
        #expect(
            await waits(.equal, half) == [ms(75), ms(150), ms(300), ms(600), ms(750), ms(750)])
        // previous starts at base (100 ms): 100 + (300 − 100)/2 = 200; 100 + (600 − 100)/2 = 350;
        // 100 + (1050 − 100)/2 = 575; 100 + (1725 − 100)/2 = 912.5; then capped at 1 s.
        #expect(
            await waits(.decorrelated, half) == [
                ms(200), ms(350), ms(575), .microseconds(912_500), ms(1_000), ms(1_000),
            ])
    }

    @Test func zeroDrawsGiveTheLowerBounds() async {
        let zero = FixedRandom(value: 0)
        let ms = Duration.milliseconds
        #expect(await waits(.full, zero) == Array(repeating: .zero, count: 6))
        #expect(
            await waits(.equal, zero) == [ms(50), ms(100), ms(200), ms(400), ms(500), ms(500)])
        #expect(await waits(.decorrelated, zero) == Array(repeating: ms(100), count: 6))
    }

    @Test func noneIgnoresTheRandomSource() async {
        #expect(
            await waits(.none, SplitMix64(seed: 1)) == (1...6).map { backoff.delay(forRetry: $0) })
    }

    @Test(arguments: [1, 42, 2_026, 0xDEAD_BEEF] as [UInt64])
    func seededSchedulesFollowTheFormulas(_ seed: UInt64) async {
        let attempts = 12
        var source = SplitMix64(seed: seed)
        var full: [Duration] = []
        var equal: [Duration] = []
        var decorrelated: [Duration] = []
        var previous = backoff.initial
        for retry in 1..<attempts {
            let d = backoff.delay(forRetry: retry)
            full.append(draw(.zero, d, source.next()))
        }
        source = SplitMix64(seed: seed)
        for retry in 1..<attempts {
            let d = backoff.delay(forRetry: retry)
            let half = d / 2
            equal.append(half + draw(.zero, half, source.next()))
        }
        source = SplitMix64(seed: seed)
        for _ in 1..<attempts {
            let next = min(.seconds(1), draw(.milliseconds(100), previous * 3, source.next()))
            decorrelated.append(next)
            previous = next
        }
        #expect(await waits(.full, SplitMix64(seed: seed), attempts: attempts) == full)
        #expect(await waits(.equal, SplitMix64(seed: seed), attempts: attempts) == equal)
        #expect(
            await waits(.decorrelated, SplitMix64(seed: seed), attempts: attempts) == decorrelated)
        // The bounds of each formula hold too.
        for (retry, wait) in zip(1..., full) {
            #expect(wait >= .zero && wait <= backoff.delay(forRetry: retry))
        }
        for (retry, wait) in zip(1..., equal) {
            #expect(wait >= backoff.delay(forRetry: retry) / 2)
            #expect(wait <= backoff.delay(forRetry: retry))
        }
        for wait in decorrelated { #expect(wait >= .milliseconds(100) && wait <= .seconds(1)) }
    }

    @Test func theSameSeedGivesTheSameScheduleAndAnotherSeedAnother() async {
        let a = await waits(.full, SplitMix64(seed: 7))
        let b = await waits(.full, SplitMix64(seed: 7))
        let c = await waits(.full, SplitMix64(seed: 8))
        #expect(a == b)
        #expect(a != c)
    }
}

/// A 503 that says how long to wait.
struct Unavailable: RetryAfterProviding, Equatable {
    var retryAfter: Duration?
}

@Suite struct RetryPolicyTests {
    @Test func shouldRetryFalseThrowsAtOnce() async {
        let attempts = Log<Int>()
        let asked = Log<Int>()
        await #expect(throws: Boom(attempt: 1)) {
            try await retry(
                5, backoff: .constant(.seconds(1)),
                shouldRetry: { error in
                    asked.append((error as? Boom)?.attempt ?? -1)
                    return false
                }, clock: ImmediateClock(),
                operation: {
                    attempts.append(1)
                    throw Boom(attempt: 1)
                })
        }
        #expect(attempts.count == 1)
        #expect(asked.all == [1])
    }

    @Test func shouldRetrySeesEachErrorAndCanStopLater() async {
        let attempts = Log<Int>()
        await #expect(throws: Boom(attempt: 3)) {
            try await retry(
                9, backoff: .constant(.seconds(1)),
                shouldRetry: { ($0 as? Boom)?.attempt ?? 0 < 3 }, clock: ImmediateClock(),
                operation: {
                    attempts.append(1)
                    throw Boom(attempt: attempts.count)
                })
        }
        #expect(attempts.count == 3)
    }

    @Test func onRetryIsToldTheAttemptTheErrorAndTheDelay() async throws {
        let told = Log<String>()
        let value = try await retry(
            3, backoff: .linear(initial: .seconds(1)),
            onRetry: { attempt, error, delay in told.append("\(attempt) \(error) \(delay)") },
            clock: ImmediateClock(),
            operation: {
                if told.count < 2 { throw Boom(attempt: told.count + 1) }
                return "done"
            })
        #expect(value == "done")
        #expect(told.all == ["1 boom 1 1.0 seconds", "2 boom 2 2.0 seconds"])
    }

    @Test func anErrorsRetryAfterOverridesTheBackoffForThatWait() async {
        let result = await RetryBackoffTests().schedule(
            4, backoff: .constant(.milliseconds(100)),
            error: { attempt in
                attempt == 2
                    ? Unavailable(retryAfter: .seconds(2)) as any Error : Boom(attempt: attempt)
            })
        #expect(result.waits == [.milliseconds(100), .seconds(2), .milliseconds(100)])
        #expect(
            result.starts == [
                .zero, .milliseconds(100), .milliseconds(2_100), .milliseconds(2_200),
            ])
    }

    @Test func retryAfterIsCappedByTheMaximumAndNilFallsBackToTheBackoff() async {
        let result = await RetryBackoffTests().schedule(
            4,
            backoff: .exponential(initial: .milliseconds(100), maximum: .milliseconds(500)),
            jitter: .full, random: FixedRandom(value: 0),
            error: { attempt in
                Unavailable(retryAfter: attempt == 1 ? .seconds(30) : nil)
            })
        // 1: retry-after 30 s capped to 500 ms; 2, 3: the backoff with full jitter (0).
        #expect(result.waits == [.milliseconds(500), .zero, .zero])
    }

    @Test func negativeRetryAfterRetriesAtOnce() async {
        let result = await RetryBackoffTests().schedule(
            2, backoff: .constant(.seconds(1)),
            error: { _ in Unavailable(retryAfter: .seconds(-3)) })
        #expect(result.waits == [.zero])
        #expect(result.starts == [.zero, .zero])
    }

    @Test func theSpecFormHonoursRetryAfterToo() async {
        let starts = Log<Duration>()
        let clock = ImmediateClock()
        await #expect(throws: Unavailable(retryAfter: .seconds(7))) {
            try await retry(2, every: .seconds(1), clock: clock) {
                starts.append(clock.now.offset)
                throw Unavailable(retryAfter: .seconds(7))
            }
        }
        #expect(starts.all == [.zero, .seconds(7)])
    }

    @Test func mainActorCallerCanUseNonSendableState() async throws {
        @MainActor final class Counter { var value = 0 }
        let counter = await MainActor.run { Counter() }
        let result = try await { @MainActor in
            try await retry(3, every: .zero) {
                counter.value += 1
                if counter.value < 3 { throw Boom() }
                return counter.value
            }
        }()
        #expect(result == 3)
    }
}
