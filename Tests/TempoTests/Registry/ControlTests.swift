import Tempo
import TempoTesting
import Testing

@Suite struct ControlTests {
    // MARK: Debounce

    @Test func cancelDebounceDropsThePendingCallAndForgetsTheGroup() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            debounce(.milliseconds(300), identifier: "s", by: .taskContext, option: .runFirst) {
                log.mark("lead", registry)
            }
            debounce(.milliseconds(300), identifier: "s", by: .taskContext, option: .runFirst) {
                log.mark("trail", registry)
            }
            #expect(pendingDebounce(identifier: "s") != nil)
            cancelDebounce(identifier: "s")
            #expect(pendingDebounce(identifier: "s") == nil)
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .milliseconds(100))
            // Forgotten: the next call is the first of a new burst and leads at once.
            debounce(.milliseconds(300), identifier: "s", by: .taskContext, option: .runFirst) {
                log.mark("again", registry)
            }
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["lead@0", "again@100"])
        }
    }

    @Test func flushDebounceRunsTheLatestOperationNowAndOnlyOnce() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            for i in 0..<3 {
                debounce(.milliseconds(300), identifier: "save", by: .taskContext) {
                    log.mark("v\(i)", registry)
                }
            }
            await clock.advance(by: .milliseconds(120))
            flushDebounce(identifier: "save")
            #expect(log.all == ["v2@120"])
            flushDebounce(identifier: "save")  // nothing pending: nothing happens
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["v2@120"])
        }
    }

    @Test func flushDebounceOfARunFirstGroupStartsItsQuietWindow() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            func call(_ label: String) {
                debounce(.milliseconds(300), identifier: "r", by: .taskContext, option: .runFirst) {
                    log.mark(label, registry)
                }
            }
            call("a")
            call("b")
            await clock.advance(by: .milliseconds(50))
            flushDebounce(identifier: "r")
            call("c")  // within the quiet window the flush started: debounced
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["a@0", "b@50", "c@350"])
        }
    }

    @Test func pendingDebounceSaysWhenTheCallRuns() async {
        await onManualClock { clock, registry in
            #expect(pendingDebounce(identifier: "p") == nil)
            debounce(.milliseconds(300), identifier: "p", by: .taskContext) {}
            await clock.advance(by: .milliseconds(100))
            let pending = pendingDebounce(identifier: "p")
            #expect(pending?.runsAt == .milliseconds(300))
            #expect(pending?.remaining == .milliseconds(200))
            #expect(registry.pendingDebounce(identifier: "p") == pending)
            await clock.advance(by: .milliseconds(200))
            #expect(pendingDebounce(identifier: "p") == nil)
        }
    }

    // MARK: Throttle

    @Test func cancelThrottleDropsTheTrailingCallAndClosesTheWindow() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            func call(_ label: String) {
                throttle(.milliseconds(300), identifier: "t", by: .taskContext, option: .ensureLast)
                {
                    log.mark(label, registry)
                }
            }
            call("a")
            call("b")
            #expect(pendingThrottle(identifier: "t")?.runsAt == .milliseconds(300))
            await clock.advance(by: .milliseconds(100))
            cancelThrottle(identifier: "t")
            #expect(registry.liveKeyCount == 0)
            call("c")  // the window was closed by the cancel: runs at once
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["a@0", "c@100"])
        }
    }

    @Test func flushThrottleRunsTheTrailingCallNowAndOpensANewWindow() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            func call(_ label: String) {
                throttle(.milliseconds(300), identifier: "t", by: .taskContext, option: .ensureLast)
                {
                    log.mark(label, registry)
                }
            }
            call("a")
            await clock.advance(by: .milliseconds(50))
            flushThrottle(identifier: "t")  // no trailing call: nothing
            call("b")
            call("c")
            await clock.advance(by: .milliseconds(50))
            flushThrottle(identifier: "t")  // runs c at 100, opens [100, 400)
            #expect(log.all == ["a@0", "c@100"])
            #expect(pendingThrottle(identifier: "t") == nil)
            await clock.advance(by: .milliseconds(250))
            call("d")  // 350: inside the window the flush opened
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["a@0", "c@100", "d@400"])
            #expect(registry.liveKeyCount == 0)
        }
    }

    // MARK: Unknown identifiers, running and cancelled operations

    @Test func controlOnAnIdentifierNeverUsedDoesNothing() async {
        await onManualClock { clock, registry in
            debounce(.milliseconds(300), identifier: "used", by: .taskContext) {}
            for name in ["never", "", String(repeating: "é", count: 1_000), "used "] {
                cancelDebounce(identifier: name)
                flushDebounce(identifier: name)
                cancelThrottle(identifier: name)
                flushThrottle(identifier: name)
                #expect(pendingDebounce(identifier: name) == nil)
                #expect(pendingThrottle(identifier: name) == nil)
            }
            // Debounce and throttle state are separate even for the same identifier.
            cancelThrottle(identifier: "used")
            flushThrottle(identifier: "used")
            #expect(pendingDebounce(identifier: "used") != nil)
            #expect(registry.liveKeyCount == 1)
        }
    }

    @Test func aRunningOperationIsNeverCancelled() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            debounce(.milliseconds(100), identifier: "d", by: .taskContext, onError: nil) {
                log.mark("start", registry)
                try? await clock.sleep(for: .milliseconds(500))  // running, asleep on the clock
                log.mark("end", registry)
            }
            await clock.advance(by: .milliseconds(100))
            #expect(log.all == ["start@100"])
            cancelDebounce(identifier: "d")
            flushDebounce(identifier: "d")
            registry.cancelAll()
            await clock.advance(by: .milliseconds(500))
            #expect(log.all == ["start@100", "end@600"])
        }
    }

    @Test func aCancelledCallNeverStarts() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            let debounced = debounce(
                .milliseconds(100), identifier: "d", by: .taskContext, onError: nil
            ) { log.mark("debounced", registry) }
            let trailing = throttle(
                .milliseconds(100), identifier: "t", by: .taskContext, option: .trailing,
                onError: nil
            ) { log.mark("trailing", registry) }
            debounce(.milliseconds(100), identifier: "m", option: .default) {
                @MainActor in log.mark("main", registry)
            }
            cancelDebounce(identifier: "d")
            cancelThrottle(identifier: "t")
            cancelDebounce(identifier: "m")
            await debounced.value  // finishes without running
            await trailing.value
            await clock.advance(by: .seconds(1))
            #expect(log.all == [])
            #expect(registry.liveKeyCount == 0)
        }
    }

    @Test func cancelAllCancelsEveryKindAndEmptiesTheRegistry() async {
        let log = Log<String>()
        await onManualClock { clock, registry in
            debounce(.milliseconds(100), identifier: "d", by: .taskContext) {
                log.mark("d", registry)
            }
            debounce(.milliseconds(100), identifier: "l", by: .taskContext, option: .leading) {
                log.mark("l", registry)
            }
            throttle(.milliseconds(100), identifier: "t", by: .taskContext, option: .trailing) {
                log.mark("t", registry)
            }
            delay(.milliseconds(100), by: .taskContext) { log.mark("delay", registry) }
            #expect(registry.liveKeyCount == 4)
            registry.cancelAll()
            #expect(registry.liveKeyCount == 0)
            await clock.advance(by: .seconds(1))
            #expect(log.all == ["l@0"])
            #expect(clock.sleeperCount == 0)
        }
    }
}
