import Synchronization
import Tempo
import TempoTesting
import Testing

@Suite struct TimeoutTests {
    @Test func returnsTheValueWhenTheOperationFinishesFirst() async throws {
        try await onManualClock { clock, registry in
            let task = Task {
                try await timeout(.seconds(1)) {
                    try await clock.sleep(for: .milliseconds(400))
                    return "page"
                }
            }
            await clock.waitForSleepers(2)  // the operation and the deadline
            await clock.advance(by: .milliseconds(400))
            let value = try await task.value
            #expect(value == "page")
            #expect(clock.sleeperCount == 0)
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func rethrowsTheOperationsError() async {
        await onManualClock { clock, _ in
            let task = Task {
                try await timeout(.seconds(1)) {
                    try await clock.sleep(for: .milliseconds(10))
                    throw Boom(attempt: 7)
                }
            }
            await clock.waitForSleepers(2)
            await clock.advance(by: .milliseconds(10))
            await #expect(throws: Boom(attempt: 7)) { try await task.value }
        }
    }

    @Test func throwsTimedOutWithTheDurationAndCancelsTheOperation() async {
        await onManualClock { clock, _ in
            let sawCancellation = Flag()
            let task = Task {
                try await timeout(.milliseconds(750)) {
                    do {
                        try await clock.sleep(for: .seconds(5))
                    } catch {
                        sawCancellation.set()
                        throw error
                    }
                    return 1
                }
            }
            await clock.waitForSleepers(2)
            await clock.advance(by: .milliseconds(749))
            #expect(!sawCancellation.isSet)
            await clock.advance(by: .milliseconds(1))
            await #expect(throws: TimeoutError.timedOut(.milliseconds(750))) {
                try await task.value
            }
            #expect(sawCancellation.isSet)
        }
    }

    @Test func anOperationThatIgnoresCancellationStillEndsInTimedOutAndItsResultIsDropped() async {
        await onManualClock { clock, registry in
            let gate = Gate()
            let finished = Flag()
            let task = Task {
                defer { finished.set() }
                return try await timeout(.seconds(1)) {
                    await gate.wait()  // ignores cancellation
                    return "late"
                }
            }
            await clock.waitForSleepers(1)
            await clock.advance(by: .seconds(1))
            await yieldALot()
            #expect(!finished.isSet)  // timeout waits for the operation to unwind
            #expect(registry.snapshot().entries(.timeout).count == 1)
            gate.open()
            await #expect(throws: TimeoutError.timedOut(.seconds(1))) { try await task.value }
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(-3), .seconds(Int64.min)])
    func zeroOrNegativeThrowsAtOnceWithoutRunning(_ duration: Duration) async {
        let ran = Flag()
        await #expect(throws: TimeoutError.timedOut(duration)) {
            try await timeout(duration) { ran.set() }
        }
        #expect(!ran.isSet)
    }

