import Tempo
import TempoTesting

/// What happened to the attempts of a hedged call, and when, on the manual clock.
enum AttemptEvent: Hashable, CustomStringConvertible {
    case started(Int, at: Duration)
    case succeeded(Int, at: Duration)
    case failed(Int, at: Duration)
    case cancelled(Int, at: Duration)

    var description: String {
        switch self {
        case .started(let n, let at): "start \(n) @\(at)"
        case .succeeded(let n, let at): "success \(n) @\(at)"
        case .failed(let n, let at): "failure \(n) @\(at)"
        case .cancelled(let n, let at): "cancelled \(n) @\(at)"
        }
    }
}

/// How one attempt behaves: it sleeps `duration` on the clock, then returns its number or
/// throws `Boom(attempt:)`.
struct AttemptScript: Sendable {
    var duration: Duration
    var succeeds: Bool
}

/// An operation whose attempt `n` follows `scripts[n - 1]` (the last script for later ones)
/// and logs what happens to it.
func scriptedAttempts(
    _ clock: ManualClock, _ log: Log<AttemptEvent>, _ scripts: [AttemptScript]
) -> @Sendable (Int) async throws -> Int {
    { attempt in
        let script = scripts[min(attempt, scripts.count) - 1]
        log.append(.started(attempt, at: clock.now.offset))
        do {
            try await clock.sleep(for: script.duration)
        } catch {
            log.append(.cancelled(attempt, at: clock.now.offset))
            throw error
        }
        if script.succeeds {
            log.append(.succeeded(attempt, at: clock.now.offset))
            return attempt
        }
        log.append(.failed(attempt, at: clock.now.offset))
        throw Boom(attempt: attempt)
    }
}

/// The attempts a log says started, with their start times.
func starts(_ log: Log<AttemptEvent>) -> [Int: Duration] {
    var starts: [Int: Duration] = [:]
    for case .started(let n, let at) in log.all { starts[n] = at }
    return starts
}

extension TempoSnapshot {
    /// The state of the one hedged call, if there is one.
    var hedgeState: State? { entries(.hedge).first?.state }
}
