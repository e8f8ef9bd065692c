import Tempo
import TempoTesting

// The circuit breaker's timeline: a call every 100 ms to a service that fails until 500 ms
// and then recovers, through a breaker that opens at half failures of its last 3 calls, breaks
// for 500 ms and closes after 2 trial calls.

private struct ServiceDown: Error {}

func circuitBreakerTimeline() async -> Timeline {
    let clock = ManualClock()
    let registry = TempoRegistry(clock: clock)
    let recording = Recording()
    let policy = CircuitBreakerPolicy(
        failureRatio: 0.5, window: .lastCalls(3), minimumCalls: 3, breakDuration: tick * 5,
        trialCalls: 2)
    let labels = "abcdefghijkl".map(String.init)
    func state() -> String {
        for entry in registry.snapshot().entries {
            if case .circuitBreaker(let state, _, _, _) = entry.state { return state.rawValue }
        }
        return ""
    }
    await registry.withCurrent {
        for (index, label) in labels.enumerated() {
            await clock.advance(to: .init(offset: tick * index))
            let now = registry.now.milliseconds
            recording.call(label, at: now)
            _ = try? await circuitBreaker(policy, identifier: "timeline") {
                recording.run(label, at: now)
                if now < 500 { throw ServiceDown() }
            }
            recording.state(state() == "closed" ? "" : state(), at: now)
        }
    }
    return timeline(
        "timeline-circuitbreaker",
        title: "circuitBreaker · closed → open → half-open → closed",
        subtitle: "100 ms per tick, a call a tick; the service fails until 500 ms. Opens at "
            + "half failures of the last 3 calls, breaks 500 ms, closes after 2 trials",
        calls: String(repeating: "-", count: labels.count), tail: 0, recording,
        stateRow: "breaker",
        stateNames: [
            "open": (.window, "open: rejected at once"),
            "halfOpen": (.pending, "half-open: trials"),
        ])
}
