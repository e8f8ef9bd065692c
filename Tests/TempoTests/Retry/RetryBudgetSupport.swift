import Synchronization
import TempoTesting
import Testing

@testable import Tempo

/// Counts the attempts made through a budget, and the retries `onRetry` was told about.
final class BudgetProbe: Sendable {
    private let counts = Lock<(attempts: Int, told: Int)>((0, 0))
    var attempts: Int { counts.withLock { $0.attempts } }
    var told: Int { counts.withLock { $0.told } }

    /// One `retry` call of at most `maxAttempts` attempts that all fail at once (no waits);
    /// returns how many attempts it made. `succeed`: the first attempt succeeds instead.
    @discardableResult
    func call(
        _ budget: RetryBudget, maxAttempts: Int = 2, succeed: Bool = false,
        fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column
    ) async -> Int {
        let made = Lock(0)
        _ = try? await retry(
            maxAttempts, backoff: .constant(.zero),
            onRetry: { _, _, _ in self.counts.withLock { $0.told += 1 } }, budget: budget,
            fileID: fileID, line: line, column: column
        ) {
            made.withLock { $0 += 1 }
            counts.withLock { $0.attempts += 1 }
            if !succeed { throw Boom(attempt: made.withLock { $0 }) }
        }
        return made.withLock { $0 }
    }
}

extension TempoRegistry {
    /// The snapshot row of the budget under `key`: balance, calls and retries, or `nil`.
    func budgetRow(_ key: String) -> (balance: Double, calls: Int, retries: Int)? {
        for entry in snapshot().entries(.retryBudget) where entry.key == key {
            if case .retryBudget(let balance, let calls, let retries) = entry.state {
                return (balance, calls, retries)
            }
        }
        return nil
    }
}
