import Synchronization
import Tempo
import TempoTesting

// The rate limiter's timelines: calls every 100 ms against a bucket of two permits that
// refills one every 400 ms, once waiting for permits and once refused at once; and the same
// calls against a window limit of two starts in any 800 ms, waiting.

/// 2 permits per 800 ms: one every 400 ms, two at once.
private let bucketLimit = RateLimit(2, per: .milliseconds(800))
/// At most 2 starts in any 800 ms (no margin, so the picture shows the window itself).
private let windowLimit = RateLimit.window(2, per: .milliseconds(800), margin: .zero)

/// The calls of both scenarios: one a tick for four ticks, then one at 700 ms.
private let rateCalls: [(tick: Int, label: String)] = [
    (0, "a"), (1, "b"), (2, "c"), (3, "d"), (7, "e"),
]

/// Plays `rateCalls` through `rateLimit` with `limit` and `policy` on a fresh manual clock, for
/// `ticks` ticks, sampling the key's state after every tick.
private func playRateLimit(
    _ limit: RateLimit, _ policy: RateLimitPolicy, ticks: Int
) async -> Recording {
    let clock = ManualClock()
    let registry = TempoRegistry(clock: clock)
    let recording = Recording()
    func waiters() -> Int {
        for entry in registry.snapshot().entries {
            if case .rateLimit(_, _, let waiters) = entry.state { return waiters }
        }
        return 0
    }
    func state() -> String {
        for entry in registry.snapshot().entries {
            if case .rateLimit(let tokens, _, let waiters) = entry.state {
                return waiters > 0 ? "waiting" : tokens == 0 ? "empty" : ""
            }
        }
        return ""
    }
    await registry.withCurrent {
        for index in 0..<ticks {
            await clock.advance(to: .init(offset: tick * index))
            let now = registry.now.milliseconds
            for call in rateCalls where call.tick == index {
                recording.call(call.label, at: now)
                let before = waiters()
                let done = Mutex(false)
                Task {
                    _ = try? await rateLimit(limit, whenLimited: policy, identifier: "timeline") {
                        recording.run(call.label, at: registry.now.milliseconds)
                    }
                    done.withLock { $0 = true }
                }
                // The call ran or was refused (its task ended), or it waits in the queue.
                while waiters() == before, !done.withLock({ $0 }) { await Task.yield() }
            }
            recording.state(state(), at: now)
        }
    }
    precondition(registry.liveKeyCount == 0, "the rate-limit scenario left work behind")
    return recording
}

func rateLimitTimeline(waiting: Bool) async -> Timeline {
    let recording = await playRateLimit(bucketLimit, waiting ? .wait : .reject, ticks: 21)
    let every = "100 ms per tick, 2 permits per 800 ms (one every 400 ms), burst 2"
    return timeline(
        waiting ? "timeline-ratelimit-wait" : "timeline-ratelimit-reject",
        title: waiting ? "rateLimit · .wait" : "rateLimit · .reject",
        subtitle: waiting
            ? "\(every): the burst passes, the rest wait first in first out, one per refill"
            : "\(every): the burst passes, the rest are refused with the wait they would face",
        calls: String(repeating: "-", count: 21), tail: 0, recording, stateRow: "bucket",
        stateNames: [
            "empty": (.window, "no permit free"),
            "waiting": (.pending, "calls waiting"),
        ])
}

func windowLimitTimeline() async -> Timeline {
    let recording = await playRateLimit(windowLimit, .wait, ticks: 25)
    return timeline(
        "timeline-ratelimit-window",
        title: "rateLimit · .window(2, per: 800 ms) · .wait",
        subtitle:
            "100 ms per tick, at most 2 starts in any 800 ms: a start waits until the one "
            + "two before it is 800 ms old",
        calls: String(repeating: "-", count: 25), tail: 0, recording, stateRow: "window",
        stateNames: [
            "empty": (.window, "2 starts in the window"),
            "waiting": (.pending, "calls waiting"),
        ])
}
