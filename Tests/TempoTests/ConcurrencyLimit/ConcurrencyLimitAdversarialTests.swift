import Foundation
import TempoTesting
import Testing

@testable import Tempo

// Calls a hostile user makes: an operation that calls its own key, a waiter cancelled as its
// slot is handed to it, plain threads and tasks on one key, and the caller's isolation on the
// manual clock's tracked path.

@Suite struct ConcurrencyLimitAdversarialTests {
    @Test func anOperationThatCallsItsOwnKeyWaitsForItsOwnSlot() async throws {
        try await onManualClock { clock, registry in
            let log = Log<String>()
            let outer = Task {
                try await concurrencyLimit(1, identifier: "api") {
                    // The slot it waits for is its own caller's: only the queue timeout ends it.
                    do {
                        try await concurrencyLimit(1, queueTimeout: .seconds(1), identifier: "api")
                        {
                            log.append("inner ran")
                        }
                    } catch {
                        log.append(at("\(error)", registry))
                    }
                    // Another key nests freely.
                    try await concurrencyLimit(1, identifier: "other") { log.append("other ran") }
                }
            }
            #expect(await awaitCounts(registry, "api", running: 1, queued: 1))
            await clock.advance(by: .seconds(1))
            try await outer.value
            #expect(log.all == ["queueTimedOut(1.0 seconds)@1000", "other ran"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test(arguments: [false, true])
    func aWaiterCancelledAsItsSlotIsHandedToItGivesItOnOnce(manualClock: Bool) async throws {
        // Cancelling the head `w` (limit 1) hands a slot to `b` (limit 2) behind it, within
        // `w.cancel()`; `b` is cancelled right after, before its task resumes: it must give
        // the slot on exactly once. Given twice, `c` and `d` would run beside the holder (three
        // at once); never given, the key would never empty.
        let registry =
            manualClock
            ? TempoRegistry(clock: ManualClock()) : TempoRegistry(clock: ContinuousClock())
        let inFlight = InFlight()
        var admittedThenCancelled = 0
        try await registry.withCurrent {
            for round in 0..<50 {
                let key = "race-\(round)"
                let (gate, open) = AsyncStream<Void>.makeStream()
                let holder = Task {
                    try await concurrencyLimit(1, identifier: key) {
                        inFlight.enter()
                        defer { inFlight.leave() }
                        for await _ in gate {}
                    }
                }
                #expect(await awaitCounts(registry, key, running: 1, queued: 0))
                let ran = Log<String>()
                var waiters: [Task<Void, any Error>] = []
                for (index, (label, limit)) in [("w", 1), ("b", 2), ("c", 2), ("d", 2)].enumerated()
                {
                    waiters.append(
                        Task {
                            try await concurrencyLimit(limit, identifier: key) {
                                ran.append(label)
                                inFlight.enter()
                                defer { inFlight.leave() }
                                for _ in 0..<20 { await Task.yield() }
                            }
                        })
                    #expect(await awaitCounts(registry, key, running: 1, queued: index + 1))
                }
                waiters[0].cancel()
                waiters[1].cancel()
                // `c` runs beside the holder; `d` waits for the holder's slot.
                #expect(await eventually { ran.all.contains("c") })
                #expect((limitCounts(registry, key)?.running ?? 0) <= 2)
                open.finish()
                try await holder.value
                // A slot that leaked would hold the last waiter forever: look, then let go.
                let emptied = await eventually { limitCounts(registry, key) == nil }
                #expect(
                    emptied, "round \(round): \(String(describing: limitCounts(registry, key)))")
                if !emptied { for waiter in waiters { waiter.cancel() } }
                #expect(await thrown(waiters[0]) is CancellationError)
                let bOutcome = await thrown(waiters[1])
                if bOutcome is CancellationError, !ran.all.contains("b") {
                    admittedThenCancelled += 1
                }
                for waiter in waiters.dropFirst(2) { #expect(await thrown(waiter) == nil) }
                if !emptied { break }
            }
        }
        #expect(inFlight.peak <= 2)
        #expect(registry.liveKeyCount == 0)
        // Most rounds cancel `b` before its task resumes (the path under test).
        #expect(admittedThenCancelled > 0)
    }

    @Test func realClockTasksAndPlainThreadsNeverRunMoreThanTheLimit() async {
        // More threads than cores: 16 tasks and 8 plain threads call through one key, the
        // threads also reading the snapshot and resetting the key now and then.
        let registry = TempoRegistry(clock: ContinuousClock())
        let inFlight = InFlight()
        let tally = Log<String>()
        let seenRunning = Lock(0)
        let limit = 3
        let key = "hammer"
        @Sendable func call(_ index: Int) async {
            do {
                try await concurrencyLimit(
                    limit, queue: index % 5 == 0 ? 2 : .max,
                    queueTimeout: index % 7 == 0 ? .microseconds(200) : nil, identifier: key
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
                case .reset: tally.append("reset")
                default: tally.append("\(error)")
                }
            } catch is CancellationError {
                tally.append("cancelled")
            } catch {
                tally.append("\(error)")
            }
        }
        let threadsDone = DispatchGroup()
        for thread in 0..<8 {
            threadsDone.enter()
            let worker = Thread {
                let calls = DispatchGroup()
                for index in 0..<250 {
                    calls.enter()
                    let task = Task.detached {
                        await registry.withCurrent { await call(thread * 250 + index) }
                        calls.leave()
                    }
                    if index % 17 == 0 { task.cancel() }
                    if index % 29 == 0 { registry.resetConcurrencyLimit(identifier: key) }
                    if let counts = limitCounts(registry, key) {
                        seenRunning.withLock { $0 = max($0, counts.running) }
                    }
                }
                calls.wait()
                threadsDone.leave()
            }
            worker.start()
        }
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    await registry.withCurrent {
                        for index in 0..<250 { await call(2_000 + task * 250 + index) }
                    }
                }
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                threadsDone.wait()
                continuation.resume()
            }
        }
        #expect(inFlight.peak <= limit)
        #expect(inFlight.peak >= 1)
        #expect(seenRunning.withLock { $0 } <= limit)
        let outcomes = tally.all
        #expect(outcomes.count == 6_000)
        #expect(
            outcomes.allSatisfy { ["ran", "full", "timedOut", "reset", "cancelled"].contains($0) })
        #expect(outcomes.contains("ran"))
        #expect(registry.liveKeyCount == 0)
    }

    @MainActor @Test func onAManualClockAQueuedCallRunsOnTheCallersActor() async throws {
        @MainActor final class Model { var count = 0 }
        let model = Model()
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let holder = Task.detached {
            try await registry.withCurrent {
                try await concurrencyLimit(1, identifier: "api") {
                    try await clock.sleep(for: .seconds(1))
                }
            }
        }
        #expect(await awaitCounts(registry, "api", running: 1, queued: 0))
        let queued = Task { @MainActor in
            try await registry.withCurrent {
                // Admitted by the holder's release, and run under a work token of the clock.
                try await concurrencyLimit(1, identifier: "api") {
                    MainActor.assertIsolated()
                    model.count += 1  // main-actor state, touched without a hop
                }
            }
        }
        #expect(await awaitCounts(registry, "api", running: 1, queued: 1))
        await clock.advance(by: .seconds(1))
        try await holder.value
        try await queued.value
        #expect(model.count == 1)
        #expect(registry.liveKeyCount == 0)
    }
}
