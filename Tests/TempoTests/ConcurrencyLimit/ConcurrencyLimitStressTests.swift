import Testing

@testable import Tempo

// Many tasks on the real clock, on every thread of the pool, through one key: the running count
// never exceeds the limit, every call ends one way or another, and the key leaves the registry.
// Run under ThreadSanitizer too (`swift test --sanitize=thread --filter ConcurrencyLimit`).

@Suite struct ConcurrencyLimitStressTests {
    @Test func realClockTasksNeverRunMoreThanTheLimit() async {
        let registry = TempoRegistry(clock: ContinuousClock())
        let inFlight = InFlight()
        let tally = Log<String>()
        let limit = 3
        await registry.withCurrent {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<600 {
                    group.addTask {
                        do {
                            try await concurrencyLimit(
                                limit, queue: index % 5 == 0 ? 4 : .max,
                                queueTimeout: index % 7 == 0 ? .milliseconds(1) : nil,
                                identifier: "stress"
                            ) {
                                inFlight.enter()
                                defer { inFlight.leave() }
                                await Task.yield()
                                if index % 11 == 0 { throw Boom(attempt: index) }
                            }
                            tally.append("ran")
                        } catch is Boom {
                            tally.append("ran")
                        } catch let error as ConcurrencyLimitError {
                            switch error {
                            case .queueFull: tally.append("full")
                            case .queueTimedOut: tally.append("timedOut")
                            default: tally.append("\(error)")
                            }
                        } catch {
                            tally.append("\(error)")
                        }
                    }
                    // Some callers give up while they wait.
                    if index % 13 == 0 {
                        let doomed = Task {
                            try await concurrencyLimit(limit, identifier: "stress") {
                                inFlight.enter()
                                inFlight.leave()
                            }
                        }
                        doomed.cancel()
                        group.addTask { _ = await thrown(doomed) }
                    }
                }
            }
        }
        #expect(inFlight.peak <= limit)
        #expect(inFlight.peak >= 1)
        let outcomes = tally.all
        #expect(outcomes.count == 600)
        #expect(outcomes.allSatisfy { ["ran", "full", "timedOut"].contains($0) })
        #expect(outcomes.filter { $0 == "ran" }.count >= 300)
        #expect(registry.liveKeyCount == 0)
        #expect(registry.limitTablesCheck.broken == nil)
    }
}
