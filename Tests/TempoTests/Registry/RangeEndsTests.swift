import TempoTesting
import Testing

@testable import Tempo

/// Every kind of keyed entry at either end of the clock's range behaves as it does near zero:
/// it fires on time, and leaves the registry when it is done.
@Suite struct RangeEndsTests {
    static let ends: [Duration] = [
        .zero,
        Duration.saturatedMin.adding(.seconds(100)),
        Duration.saturatedMax.subtracting(.seconds(100)),
    ]

    static func onClock(
        at start: Duration, _ body: (ManualClock, TempoRegistry) async throws -> Void
    ) async rethrows {
        let clock = ManualClock(now: .init(offset: start))
        let registry = TempoRegistry(clock: clock)
        try await registry.withCurrent { try await body(clock, registry) }
    }

    @Test(arguments: ends) func debounceAndThrottle(start: Duration) async {
        await Self.onClock(at: start) { clock, registry in
            let ran = Log<String>()
            debounce(.seconds(1), identifier: "d", by: .taskContext) { ran.append("d") }
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {
                ran.append("t1")
            }
            throttle(.seconds(1), identifier: "t", by: .taskContext, option: .ensureLast) {
                ran.append("t2")
            }
            await clock.advance(by: .milliseconds(999))
            #expect(ran.all == ["t1"])
            await clock.advance(by: .milliseconds(1))
            #expect(Set(ran.all) == ["t1", "d", "t2"])
            await clock.advance(by: .seconds(1))
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test(arguments: ends) func delayAndRepeat(start: Duration) async {
        await Self.onClock(at: start) { clock, registry in
            let ran = Log<Duration>()
            delay(.seconds(1), by: .taskContext) { ran.append(.zero) }
            let loop = `repeat`(every: .seconds(1), times: 3, by: .taskContext) {
                ran.append(registry.now.subtracting(start))
            }
            await clock.advance(by: .seconds(5))
            await loop.value
            #expect(ran.all.sorted() == [.zero, .seconds(1), .seconds(2), .seconds(3)])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test(arguments: ends) func timeoutAndHedge(start: Duration) async throws {
        try await Self.onClock(at: start) { clock, registry async throws in
            let timed = Task {
                try await timeout(.seconds(1)) { try await clock.sleep(for: .seconds(10)) }
            }
            #expect(await eventually { clock.sleeperCount >= 2 })
            await clock.advance(by: .seconds(1))
            await #expect(throws: TimeoutError.timedOut(.seconds(1))) { try await timed.value }
            let hedged = Task {
                try await hedge(maxAttempts: 2, after: .seconds(1)) { attempt in
                    if attempt == 1 { try await clock.sleep(for: .seconds(10)) }
                    return attempt
                }
            }
            #expect(await eventually { clock.sleeperCount >= 2 })
            await clock.advance(by: .seconds(1))
            #expect(try await hedged.value == 2)
            #expect(await eventually { registry.liveKeyCount == 0 })
        }
    }

    @Test(arguments: ends) func concurrencyLimitQueueTimeout(start: Duration) async {
        await Self.onClock(at: start) { clock, registry in
            let release = Flag()
            let first = Task {
                try await concurrencyLimit(1, queueTimeout: .seconds(1), identifier: "c") {
                    try await clock.sleep(for: .seconds(5))
                    release.set()
                }
            }
            #expect(await eventually { clock.sleeperCount >= 1 })
            let second = Task {
                try await concurrencyLimit(1, queueTimeout: .seconds(1), identifier: "c") { 2 }
            }
            #expect(await eventually { clock.sleeperCount >= 2 })
            await clock.advance(by: .seconds(1))
            await #expect(throws: ConcurrencyLimitError.self) { try await second.value }
            await clock.advance(by: .seconds(4))
            try? await first.value
            #expect(release.isSet)
            #expect(registry.liveKeyCount == 0)
        }
    }
}
