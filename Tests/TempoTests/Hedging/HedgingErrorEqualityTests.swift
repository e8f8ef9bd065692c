import Foundation
import Tempo
import TempoTesting
import Testing

/// `HedgingError` is `Equatable`, so a test can name the error it expects.
@Suite struct HedgingErrorEqualityTests {
    struct Unavailable: Error {}
    struct Status: Error { var code: Int }
    enum Reason: Error, Equatable {
        case busy
        case gone(String)
    }

    @Test func aTestComparesTheErrorOfAHedgeWhoseAttemptsAllFailed() async {
        await onManualClock { _, _ in
            await #expect(throws: HedgingError.allAttemptsFailed([Unavailable(), Unavailable()])) {
                try await hedge(maxAttempts: 2, after: .milliseconds(50)) { _ -> Int in
                    throw Unavailable()
                }
            }
            await #expect(throws: HedgingError.invalidAttemptCount(0)) {
                try await hedge(maxAttempts: 0, after: .milliseconds(50)) { _ in 1 }
            }
        }
    }

    @Test func equalErrorsAreTheSameCaseAndTheSameErrorsInOrder() {
        #expect(HedgingError.invalidAttemptCount(3) == .invalidAttemptCount(3))
        #expect(HedgingError.invalidAttemptCount(3) != .invalidAttemptCount(4))
        #expect(HedgingError.invalidAttemptCount(0) != .allAttemptsFailed([]))
        #expect(HedgingError.allAttemptsFailed([]) == .allAttemptsFailed([]))
        let errors: [any Error] = [Reason.busy, Status(code: 503), Unavailable()]
        #expect(HedgingError.allAttemptsFailed(errors) == .allAttemptsFailed(errors))
    }

    @Test func equatableErrorsCompareByTheirOwnEquality() {
        #expect(
            HedgingError.allAttemptsFailed([Reason.gone("a")])
                == .allAttemptsFailed([Reason.gone("a")]))
        #expect(
            HedgingError.allAttemptsFailed([Reason.gone("a")])
                != .allAttemptsFailed([Reason.gone("b")]))
        #expect(
            HedgingError.allAttemptsFailed([Reason.busy]) != .allAttemptsFailed([Reason.gone("")]))
        #expect(
            HedgingError.allAttemptsFailed([URLError(.timedOut)])
                == .allAttemptsFailed([URLError(.timedOut)]))
        #expect(
            HedgingError.allAttemptsFailed([URLError(.timedOut)])
                != .allAttemptsFailed([URLError(.cannotConnectToHost)]))
    }

    @Test func otherErrorsCompareByTypeAndDescription() {
        #expect(
            HedgingError.allAttemptsFailed([Status(code: 503)])
                == .allAttemptsFailed([Status(code: 503)]))
        #expect(
            HedgingError.allAttemptsFailed([Status(code: 503)])
                != .allAttemptsFailed([Status(code: 502)]))
        // Same description, another type: not the same error.
        struct Other: Error {}
        #expect(HedgingError.allAttemptsFailed([Unavailable()]) != .allAttemptsFailed([Other()]))
    }

    struct Named: Error, CustomStringConvertible { var description: String { "boom" } }
    struct AlsoNamed: Error, CustomStringConvertible { var description: String { "boom" } }
    /// Equal by its own rule, which ignores `note`: its descriptions differ.
    struct Coded: Error, Equatable {
        var code: Int
        var note: String
        static func == (lhs: Coded, rhs: Coded) -> Bool { lhs.code == rhs.code }
    }

    @Test func twoTypesWithOneDescriptionAreNotTheSameError() {
        #expect(String(reflecting: Named()) == String(reflecting: AlsoNamed()))
        #expect(HedgingError.allAttemptsFailed([Named()]) == .allAttemptsFailed([Named()]))
        #expect(HedgingError.allAttemptsFailed([Named()]) != .allAttemptsFailed([AlsoNamed()]))
    }

    @Test func anEquatableTypesOwnEqualityDecidesNotItsDescription() {
        let first = Coded(code: 503, note: "first try")
        let second = Coded(code: 503, note: "second try")
        #expect(String(reflecting: first) != String(reflecting: second))
        #expect(HedgingError.allAttemptsFailed([first]) == .allAttemptsFailed([second]))
        #expect(
            HedgingError.allAttemptsFailed([first])
                != .allAttemptsFailed([Coded(code: 502, note: "first try")]))
    }

    @Test func countAndOrderMatter() {
        let one: [any Error] = [Reason.busy]
        let two: [any Error] = [Reason.busy, Reason.busy]
        #expect(HedgingError.allAttemptsFailed(one) != .allAttemptsFailed(two))
        let ab: [any Error] = [Reason.busy, Status(code: 1)]
        let ba: [any Error] = [Status(code: 1), Reason.busy]
        #expect(HedgingError.allAttemptsFailed(ab) != .allAttemptsFailed(ba))
    }

    @Test func nestedHedgingErrorsCompareToo() {
        let inner = HedgingError.allAttemptsFailed([Reason.busy])
        #expect(HedgingError.allAttemptsFailed([inner]) == .allAttemptsFailed([inner]))
        #expect(
            HedgingError.allAttemptsFailed([inner])
                != .allAttemptsFailed([HedgingError.allAttemptsFailed([Reason.gone("x")])]))
    }
}
