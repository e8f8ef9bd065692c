import Tempo

/// Bursts from a loop, each on the same identifier, with lengths from 1 to 2,000 calls and
/// quiet windows of 200 µs or 1 ms (short enough that the timer often wakes mid-burst and
/// re-arms). A violation is a burst whose last run was not its last call, or whose runs came
/// out of call order or twice, or whose last call never ran.
struct OrderingResult {
    var violations: Int
    /// Runs other than the last (a loop slower than the window, legitimately).
    var earlierRuns: Int
}

func orderingBursts(_ bursts: Int, seed: Int) async -> OrderingResult {
    let registry = TempoRegistry.shared
    var result = OrderingResult(violations: 0, earlierRuns: 0)
    for burst in 0..<bursts {
        let length = 1 + (burst &* 7_919 &+ seed &* 104_729) % 2_000
        let window: Duration = burst % 2 == 0 ? .microseconds(200) : .milliseconds(1)
        let log = RunLog()
        for i in 0..<length {
            debounce(window, identifier: "ordering", by: .taskContext) { log.ran(i) }
        }
        let lastRan = await waitUntil(timeout: .seconds(5)) { log.last?.index == length - 1 }
        _ = await waitUntil(timeout: .seconds(5)) { registry.liveKeyCount == 0 }
        let indices = log.entries.map(\.index)
        let increasing = zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }
        if !lastRan || indices.last != length - 1 || !increasing { result.violations += 1 }
        result.earlierRuns += max(0, indices.count - 1)
    }
    return result
}
