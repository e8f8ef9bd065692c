import TempoTesting
import Testing

@testable import Tempo

/// A backoff never reports a negative wait: a negative `maximum`, `initial` or linear
/// `increment` is clamped, in `delay(forRetry:)`, in every jitter and in what `onRetry` hears.
@Suite struct BackoffClampTests {
    @Test func aNegativeMaximumCapsAtZero() {
        #expect(
            RetryBackoff.linear(initial: .seconds(1), maximum: .seconds(-5)).delay(forRetry: 2)
                == .zero)
        #expect(
            RetryBackoff.exponential(initial: .seconds(1), maximum: .seconds(-1))
                .delay(forRetry: 1) == .zero)
        #expect(RetryBackoff.linear(initial: .seconds(1), maximum: .seconds(-5)).cap == .zero)
    }

    @Test func aNegativeIncrementAddsNothing() {
        let backoff = RetryBackoff.linear(initial: .seconds(3), increment: .seconds(-2))
        #expect(
            (1...5).map { backoff.delay(forRetry: $0) } == Array(repeating: .seconds(3), count: 5))
    }

    @Test(arguments: [RetryJitter.none, .full, .equal, .decorrelated])
    func onRetryNeverHearsANegativeWait(jitter: RetryJitter) async {
        let waits = Log<Duration>()
        for backoff in [
            RetryBackoff.linear(initial: .seconds(1), increment: .seconds(-1)),
            .linear(initial: .seconds(1), maximum: .seconds(-5)),
            .exponential(initial: .seconds(1), maximum: .seconds(-5)),
        ] {
            _ = try? await retry(
                4, backoff: backoff, jitter: jitter, random: FixedRandom(value: .max / 2),
                onRetry: { _, _, wait in waits.append(wait) }, clock: ImmediateClock()
            ) { () async throws -> Int in throw Boom() }
        }
        #expect(waits.count == 9)
        #expect(waits.all.allSatisfy { $0 >= .zero }, "\(waits.all)")
    }

    @Test func linearWaitsWithANegativeIncrementStayAtTheInitialWait() async {
        let waits = Log<Duration>()
        _ = try? await retry(
            4, backoff: .linear(initial: .seconds(1), increment: .seconds(-1)),
            onRetry: { _, _, wait in waits.append(wait) }, clock: ImmediateClock()
        ) { () async throws -> Int in throw Boom() }
        #expect(waits.all == [.seconds(1), .seconds(1), .seconds(1)])
    }
}

/// Tempo's saturating `Duration` arithmetic, at both ends.
@Suite struct DurationArithmeticTests {
    @Test func addingSaturatesAtBothEnds() {
        let max = Duration(attoseconds: .max)
        let min = Duration(attoseconds: .min)
        #expect(max.adding(.nanoseconds(1)) == max)
        #expect(min.adding(.nanoseconds(-1)) == min)
        #expect(Duration.seconds(2).adding(.seconds(-3)) == .seconds(-1))
    }

    @Test func subtractingSaturatesAtBothEnds() {
        let max = Duration(attoseconds: .max)
        let min = Duration(attoseconds: .min)
        #expect(min.subtracting(.nanoseconds(1)) == min)
        #expect(max.subtracting(.nanoseconds(-1)) == max)
        #expect(Duration.seconds(2).subtracting(.seconds(3)) == .seconds(-1))
    }

    @Test func saturatingMultiplicationKeepsTheSign() {
        #expect(Duration.seconds(Int64.max).saturatingMultiplied(by: 1_000) == .saturatedMax)
        #expect(Duration.seconds(-Int64.max).saturatingMultiplied(by: 1_000) == .saturatedMin)
        #expect(Duration.seconds(3).saturatingMultiplied(by: 4) == .seconds(12))
    }
}

/// Random waits longer than 2⁶⁴ attoseconds (about 18 s) are drawn from their whole range.
@Suite struct LongJitterTests {
    @Test func fullJitterOverALongWaitDrawsFromTheWholeRange() async {
        let waits = Log<Duration>()
        _ = try? await retry(
            2, backoff: .constant(.seconds(100)), jitter: .full,
            random: FixedRandom(value: 1 << 63),
            onRetry: { _, _, wait in waits.append(wait) }, clock: ImmediateClock()
        ) { () async throws -> Int in throw Boom() }
        #expect(waits.all == [.seconds(50)])
    }

    @Test func uniformIsExactOverALongSpan() {
        var random = FixedRandom(value: 1 << 63)
        #expect(uniform(.seconds(10), .seconds(1_000), using: &random) == .seconds(505))
        var top = FixedRandom(value: .max)
        #expect(uniform(.zero, .seconds(1_000), using: &top) < .seconds(1_000))
        #expect(uniform(.zero, .seconds(1_000), using: &top) > .milliseconds(999_999))
    }
}