    @Test func cancellingTheCallerThrowsCancellationError() async {
        await onManualClock { clock, registry in
            let task = Task {
                try await timeout(.seconds(10)) {
                    try await clock.sleep(for: .seconds(5))
                    return 1
                }
            }
            await clock.waitForSleepers(2)
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func cancellingTheCallerWhileTheOperationIgnoresItStillThrowsCancellationError() async {
        await onManualClock { clock, _ in
            let gate = Gate()
            let task = Task {
                try await timeout(.seconds(10)) {
                    await gate.wait()
                    return 1
                }
            }
            await clock.waitForSleepers(1)
            task.cancel()
            gate.open()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }

    @Test func aValueThatArrivesAfterTheCallerWasCancelledIsDiscarded() async {
        let handle = Lock<Task<Int, any Error>?>(nil)
        let gate = Gate()
        let task = Task {
            await gate.wait()
            return try await timeout(.seconds(10)) {
                handle.withLock { $0 }?.cancel()  // the caller is cancelled...
                return 1  // ...and the value comes anyway
            }
        }
        handle.withLock { $0 = task }
        gate.open()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func anAlreadyCancelledCallerDoesNotRunTheOperation() async {
        let ran = Flag()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await timeout(.seconds(1)) { ran.set() }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!ran.isSet)
    }

    @Test func hugeDurationNeitherTrapsNorHangsACancelledCaller() async throws {
        try await onManualClock { clock, registry in
            let quick = try await timeout(.seconds(Int64.max)) { 5 }
            #expect(quick == 5)
            let task = Task {
                try await timeout(.seconds(Int64.max)) {
                    try await clock.sleep(for: .seconds(Int64.max))
                }
            }
            await clock.waitForSleepers(2)
            await clock.advance(by: .seconds(86_400 * 30))
            let entry = registry.snapshot().entries(.timeout).first
            #expect(entry?.state == .timeout(deadline: .seconds(Int64.max)))
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }

    @Test func realClockHugeDurationIsCancellable() async {
        // Real clock: the deadline child sleeps on ContinuousClock in bounded steps.
        let started = Flag()
        let task = Task {
            try await timeout(.seconds(Int64.max)) {
                started.set()
                try await Task.sleep(for: .seconds(3_600))
            }
        }
        while !started.isSet { await Task.yield() }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func snapshotShowsTheDeadlineWhileLive() async throws {
        try await onManualClock { clock, registry in
            await clock.advance(by: .seconds(2))
            let task = Task {
                try await timeout(.milliseconds(500)) {
                    try await clock.sleep(for: .milliseconds(100))
                }
            }
            await clock.waitForSleepers(2)
            let entries = registry.snapshot().entries(.timeout)
            #expect(entries.count == 1)
            #expect(entries.first?.key.hasPrefix("TempoTests/TimeoutTests.swift:") == true)
            #expect(entries.first?.state == .timeout(deadline: .milliseconds(2_500)))
            await clock.advance(by: .milliseconds(100))
            try await task.value
            #expect(registry.snapshot().isEmpty)
        }
    }

    @Test func deadlineFormThrowsWithTheTimeFromTheCallToTheDeadline() async {
        let clock = ManualClock()
        await clock.advance(by: .seconds(10))
        let deadline = clock.now.advanced(by: .seconds(2))
        let task = Task {
            try await timeout(at: deadline, clock: clock) {
                try await clock.sleep(for: .seconds(60))
            }
        }
        await clock.waitForSleepers(2)
        await clock.advance(by: .seconds(2))
        await #expect(throws: TimeoutError.timedOut(.seconds(2))) { try await task.value }
    }

    @Test func deadlineFormReturnsBeforeTheDeadline() async throws {
        let clock = ManualClock()
        let task = Task {
            try await timeout(at: clock.now.advanced(by: .seconds(2)), clock: clock) {
                try await clock.sleep(for: .seconds(1))
                return "in time"
            }
        }
        await clock.waitForSleepers(2)
        await clock.advance(by: .seconds(1))
        let value = try await task.value
        #expect(value == "in time")
    }

    @Test func aDeadlineAlreadyPassedThrowsAtOnceWithoutRunning() async {
        let clock = ManualClock()
        await clock.advance(by: .seconds(5))
        let ran = Flag()
        await #expect(throws: TimeoutError.timedOut(.seconds(-1))) {
            try await timeout(at: clock.now.advanced(by: .seconds(-1)), clock: clock) { ran.set() }
        }
        await #expect(throws: TimeoutError.timedOut(.zero)) {
            try await timeout(at: clock.now, clock: clock) { ran.set() }
        }
        #expect(!ran.isSet)
    }

    @Test func deadlineFormDefaultsToContinuousClock() async throws {
        // Real clock, no waiting: the operation returns at once.
        let value = try await timeout(at: .now.advanced(by: .seconds(30))) { 11 }
        #expect(value == 11)
    }

    @Test func explicitClockOverload() async {
        let clock = ManualClock()
        let task = Task {
            try await timeout(.seconds(3), clock: clock) {
                try await clock.sleep(for: .seconds(4))
            }
        }
        await clock.waitForSleepers(2)
        await clock.advance(by: .seconds(3))
        await #expect(throws: TimeoutError.timedOut(.seconds(3))) { try await task.value }
    }
}
