import Tempo
import TempoTesting
import Testing

/// Drains called from inside operations the registry runs (issue 39, item 8): an operation that
/// drains counts as draining while its drain lasts, and a drain called from an operation waits
/// for no draining operation, so drains in several operations do not wait for each other; a
/// drain called from elsewhere waits for them all. On the manual clock: a drain that would wait
/// for ever fails the test within `failFastLimit`.
@Suite struct DrainsInOperationsTests {
    /// "other": flushed by the first drain, asleep on the clock for a second.
    private func sleepOneSecond(_ clock: ManualClock) {
        debounce(.seconds(1), identifier: "other", by: .taskContext) { () async throws in
            try await clock.sleep(for: .seconds(1))
        }
    }

    @Test(arguments: [2, 3])
    func drainsInSeveralOperationsReturnOnceEverythingElseIsDone(count: Int) async throws {
        let reports = Log<DrainReport>()
        try await onManualClock { clock, registry in
            sleepOneSecond(clock)
            for _ in 1...count {
                delay(.milliseconds(500), by: .mainActor) { reports.append(await registry.drain()) }
            }
            await clock.advance(by: .milliseconds(500))
            // Each drain waits for "other", and for no operation that drains.
            #expect(reports.all.isEmpty)
            await clock.advance(by: .seconds(1))
            try #require(await eventually(within: failFastLimit) { reports.count == count })
            for report in reports.all {
                #expect(report.isComplete)
                #expect(report.runningOperations == 0)
                #expect(report.pending.isEmpty)
                #expect(report.startedAt == .milliseconds(500))
                #expect(report.endedAt == .milliseconds(1_500))
                #expect("\(report)" == "drain complete after 1.000 s")
            }
            #expect(await finishes { _ = await registry.drain() })
        }
    }

    @Test func drainsInOperationsWithNothingElseLeftReturnAtOnce() async throws {
        let reports = Log<DrainReport>()
        try await onManualClock { clock, registry in
            for _ in 1...2 {
                delay(.milliseconds(500), by: .mainActor) { reports.append(await registry.drain()) }
            }
            await clock.advance(by: .milliseconds(500))
            try #require(await eventually(within: failFastLimit) { reports.count == 2 })
            #expect(reports.all.allSatisfy { $0.isComplete && $0.endedAt == .milliseconds(500) })
        }
    }

