// A call waiting for a rate limit's permit: what its task is handed when admitted, its id in
// the key's queue, and what it reports when its wait ends.

/// What a waiter's task is handed when a timer admits it.
struct PermitGrant: Sendable {
    /// The work token the task goes on under (see ``PermitWaiter/admit()``).
    var token: SettleToken?
    /// Where the admission is reported, when the call was observed as it joined the queue.
    var report: WaitReport?
}

/// A call waiting for its permit, in its own task.
struct PermitWaiter: Sendable {
    let continuation: CheckedContinuation<PermitGrant?, any Error>
    /// The registry's clock, when it is deterministic: a waiter admitted by a timer takes a work
    /// token from it, so an advance waits for what the waiter does with its permit.
    let host: (any DeterministicClock)?
    /// The work token of the waiting task, when it carries one of `host` (it runs an operation
    /// the engine launched): parked while the call waits, so an advance does not wait for a
    /// task that waits for the advance, and counted as running again when the wait ends.
    let callerToken: SettleToken?
    /// Where the end of the wait is reported, when someone observed the registry as the call
    /// joined the queue.
    let report: WaitReport?

    /// Ends the wait with a permit: the task goes on under its own token, or a new one. The
    /// admission is reported by the task when it resumes (see
    /// ``TempoRegistry/startAfterWaiting(_:_:_:_:)``), at the instant the operation starts.
    func admit() {
        if let callerToken {
            callerToken.unpark()
            continuation.resume(returning: PermitGrant(token: nil, report: report))
        } else {
            continuation.resume(
                returning: PermitGrant(token: host.map { SettleToken(host: $0) }, report: report))
        }
    }

    /// Ends the wait because its maximum wait ran out: a permit is free in `retryAfter`.
    func expire(retryAfter: Duration) {
        report?.end { .rateLimitRefused(retryAfter: retryAfter, waited: $0) }
        fail(RateLimitError.limited(retryAfter: retryAfter))
    }

    /// Ends the wait with `error`.
    func fail(_ error: any Error) {
        callerToken?.unpark()
        continuation.resume(throwing: error)
    }
}

/// A waiter's id in its key's queue, shared by the wait and its cancellation handler; written
/// and read under the shard's lock (zero: not queued).
final class PermitWaiterID: Sendable {
    let value = Lock<UInt64>(0)
}

/// What an observed wait reports when it ends: to whom, under which key, and since when.
struct WaitReport: Sendable {
    let events: EventHub
    let helper: TempoSnapshot.Kind
    let key: GroupKey
    let queuedAt: Duration
    let now: @Sendable () -> Duration

    /// Reports the decision that ended the wait, made from how long it lasted, at `now` (by
    /// default, the clock's reading).
    func end(at now: Duration? = nil, _ decision: (Duration) -> TempoEvent.Decision) {
        let now = now ?? self.now()
        events.report(helper, key, decision(now.subtracting(queuedAt)), at: now)
    }
}
