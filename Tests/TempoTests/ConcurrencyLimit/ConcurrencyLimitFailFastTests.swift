import Tempo
import TempoTesting
import Testing

/// Faults that used to show only as a suite that hangs until its time limit: each test here
/// fails within seconds instead.
@Suite struct ConcurrencyLimitFailFastTests {
    /// A waiter whose queue timeout came due is told so: its call throws, and the advance that
    /// reached the timeout returns.
    @Test func aTimedOutWaiterIsToldWithinTheAdvance() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let outcome = Log<String>()
        let holder = Task {
            try await registry.withCurrent {
                try await concurrencyLimit(1, identifier: "k") {
                    try await clock.sleep(for: .seconds(10))
                }
            }
        }
        await clock.waitForSleepers(1)
        let waiter = Task {
            do {
                try await registry.withCurrent {
                    try await concurrencyLimit(1, queueTimeout: .seconds(1), identifier: "k") {}
                }
                outcome.append("ran")
            } catch {
                outcome.append("\(error)")
            }
        }
        #expect(await awaitCounts(registry, "k", running: 1, queued: 1))
        #expect(await finishes { await clock.advance(by: .seconds(1)) })
        #expect(await eventually { outcome.count == 1 })
        #expect(outcome.all == ["\(ConcurrencyLimitError.queueTimedOut(.seconds(1)))"])
        #expect(limitCounts(registry, "k")! == (1, 0))
        waiter.cancel()
        holder.cancel()
        _ = await holder.result
    }

    /// A waiter admitted by a release and cancelled before it resumed gives its slot back: the
    /// key ends up idle, and the next call runs at once. Independent of the random schedules
    /// of `ConcurrencyLimitAdversarialTests`: the holder cancels the waiter on the main actor
    /// right after its release admitted it, before the waiter (also on the main actor) resumes.
    @Test @MainActor func anAdmittedWaiterCancelledBeforeItResumesGivesTheSlotBack() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let ran = Log<String>()
        let waiterBox = WaiterBox()
        let holder = Task { @MainActor in
            try await registry.withCurrent {
                try await concurrencyLimit(1, identifier: "k") {
                    try await clock.sleep(for: .seconds(1))
                }
            }
            // The release just admitted the waiter; it has not run yet.
            waiterBox.task?.cancel()
        }
        await clock.waitForSleepers(1)
        let waiter = Task { @MainActor in
            try await registry.withCurrent {
                try await concurrencyLimit(1, identifier: "k") { ran.append("waiter") }
            }
        }
        waiterBox.task = waiter
        #expect(await awaitCounts(registry, "k", running: 1, queued: 1))
        #expect(await finishes { await clock.advance(by: .seconds(1)) })
        try? await holder.value
        #expect(await thrown(waiter) is CancellationError)
        #expect(ran.all.isEmpty)
        // The slot came back: nothing runs or waits, and a new call runs at once.
        #expect(await awaitCounts(registry, "k", running: 0, queued: 0))
        let next = Task {
            try await registry.withCurrent {
                try await concurrencyLimit(1, queueTimeout: .zero, identifier: "k") {
                    ran.append("next")
                }
            }
        }
        #expect(await thrown(next) == nil)
        #expect(ran.all == ["next"])
    }
}

/// The waiter task, handed to the holder that cancels it.
@MainActor private final class WaiterBox {
    var task: Task<Void, any Error>?
}
