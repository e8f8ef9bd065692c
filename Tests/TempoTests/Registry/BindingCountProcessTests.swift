import TempoTesting
import XCTest

@testable import Tempo

/// The process-wide count of live bindings of registries other than `shared` goes back to zero
/// when the last scope (and the last task that inherited it) ends, so the free functions return
/// to their fast path. A count that never went down would lose only that fast path: no answer
/// changes, so no Swift Testing case can see it while the other suites open scopes around it.
///
/// This is an XCTest case for that reason: `swift test` runs XCTest cases in a process of their
/// own, one at a time, apart from the Swift Testing suites, and no other XCTest case opens a
/// scope, so here the count is this case's alone. (Do not add XCTest cases that open scopes.)
final class BindingCountProcessTests: XCTestCase {
    func testTheCountGoesBackToZeroWhenTheLastBindingEnds() async {
        XCTAssertFalse(TempoRegistry.Binding.anyLive, "no scope is open before this case")
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)

        registry.withCurrent { XCTAssertTrue(TempoRegistry.Binding.anyLive) }
        XCTAssertFalse(TempoRegistry.Binding.anyLive, "a synchronous scope ended")

        await registry.withCurrent { await Task.yield() }
        XCTAssertFalse(TempoRegistry.Binding.anyLive, "an async scope ended")

        // A task started in a scope inherits its binding and keeps it until the task ends.
        let (gate, open) = AsyncStream<Void>.makeStream()
        let task = registry.withCurrent { Task { for await _ in gate {} } }
        XCTAssertTrue(TempoRegistry.Binding.anyLive, "the task still holds its binding")
        open.finish()
        await task.value
        let released = await becomesFalse { TempoRegistry.Binding.anyLive }
        XCTAssertTrue(released, "the task ended")

        // An operation a timer of this registry starts runs with a binding of its own.
        let ran = Log<Bool>()
        registry.withCurrent {
            delay(.seconds(1), by: .taskContext) {
                ran.append(TempoRegistry.Binding.anyLive && TempoRegistry.current === registry)
            }
        }
        await clock.advance(by: .seconds(1))
        XCTAssertEqual(ran.all, [true])
        let timerReleased = await becomesFalse { TempoRegistry.Binding.anyLive }
        XCTAssertTrue(timerReleased, "the timer's run ended")

        // Bindings of `shared` are never counted.
        TempoRegistry.shared.withCurrent { XCTAssertFalse(TempoRegistry.Binding.anyLive) }
    }

    /// Polls for about 2 s: a finished task's binding is released as the task is destroyed,
    /// which may come just after `value` returns.
    private func becomesFalse(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<200 {
            if !condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return !condition()
    }
}
