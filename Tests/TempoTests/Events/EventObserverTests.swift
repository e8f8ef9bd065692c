import Foundation
import Synchronization
import TempoTesting
import Testing

@testable import Tempo

// What an observer is promised: it never runs under the engine's locks, never holds a helper
// up, cannot change an outcome by throwing, loses nothing below its buffer limit, and stops
// when cancelled.

@Suite struct EventObserverTests {
    static let limit = RateLimit(1, per: .seconds(3_600))

    /// Makes `count` calls of the rate limit `key`, which admits one call an hour; returns how
    /// many it refused (all but the first call of a fresh key).
    static func refusals(_ count: Int, key: String) -> Int {
        var refused = 0
        for _ in 0..<count {
            do { try takeRatePermit(limit, identifier: key) } catch { refused += 1 }
        }
        return refused
    }

    @Test func anAdvanceReturnsOnceTheEventsOfTheTimersItFiredAreHandled() async throws {
        try await onManualClock { clock, registry async throws in
            let seen = Log<String>()
            // A slow handler (a second): were the delivery no work of the clock, the advance
            // would return long before it has run, however loaded the machine.
            registry.observe { event in
                usleep(1_000_000)
                seen.append("\(event.decision)")
            }
            let call = await clock.start {
                try await timeout(.seconds(1)) { try await clock.sleep(for: .seconds(2)) }
            }
            await clock.advance(by: .seconds(1))
            // No `waitUntilDelivered`: the advance waited for the delivery.
            #expect(seen.all == ["timed out after 1.0 seconds"])
            await #expect(throws: TimeoutError.self) { try await call.value() }
        }
    }

    @Test func everyObserverGetsEveryEventAndACancelledOneNoMore() async throws {
        try await onManualClock { clock, registry async throws in
            let first = EventLog(registry)
            let second = EventLog(registry)
            #expect(Self.refusals(3, key: "a") == 2)
            second.observer.cancel()
            second.observer.cancel()  // again: nothing
            #expect(Self.refusals(1, key: "a") == 1)
            #expect(await first.all().count == 3)
            #expect(await second.all().count == 2)
            first.observer.cancel()
            #expect(Self.refusals(1, key: "a") == 1)
            #expect(await first.all().count == 3)
            #expect(!registry.events.isObserved)
        }
    }

    @Test func anObserverStartedLaterSeesOnlyLaterDecisions() async throws {
        try await onManualClock { clock, registry async throws in
            #expect(Self.refusals(3, key: "a") == 2)
            let events = EventLog(registry)
            #expect(Self.refusals(1, key: "a") == 1)
            #expect(await events.all().count == 1)
        }
    }

    @Test func aThrowingObserverIsCountedAndChangesNoOutcome() async throws {
        try await onManualClock { clock, registry async throws in
            let seen = Atomic<Int>(0)
            let observer = registry.observe { _ in
                seen.add(1, ordering: .relaxed)
                throw Refused()
            }
            #expect(Self.refusals(6, key: "a") == 5)
            await observer.waitUntilDelivered()
            #expect(seen.load(ordering: .relaxed) == 5)
            #expect(observer.failureCount == 5)
            #expect(observer.droppedCount == 0)
        }
    }

    @Test func anObserverMayCallTheRegistryOnTheKeyItIsToldAbout() async throws {
        // It never runs under a shard's lock: calling back into the same key cannot deadlock.
        try await onManualClock { clock, registry async throws in
            let rows = Log<Int>()
            let observer = registry.observe { event in
                rows.append(registry.snapshot().entries.filter { $0.key == event.key }.count)
                registry.resetRateLimit(identifier: event.key)
            }
            #expect(Self.refusals(2, key: "a") == 1)
            await observer.waitUntilDelivered()
            #expect(rows.all == [1])
            try takeRatePermit(Self.limit, identifier: "a")  // the observer's reset filled it
        }
    }

    @Test func realClockABlockedObserverHoldsNoHelperUpAndDropsPastItsBuffer() async throws {
        // A real-clock registry: on a manual clock an advance would wait for the observer.
        let registry = TempoRegistry(clock: ContinuousClock())
        let gate = DispatchSemaphore(value: 0)
        let entered = Atomic<Int>(0)
        let observer = registry.observe(bufferLimit: 3) { _ in
            entered.add(1, ordering: .relaxed)
            gate.wait()
        }
        #expect(registry.withCurrent { Self.refusals(2, key: "a") } == 1)
        #expect(await eventually { entered.load(ordering: .relaxed) == 1 })
        // Every call returns while the observer is blocked on the first event: three wait in
        // its buffer, and the other five are dropped.
        #expect(registry.withCurrent { Self.refusals(8, key: "a") } == 8)
        #expect(observer.droppedCount == 5)
        for _ in 0..<4 { gate.signal() }
        await observer.waitUntilDelivered()
        #expect(entered.load(ordering: .relaxed) == 4)
        #expect(observer.droppedCount == 5)
    }

