import TempoTesting
import Testing

@testable import Tempo

/// `repeat`'s tick on the manual clock: a tick that fired before the loop waited for it is
/// used once, and the next wait waits for the next tick.
@Suite struct TickWaiterTests {
    @Test func aTickThatFiredBeforeTheWaitIsUsedOnlyOnce() async throws {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let ticks = TickWaiter(registry.clock)
        ticks.arm(at: .seconds(1))
        // The advance fires the tick before anyone waits; it then waits for the tick's work.
        let advancing = Task { await clock.advance(by: .seconds(1)) }
        #expect(await settled { clock.sleeperCount == 0 })
        await yieldALot()
        let first = try await ticks.wait()
        first?.finish()
        #expect(await finishes { await advancing.value })

        ticks.arm(at: .seconds(2))
        let wokeAt = Log<Duration>()
        let waiter = Task {
            let token = try await ticks.wait()
            wokeAt.append(clock.now.offset)
            token?.finish()
        }
        await yieldALot()  // a wait that wrongly returns at once does so here
        #expect(await finishes { await clock.advance(by: .seconds(1)) })
        #expect(await finishes { _ = try? await waiter.value })
        #expect(wokeAt.all == [.seconds(2)])
    }
}
