import Testing

@testable import Tempo

/// The counts a drain reads: operations running, and those of them draining (a drain called
/// from the operation is in progress), which a drain called from an operation does not wait
/// for. Driven by hand, without a clock.
@Suite struct LaunchedWorkDrainingTests {
    @Test func aDrainingOperationStillRunsButIsNotWaitedFor() {
        let work = LaunchedWork()
        let operation = SettleToken(host: nil, work: work)
        let other = SettleToken(host: nil, work: work)
        #expect(work.runningCount == 2 && work.waitedForCount == 2)
        #expect(operation.beginDraining())
        #expect(work.runningCount == 2 && work.waitedForCount == 1)
        #expect(!operation.isFinished)
        operation.endDraining()
        #expect(work.runningCount == 2 && work.waitedForCount == 2)
        operation.finish()
        other.finish()
        #expect(work.runningCount == 0 && work.waitedForCount == 0)
    }

    /// Two drains at once from one operation (child tasks inherit its token): it drains until
    /// the last of them ends.
    @Test func anOperationDrainsUntilItsLastDrainEnds() {
        let work = LaunchedWork()
        let operation = SettleToken(host: nil, work: work)
        #expect(operation.beginDraining())
        #expect(operation.beginDraining())
        #expect(work.runningCount == 1 && work.waitedForCount == 0)
        operation.endDraining()
        #expect(work.runningCount == 1 && work.waitedForCount == 0)
        operation.endDraining()
        #expect(work.runningCount == 1 && work.waitedForCount == 1)
        operation.finish()
        #expect(work.runningCount == 0 && work.waitedForCount == 0)
    }

    /// A drain in a task the operation started, which outlives it: the operation leaves both
    /// counts when it finishes, and the drain's end changes nothing.
    @Test func anOperationThatFinishesWhileDrainingLeavesBothCounts() {
        let work = LaunchedWork()
        let operation = SettleToken(host: nil, work: work)
        let other = SettleToken(host: nil, work: work)
        #expect(operation.beginDraining())
        operation.finish()
        #expect(operation.isFinished)
        #expect(work.runningCount == 1 && work.waitedForCount == 1)
        operation.endDraining()
        #expect(work.runningCount == 1 && work.waitedForCount == 1)
        other.finish()
        #expect(work.runningCount == 0 && work.waitedForCount == 0)
    }

    @Test func aFinishedOperationDoesNotStartDraining() {
        let work = LaunchedWork()
        let operation = SettleToken(host: nil, work: work)
        let other = SettleToken(host: nil, work: work)
        operation.finish()
        #expect(!operation.beginDraining())
        #expect(!operation.beginDraining())
        #expect(work.runningCount == 1 && work.waitedForCount == 1)
        other.finish()
        #expect(work.runningCount == 0 && work.waitedForCount == 0)
    }
}