    @Test func realClockHandlersThatBlockHoldUpNoCaller() async throws {
        // More blocked handlers than cores: were they run in tasks, they would hold every
        // thread Swift's tasks share, and the rate limit's timer (and this test) could not run.
        let registry = TempoRegistry(clock: ContinuousClock())
        let gate = DispatchSemaphore(value: 0)
        let blockers = ProcessInfo.processInfo.activeProcessorCount + 1
        let entered = Atomic<Int>(0)
        let released = Atomic<Bool>(false)
        let observers = (0..<blockers).map { _ in
            registry.observe { _ in
                // Each handler blocks on its first event (the refusal below), then no more.
                if entered.add(1, ordering: .relaxed).newValue <= blockers { gate.wait() }
            }
        }
        // On a thread of its own, a watchdog lets the handlers go after 60 s whatever happens:
        // an observer that held the engine up fails this test instead of hanging the suite.
        Thread.detachNewThread {
            sleep(60)
            if !released.exchange(true, ordering: .relaxed) {
                for _ in 0..<blockers { gate.signal() }
            }
        }
        #expect(registry.withCurrent { EventObserverTests.refusals(2, key: "a") } == 1)
        _ = await eventually(within: .seconds(5)) { entered.load(ordering: .relaxed) >= blockers }
        let start = ContinuousClock.now
        let fast = RateLimit(1, per: .milliseconds(20))
        try await registry.withCurrent { () async throws in
            try await rateLimit(fast, identifier: "w") {}
            try await rateLimit(fast, identifier: "w") {}  // waits for the limit's timer
        }
        let elapsed = ContinuousClock.now - start
        let beforeTheWatchdog = !released.exchange(true, ordering: .relaxed)
        if beforeTheWatchdog { for _ in 0..<blockers { gate.signal() } }
        #expect(entered.load(ordering: .relaxed) >= blockers)
        #expect(beforeTheWatchdog, "the calls went on only once the watchdog let the handlers go")
        #expect(elapsed < .seconds(30), "\(elapsed)")
        for observer in observers { await observer.waitUntilDelivered() }
    }

    @Test func aBufferLimitBelowOneCountsAsOne() async throws {
        try await onManualClock { clock, registry async throws in
            let events = EventLog(registry, bufferLimit: -5)
            #expect(Self.refusals(2, key: "a") == 1)
            #expect(await events.all().count == 1)
        }
    }

    @Test func realClockManyThreadsLoseNoEventBelowTheBuffer() async throws {
        let registry = TempoRegistry(clock: ContinuousClock())
        let counted = Atomic<Int>(0)
        let observer = registry.observe(bufferLimit: 1_000_000) { _ in
            counted.add(1, ordering: .relaxed)
        }
        let threads = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
        let refused = await withTaskGroup(of: Int.self) { group in
            for thread in 0..<threads {
                group.addTask {
                    registry.withCurrent { Self.refusals(500, key: "k\(thread % 3)") }
                }
            }
            return await group.reduce(0, +)
        }
        await observer.waitUntilDelivered()
        // Three keys, each admitting one call in all: every other call was refused.
        #expect(refused == threads * 500 - 3)
        #expect(counted.load(ordering: .relaxed) == refused)
        #expect(observer.droppedCount == 0)
    }
}

/// A weak reference a `@Sendable` closure may read.
final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private struct Box { weak var object: Object? }
    private let box: Lock<Box>
    init(_ object: Object) { box = Lock(Box(object: object)) }
    var isGone: Bool { box.withLock { $0.object == nil } }
}

@Suite struct EventObserverLifetimeTests {
    @Test func aRegistryWithAnObserverIsFreedWithIt() async {
        var references: (WeakReference<TempoRegistry>, WeakReference<TempoObserver>)?
        do {
            let registry = TempoRegistry(clock: ManualClock())
            let observer = registry.observe { _ in }
            references = (WeakReference(registry), WeakReference(observer))
            // A decision that leaves no timer behind (a timer on the clock would hold the
            // registry until it fired).
            registry.openCircuitBreaker(identifier: "a")
            await observer.waitUntilDelivered()
        }
        let (registry, observer) = references!
        #expect(await eventually { registry.isGone })
        #expect(await eventually { observer.isGone })
    }
}
