import Testing

@testable import Tempo

/// The standard library's own operators, reached through the protocols (a generic context
/// sees only the conformances, never Tempo's inline versions).
private func libraryLess<T: Comparable>(_ a: T, _ b: T) -> Bool { a < b }
private func libraryLessOrEqual<T: Comparable>(_ a: T, _ b: T) -> Bool { a <= b }
private func libraryGreater<T: Comparable>(_ a: T, _ b: T) -> Bool { a > b }
private func libraryGreaterOrEqual<T: Comparable>(_ a: T, _ b: T) -> Bool { a >= b }
private func libraryEqual<T: Equatable>(_ a: T, _ b: T) -> Bool { a == b }
private func libraryNotEqual<T: Equatable>(_ a: T, _ b: T) -> Bool { a != b }
private func librarySum<T: AdditiveArithmetic>(_ a: T, _ b: T) -> T { a + b }
private func libraryDifference<T: AdditiveArithmetic>(_ a: T, _ b: T) -> T { a - b }
private func libraryZero<T: AdditiveArithmetic>(_: T.Type) -> T { .zero }
private func libraryMin<T: Comparable>(_ a: T, _ b: T) -> T { Swift.min(a, b) }
private func libraryMax<T: Comparable>(_ a: T, _ b: T) -> T { Swift.max(a, b) }

/// Tempo's inline `Duration` operators (Utilities/DurationOperators.swift) give what the
/// standard library's give, and the engine's reading of `ContinuousClock` keeps its pace.
struct DurationOperatorTests {
    /// Durations at the edges of the representable range and around zero, and a spread of
    /// others whose high and low 64-bit halves both vary.
    static let samples: [Duration] = {
        var values: [Duration] = [
            .zero, Duration(attoseconds: 1), Duration(attoseconds: -1),
            Duration(attoseconds: .max), Duration(attoseconds: .min),
            Duration(attoseconds: Int128(UInt64.max)), Duration(attoseconds: -Int128(UInt64.max)),
            Duration(attoseconds: Int128(UInt64.max) + 1), .seconds(1), .seconds(-1),
            .nanoseconds(1), .milliseconds(20), .seconds(Int64.max), .seconds(Int64.min),
        ]
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<200 {
            let high = Int64(bitPattern: generator.next()) >> (generator.next() % 64)
            let low = generator.next()
            values.append(Duration(attoseconds: Int128(high) << 64 | Int128(low)))
        }
        return values
    }()

    @Test func comparisonsAndEqualityMatchTheStandardLibrary() {
        var checked = 0
        for a in Self.samples {
            for b in Self.samples + [a] {
                #expect((a < b) == libraryLess(a, b), "\(a) < \(b)")
                #expect((a <= b) == libraryLessOrEqual(a, b), "\(a) <= \(b)")
                #expect((a > b) == libraryGreater(a, b), "\(a) > \(b)")
                #expect((a >= b) == libraryGreaterOrEqual(a, b), "\(a) >= \(b)")
                #expect((a == b) == libraryEqual(a, b), "\(a) == \(b)")
                #expect((a != b) == libraryNotEqual(a, b), "\(a) != \(b)")
                #expect(libraryEqual(min(a, b), libraryMin(a, b)), "min(\(a), \(b))")
                #expect(libraryEqual(max(a, b), libraryMax(a, b)), "max(\(a), \(b))")
                checked += 1
            }
        }
        #expect(checked == Self.samples.count * (Self.samples.count + 1))
    }

    @Test func sumsDifferencesAndZeroMatchTheStandardLibrary() {
        #expect(libraryEqual(Duration.zero, libraryZero(Duration.self)))
        for a in Self.samples {
            for b in Self.samples {
                // Only pairs that do not overflow: both versions trap on the others.
                let (_, sumOverflows) = a.attoseconds.addingReportingOverflow(b.attoseconds)
                if !sumOverflows {
                    #expect(libraryEqual(a + b, librarySum(a, b)), "\(a) + \(b)")
                }
                let (_, differenceOverflows) = a.attoseconds.subtractingReportingOverflow(
                    b.attoseconds)
                if !differenceOverflows {
                    #expect(libraryEqual(a - b, libraryDifference(a, b)), "\(a) - \(b)")
                }
            }
        }
    }

    /// On the real clock: the time the engine reads for `ContinuousClock` (on Linux, straight
    /// from `CLOCK_BOOTTIME`) advances exactly as `ContinuousClock` does, to within the readings
    /// that bracket it, across a sleep.
    @Test func realClockTheEngineReadsContinuousClockTimeAtItsPace() async throws {
        let clock = EngineClock(ContinuousClock(), timers: false)
        for _ in 0..<5 {
            let before0 = ContinuousClock.now
            let engine0 = clock.now()
            let after0 = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(20))
            let before1 = ContinuousClock.now
            let engine1 = clock.now()
            let after1 = ContinuousClock.now
            let elapsed = libraryDifference(engine1, engine0)
            // The engine's two readings lie between the bracketing ones.
            #expect(libraryGreaterOrEqual(elapsed, after0.duration(to: before1)))
            #expect(libraryLessOrEqual(elapsed, before0.duration(to: after1)))
            #expect(libraryGreaterOrEqual(elapsed, .milliseconds(20)))
        }
    }
}
