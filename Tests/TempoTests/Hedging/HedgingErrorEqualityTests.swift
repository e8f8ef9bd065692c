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

    final class ClassError: Error, @unchecked Sendable {
        let code: Int
        init(_ code: Int) { self.code = code }
    }
    class BaseError: Error, @unchecked Sendable {
        let service: String
        init(service: String) { self.service = service }
    }
    final class TimedOutError: BaseError, @unchecked Sendable {
        let after: Int
        init(service: String, after: Int) {
            self.after = after
            super.init(service: service)
        }
    }
    final class Payload: Sendable {
        let value: Int
        init(_ value: Int) { self.value = value }
    }
    struct HoldsAClass: Error { let payload: Payload }
    struct HoldsAnError: Error { let inner: any Error }
    enum Failure: Error {
        case status(Int)
        case reset(Int)
    }
    /// Its description changes each time it is read.
    final class Counter: @unchecked Sendable { var reads = 0 }
    struct ChangingError: Error, CustomDebugStringConvertible {
        let counter: Counter
        var debugDescription: String {
            counter.reads += 1
            return "read \(counter.reads)"
        }
    }

    @Test func classErrorsCompareByTheirStoredValues() {
        #expect(
            HedgingError.allAttemptsFailed([ClassError(1)]) == .allAttemptsFailed([ClassError(1)]))
        #expect(
            HedgingError.allAttemptsFailed([ClassError(1)]) != .allAttemptsFailed([ClassError(2)]))
        let one = ClassError(7)
        #expect(HedgingError.allAttemptsFailed([one]) == .allAttemptsFailed([one]))
    }

    @Test func aSuperclassesStoredValuesCountToo() {
        let users = TimedOutError(service: "users", after: 2)
        #expect(
            HedgingError.allAttemptsFailed([users])
                == .allAttemptsFailed([TimedOutError(service: "users", after: 2)]))
        #expect(
            HedgingError.allAttemptsFailed([users])
                != .allAttemptsFailed([TimedOutError(service: "orders", after: 2)]))
        #expect(
            HedgingError.allAttemptsFailed([users])
                != .allAttemptsFailed([TimedOutError(service: "users", after: 3)]))
    }

    @Test func valuesHeldInsideAnErrorCompareToo() {
        #expect(
            HedgingError.allAttemptsFailed([HoldsAClass(payload: Payload(1))])
                == .allAttemptsFailed([HoldsAClass(payload: Payload(1))]))
        #expect(
            HedgingError.allAttemptsFailed([HoldsAClass(payload: Payload(1))])
                != .allAttemptsFailed([HoldsAClass(payload: Payload(2))]))
        #expect(
            HedgingError.allAttemptsFailed([HoldsAnError(inner: ClassError(1))])
                != .allAttemptsFailed([HoldsAnError(inner: ClassError(2))]))
        #expect(
            HedgingError.allAttemptsFailed([HoldsAnError(inner: Status(code: 1))])
                != .allAttemptsFailed([HoldsAnError(inner: ClassError(1))]))
    }

    @Test func enumCasesWithOnePayloadAreNotTheSame() {
        #expect(
            HedgingError.allAttemptsFailed([Failure.status(5)])
                == .allAttemptsFailed([Failure.status(5)]))
        #expect(
            HedgingError.allAttemptsFailed([Failure.status(5)])
                != .allAttemptsFailed([Failure.reset(5)]))
        #expect(
            HedgingError.allAttemptsFailed([Failure.status(5)])
                != .allAttemptsFailed([Failure.status(6)]))
    }

    @Test func anErrorWhoseDescriptionChangesIsStillTheSameAsItself() {
        let changing = HedgingError.allAttemptsFailed([ChangingError(counter: Counter())])
        #expect(changing == changing)
    }

    @Test func everyAttemptMustMatchNotJustOne() {
        let expected: [any Error] = [Reason.busy, Status(code: 1)]
        let actual: [any Error] = [Reason.busy, Status(code: 2)]
        #expect(HedgingError.allAttemptsFailed(expected) != .allAttemptsFailed(actual))
    }

    struct NotEquatable: Sendable { let value: Int }
    struct WithUserInfo: Error, @unchecked Sendable { let info: [String: Any] }
    final class Cyclic: Error, @unchecked Sendable {
        let value: Int
        var inner: HedgingError?
        init(_ value: Int) { self.value = value }
    }
    indirect enum Chain: Error {
        case end(NotEquatable)
        case link(NotEquatable, Chain)
    }
    actor Connection: Error {
        var attempts = 0
    }

    /// Two dictionaries with one set of entries, built in different orders and sizes: `Mirror`
    /// lists their entries in different orders. (A first version compared them in that order,
    /// and the answer changed from run to run with the hash seed.)
    @Test func aDictionaryOfValuesThatAreNotEquatableComparesInAnyOrder() {
        var forward: [String: Any] = [:]
        for key in 0..<40 { forward["key \(key)"] = NotEquatable(value: key) }
        var backward: [String: Any] = [:]
        backward.reserveCapacity(200)
        for key in (0..<40).reversed() { backward["key \(key)"] = NotEquatable(value: key) }
        #expect(
            HedgingError.allAttemptsFailed([WithUserInfo(info: forward)])
                == .allAttemptsFailed([WithUserInfo(info: backward)]))
        backward["key 7"] = NotEquatable(value: 8)
        #expect(
            HedgingError.allAttemptsFailed([WithUserInfo(info: forward)])
                != .allAttemptsFailed([WithUserInfo(info: backward)]))
        backward["key 7"] = NotEquatable(value: 7)
        backward["key 40"] = NotEquatable(value: 40)
        #expect(
            HedgingError.allAttemptsFailed([WithUserInfo(info: forward)])
                != .allAttemptsFailed([WithUserInfo(info: backward)]))
    }

    /// A class error that holds itself through a `HedgingError`. (A first version started the
    /// nested comparison afresh, and recursed until the stack overflowed.)
    @Test func aCycleThroughANestedHedgingErrorEnds() {
        let first = Cyclic(1)
        first.inner = .allAttemptsFailed([first])
        let second = Cyclic(1)
        second.inner = .allAttemptsFailed([second])
        let other = Cyclic(2)
        other.inner = .allAttemptsFailed([other])
        #expect(HedgingError.allAttemptsFailed([first]) == .allAttemptsFailed([second]))
        #expect(HedgingError.allAttemptsFailed([first]) != .allAttemptsFailed([other]))
    }

    /// A long chain is compared to 64 levels and no further, without overflowing the stack.
    @Test func aLongChainIsComparedWithoutOverflowingTheStack() {
        func chain(_ length: Int, head: Int) -> Chain {
            var chain = Chain.end(NotEquatable(value: 0))
            for index in 1..<length { chain = .link(NotEquatable(value: index), chain) }
            return .link(NotEquatable(value: head), chain)
        }
        let long = chain(10_000, head: 1)
        #expect(
            HedgingError.allAttemptsFailed([long]) == .allAttemptsFailed([chain(10_000, head: 1)]))
        #expect(
            HedgingError.allAttemptsFailed([long]) != .allAttemptsFailed([chain(10_000, head: 2)]))
    }

    /// An actor is compared as an instance: its state is not read from outside.
    @Test func actorsAreTheSameOnlyAsOneInstance() {
        let connection = Connection()
        #expect(HedgingError.allAttemptsFailed([connection]) == .allAttemptsFailed([connection]))
        #expect(HedgingError.allAttemptsFailed([connection]) != .allAttemptsFailed([Connection()]))
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
