import TempoTesting
import Testing

@testable import Tempo

/// A ticket's work token: whatever happens to a granted ticket, its token is finished, so
/// `ManualClock.advance` never waits for work that will not run. A broken build fails here in
/// seconds instead of hanging the suite.
@Suite struct TicketSettleTests {
    @Test func aGrantedTicketCancelledBeforeItStartsFinishesItsToken() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let token = registry.clock.settleToken()
        let ticket = Ticket()
        ticket.grant(token)
        ticket.cancel()
        #expect(ticket.start() == nil)
        #expect(token?.isFinished == true)
        #expect(await finishes { await clock.advance(by: .seconds(1)) })
    }

    @Test func aGrantedTicketClosedByTheEngineFinishesItsToken() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let token = registry.clock.settleToken()
        let ticket = Ticket()
        ticket.grant(token)
        ticket.close()
        #expect(token?.isFinished == true)
        #expect(await finishes { await clock.advance(by: .seconds(1)) })
    }

    @Test func aGrantToAClosedTicketFinishesItsToken() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let ticket = Ticket()
        ticket.cancel()
        let token = registry.clock.settleToken()
        ticket.grant(token)  // the engine granted it as the task was being cancelled
        #expect(ticket.start() == nil)
        #expect(token?.isFinished == true)
        #expect(await finishes { await clock.advance(by: .seconds(1)) })
    }

    @Test func aStartedTicketFinishesItsTokenWhenTheOperationEnds() async {
        let ran = Log<String>()
        await onManualClock { clock, _ in
            let throttler = Throttler(.seconds(1), by: .ownedActor)
            let task: Task<Void, Never> = throttler {
                ran.append("started")
                try await clock.sleep(for: .milliseconds(500))
                ran.append("finished")
            }
            #expect(await finishes { await clock.advance(by: .milliseconds(500)) })
            #expect(await finishes { await task.value })
            #expect(ran.all == ["started", "finished"])
        }
    }
}
