import Synchronization
import Tempo
import TempoTesting

/// A test error that says which attempt threw it.
struct Boom: Error, Equatable, CustomStringConvertible {
    var attempt: Int = 0
    var description: String { "boom \(attempt)" }
}

/// A clock whose sleeps return at once, moving its time to the deadline: a schedule of waits
/// runs through in no real time, and the clock's reading tells when each step happened.
final class ImmediateClock: Clock, Sendable {
    typealias Instant = ManualClock.Instant
    private let current = Lock(Duration.zero)

    var now: Instant { Instant(offset: current.withLock { $0 }) }
    var minimumResolution: Duration { .nanoseconds(1) }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        current.withLock { $0 = max($0, deadline.offset) }
    }
}

/// A random source that returns the same value every time.
struct FixedRandom: RandomNumberGenerator {
    let value: UInt64
    mutating func next() -> UInt64 { value }
}

/// SplitMix64: a small seeded generator.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A one-shot gate a task can wait on until the test opens it. Waiting ignores cancellation.
final class Gate: Sendable {
    private let state = Lock<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>(
        (false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A thread-safe flag.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}

extension TempoSnapshot {
    /// The entries of one kind.
    func entries(_ kind: Kind) -> [Entry] { entries.filter { $0.kind == kind } }
}

/// Lets other tasks run for a while; used only to give a wrong outcome a chance to show.
func yieldALot() async {
    for _ in 0..<200 { await Task.yield() }
}