    @Test func aDrainWithALimitAndOneWithoutInTwoOperations() async throws {
        let limited = Log<DrainReport>()
        let unlimited = Log<DrainReport>()
        try await onManualClock { clock, registry in
            // Flushed at 500 ms, asleep until 5.5 s.
            debounce(.seconds(1), identifier: "slow", by: .taskContext) { () async throws in
                try await clock.sleep(for: .seconds(5))
            }
            delay(.milliseconds(500), by: .mainActor) { () async throws in
                limited.append(await registry.drain(within: .seconds(2)))
                // Running, and no longer draining: the other drain waits for this too.
                try await clock.sleep(for: .seconds(7))
            }
            delay(.milliseconds(500), by: .mainActor) { unlimited.append(await registry.drain()) }
            await clock.advance(by: .milliseconds(2_500))
            try #require(await eventually(within: failFastLimit) { limited.count == 1 })
            let report = try #require(limited.all.first)
            #expect(!report.isComplete)
            #expect(!report.wasCancelled)
            // "slow": not the operation the drain runs in, nor the other draining one.
            #expect(report.runningOperations == 1)
            #expect(report.pending.isEmpty)
            #expect(report.endedAt == .milliseconds(2_500))
            #expect(
                "\(report)"
                    == "drain stopped at its time limit after 2.000 s: 1 operation still running")
            // The snapshot counts every operation still running, draining ones included.
            #expect(report.snapshot.runningOperations == 3)
            #expect(report.snapshot.isDraining)
            await clock.advance(by: .seconds(3))  // 5.5 s: "slow" ends
            #expect(unlimited.all.isEmpty)
            await clock.advance(by: .milliseconds(4_000))  // 9.5 s: the limited one's ends
            try #require(await eventually(within: failFastLimit) { unlimited.count == 1 })
            let other = try #require(unlimited.all.first)
            #expect(other.isComplete)
            #expect(other.runningOperations == 0)
            #expect(other.endedAt == .milliseconds(9_500))
        }
    }

    @Test func aDrainInsideAnOperationThatTimesOutDoesNotCountItsOwnOperation() async throws {
        let reports = Log<DrainReport>()
        try await onManualClock { clock, registry in
            delay(.milliseconds(500), by: .mainActor) { () async throws in
                try await clock.sleep(for: .seconds(10))
            }
            delay(.milliseconds(500), by: .mainActor) {
                reports.append(await registry.drain(within: .seconds(1)))
            }
            await clock.advance(by: .milliseconds(1_500))
            try #require(await eventually(within: failFastLimit) { reports.count == 1 })
            let report = try #require(reports.all.first)
            #expect(!report.isComplete)
            #expect(report.runningOperations == 1)
            #expect("\(report)".hasSuffix(": 1 operation still running"))
            #expect(report.snapshot.runningOperations == 2)
            await clock.advance(by: .seconds(9))
        }
    }

    /// An outer drain (from the test's task) runs an operation that drains, whose drain runs
    /// another operation that drains: the inner two wait for "other" and not for each other,
    /// and the outer one, which no operation waits for, waits for all of them to finish.
    @Test func nestedDrainsEachReturn() async throws {
        let log = Log<String>()
        let reports = Log<DrainReport>()
        try await onManualClock { clock, registry in
            sleepOneSecond(clock)
            debounce(.seconds(1), identifier: "outer", by: .mainActor) {
                // Made during a drain: runs at once.
                debounce(.seconds(1), identifier: "inner", by: .mainActor) {
                    let report = await registry.drain()
                    log.mark("inner drained \(report.isComplete)", registry)
                }
                let report = await registry.drain()
                log.mark("outer drained \(report.isComplete)", registry)
            }
            _ = await clock.start { reports.append(await registry.drain()) }
            #expect(log.all.isEmpty)
            await clock.advance(by: .seconds(1))
            try #require(await eventually(within: failFastLimit) { reports.count == 1 })
            #expect(
                log.all.sorted() == ["inner drained true@1000", "outer drained true@1000"])
            let report = try #require(reports.all.first)
            #expect(report.isComplete)
            #expect(report.endedAt == .seconds(1))
            #expect(registry.snapshot().runningOperations == 0)
        }
    }

    @Test func aDrainFromOutsideWaitsForAnOperationThatDrains() async throws {
        let reports = Log<DrainReport>()
        try await onManualClock { clock, registry in
            delay(.milliseconds(500), by: .mainActor) { () async throws in
                _ = await registry.drain()
                try await clock.sleep(for: .seconds(1))
            }
            await clock.advance(by: .milliseconds(500))  // it drained at once, and sleeps
            _ = await clock.start { reports.append(await registry.drain()) }
            #expect(reports.all.isEmpty)
            await clock.advance(by: .seconds(1))
            try #require(await eventually(within: failFastLimit) { reports.count == 1 })
            #expect(reports.all.first?.endedAt == .milliseconds(1_500))
        }
    }

    @Test func aDrainFromOutsideCountsDrainingOperationsAsRunning() async throws {
        try await onManualClock { clock, registry in
            delay(.milliseconds(500), by: .mainActor) { () async throws in
                try await clock.sleep(for: .seconds(3))
            }
            // Drains until the sleeper ends, or for a second.
            delay(.milliseconds(500), by: .mainActor) {
                _ = await registry.drain(within: .seconds(1))
            }
            await clock.advance(by: .milliseconds(500))
            let outside = await clock.start { await registry.drain(within: .milliseconds(500)) }
            await clock.advance(by: .milliseconds(500))
            let report = try await outside.outcome()
            #expect(!report.isComplete)
            #expect(report.runningOperations == 2)
            await clock.advance(by: .seconds(3))
        }
    }

    /// An operation of one registry that drains another is not draining in its own registry:
    /// a drain there in another operation waits for it.
    @Test func aDrainOfAnotherRegistryLeavesItsOperationWaitedFor() async throws {
        let reports = Log<DrainReport>()
        try await onManualClock { clock, registry in
            let elsewhere = TempoRegistry(clock: clock)
            _ = elsewhere.withCurrent {
                delay(.milliseconds(500), by: .mainActor) { () async throws in
                    try await clock.sleep(for: .seconds(2))
                }
            }
            delay(.milliseconds(500), by: .mainActor) { _ = await elsewhere.drain() }
            delay(.milliseconds(500), by: .mainActor) { reports.append(await registry.drain()) }
            await clock.advance(by: .milliseconds(500))
            #expect(reports.all.isEmpty)
            await clock.advance(by: .seconds(2))
            try #require(await eventually(within: failFastLimit) { reports.count == 1 })
            #expect(reports.all.first?.isComplete == true)
            #expect(reports.all.first?.endedAt == .milliseconds(2_500))
        }
    }
}
