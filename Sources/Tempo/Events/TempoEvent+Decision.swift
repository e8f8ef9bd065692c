// What a decision says of itself: a label for a counter, the wait it carries, and its text.

extension TempoEvent.Decision {
    /// The case's name, without its values (`"rateLimitRefused"`): a label for a counter, the
    /// same for every event of the case.
    ///
    /// ```swift
    /// registry.observe { event in print("tempo.\(event.helper).\(event.decision.name)") }
    /// ```
    public var name: String {
        switch self {
        case .breakerChanged: "breakerChanged"
        case .breakerRejected: "breakerRejected"
        case .rateLimitQueued: "rateLimitQueued"
        case .rateLimitAdmitted: "rateLimitAdmitted"
        case .rateLimitRefused: "rateLimitRefused"
        case .rateLimitHeld: "rateLimitHeld"
        case .storeFailed: "storeFailed"
        case .storeRecovered: "storeRecovered"
        case .concurrencyLimitQueued: "concurrencyLimitQueued"
        case .concurrencyLimitAdmitted: "concurrencyLimitAdmitted"
        case .concurrencyLimitRefused: "concurrencyLimitRefused"
        case .concurrencyLimitTimedOut: "concurrencyLimitTimedOut"
        case .retryScheduled: "retryScheduled"
        case .retryStopped: "retryStopped"
        case .hedgeStarted: "hedgeStarted"
        case .hedgeWon: "hedgeWon"
        case .hedgeFailed: "hedgeFailed"
        case .timedOut: "timedOut"
        case .callDropped: "callDropped"
        case .callRan: "callRan"
        }
    }

    /// The wait the decision reports, if it has one: how long a call waited
    /// (``rateLimitAdmitted(waited:)``, ``concurrencyLimitAdmitted(waited:)``, a refusal or
    /// queue timeout, zero when it came at once), or is expected or asked to wait
    /// (``rateLimitQueued(estimatedWait:)``, ``rateLimitHeld(for:)``, the delay of
    /// ``retryScheduled(attempt:error:delay:)``); `nil` for the others.
    ///
    /// ```swift
    /// registry.observe { event in
    ///     if let wait = event.decision.wait { print("\(event.decision.name): \(wait)") }
    /// }
    /// ```
    public var wait: Duration? {
        switch self {
        case .rateLimitQueued(let wait), .rateLimitAdmitted(let wait), .rateLimitHeld(let wait),
            .concurrencyLimitAdmitted(let wait), .concurrencyLimitTimedOut(let wait):
            wait
        case .rateLimitRefused(_, let waited): waited
        case .retryScheduled(_, _, let delay): delay
        case .breakerChanged, .breakerRejected, .concurrencyLimitQueued, .concurrencyLimitRefused,
            .retryStopped, .hedgeStarted, .hedgeWon, .hedgeFailed, .timedOut, .callDropped,
            .callRan, .storeFailed, .storeRecovered:
            nil
        }
    }
}

extension TempoEvent.Decision: CustomStringConvertible {
    /// The decision in a few words, its values included.
    ///
    /// ```swift
    /// print(TempoEvent.Decision.hedgeStarted(attempt: 2))   // "hedge 2 started"
    /// ```
    public var description: String {
        switch self {
        case .breakerChanged(let from, let to): "\(from) -> \(to)"
        case .breakerRejected(let after?): "rejected, trial in \(after)"
        case .breakerRejected(nil): "rejected"
        case .rateLimitQueued(let wait): "queued, permit in about \(wait)"
        case .rateLimitAdmitted(let waited): "admitted after \(waited)"
        case .rateLimitRefused(let after, let waited): "refused after \(waited), free in \(after)"
        case .rateLimitHeld(let wait): "held for \(wait) by a retry-after"
        case .storeFailed(let reason, true): "store failed (\(reason)), falling back"
        case .storeFailed(let reason, false): "store failed (\(reason)), failing closed"
        case .storeRecovered: "store recovered"
        case .concurrencyLimitQueued(let running, let queued):
            "queued, \(running) running, \(queued) queued"
        case .concurrencyLimitAdmitted(let waited): "admitted after \(waited)"
        case .concurrencyLimitRefused(let running, let queued):
            "refused, \(running) running, \(queued) queued"
        case .concurrencyLimitTimedOut(let waited): "queue timed out after \(waited)"
        case .retryScheduled(let attempt, let error, let delay):
            "attempt \(attempt) failed (\(error)), retry in \(delay)"
        case .retryStopped(let attempt, let error, let reason):
            "stopped after attempt \(attempt) (\(error)): \(reason)"
        case .hedgeStarted(let attempt): "hedge \(attempt) started"
        case .hedgeWon(let attempt): "attempt \(attempt) won"
        case .hedgeFailed(let attempts): "all \(attempts) attempts failed"
        case .timedOut(let after): "timed out after \(after)"
        case .callDropped: "dropped"
        case .callRan: "ran"
        }
    }
}
