import Synchronization
import Tempo
import TempoTesting

/// A thread-safe log of what ran, for tests.
final class Log<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}

/// A registry on a fresh manual clock, made current for `body`.
func onManualClock(
    _ body: (ManualClock, TempoRegistry) async throws -> Void
) async rethrows {
    let clock = ManualClock()
    let registry = TempoRegistry(clock: clock)
    try await registry.withCurrent { try await body(clock, registry) }
}
