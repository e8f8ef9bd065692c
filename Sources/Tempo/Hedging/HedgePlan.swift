/// What a hedged call does next: which attempts start, when the next hedge is due, and when
/// the call is over. A pure value with no clock and no task, driven by the run loop in
/// `Hedge.swift` and by the tests directly.
struct HedgePlan {
    let maxAttempts: Int
    let delay: Duration
    /// Attempts started so far; attempt numbers are `1...started`.
    private(set) var started = 0
    /// Attempts started that have not ended.
    private(set) var inFlight = 0
    /// When the next attempt starts if none has succeeded by then; `nil` when none is left.
    private(set) var nextHedgeAt: Duration?
    /// The errors of the attempts that failed, by attempt number.
    private var errors: [Int: any Error] = [:]

    /// What a finished attempt leads to.
    enum Step {
        /// Start these attempts now.
        case start(ClosedRange<Int>)
        /// Wait for the attempts in flight or the next hedge.
        case wait
        /// Every attempt failed: their errors, in start order.
        case allFailed([any Error])
    }

    init(maxAttempts: Int, delay: Duration) {
        self.maxAttempts = maxAttempts
        self.delay = delay
    }

    /// The call begins at `now`: the first attempt, or every attempt when `delay` is zero or
    /// less.
    mutating func begin(at now: Duration) -> ClosedRange<Int> {
        launch(delay > .zero ? 1 : maxAttempts, at: now)
    }

    /// The hedge due at `nextHedgeAt` came: one more attempt, if any is left.
    mutating func hedgeDue(at now: Duration) -> ClosedRange<Int>? {
        started < maxAttempts ? launch(1, at: now) : nil
    }

    /// Attempt `attempt` failed with `error` at `now`: the next attempt starts at once when one
    /// is left; the call fails when none is left and none is in flight.
    mutating func failed(_ attempt: Int, _ error: any Error, at now: Duration) -> Step {
        inFlight -= 1
        errors[attempt] = error
        if started < maxAttempts { return .start(launch(1, at: now)) }
        guard inFlight == 0 else { return .wait }
        return .allFailed((1...started).compactMap { errors[$0] })
    }

    private mutating func launch(_ count: Int, at now: Duration) -> ClosedRange<Int> {
        let first = started + 1
        started += count
        inFlight += count
        nextHedgeAt = started < maxAttempts ? now.adding(delay) : nil
        return first...started
    }
}
