// A rate-limited key in the registry: its state machine as a registry entry, the call that
// takes a permit at once, the wait for one, and the controls (a cancelled waiter, a reset).

typealias RateLimitEntry = RateLimitState<PermitWaiter>

extension RateLimitState.Settled where Waiter == PermitWaiter {
    /// Tells the waiters: admitted ones go on, expired ones throw. Called outside any lock.
    func resume() {
        for waiter in admitted { waiter.admit() }
        for (waiter, after) in expired { waiter.expire(retryAfter: after) }
    }

    /// The same, as an operation the registry launches after its lock (nothing when empty).
    var operation: Operation? {
        isEmpty ? nil : .sync({ self.resume() }, .taskContext)
    }
}

extension RateLimitState: TableEntry, TimedEntry where Waiter == PermitWaiter {
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [GroupKey: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R { body(&tables.rateLimits, &tables.ids) }

    /// A key that is not idle keeps its timer until its next wake; at the top of the range,
    /// where that wake is now and no time is left for the bucket to fill, it stays without
    /// one (see ``keepsWhenTimerEnds(at:)``), instead of firing again at the same instant.
    mutating func timerFired(at now: Duration) -> (run: Operation?, next: Duration?) {
        let settled = settle(at: now)
        guard !isIdle(at: now) else { return (settled.operation, nil) }
        let wake = wake(at: now)
        return (settled.operation, wake > now ? wake : nil)
    }

    func keepsWhenTimerEnds(at now: Duration) -> Bool { !isIdle(at: now) }

    func snapshotEntry(key: GroupKey, now: Duration) -> TempoSnapshot.Entry {
        TempoSnapshot.Entry(
            kind: .rateLimit, key: key.description,
            state: .rateLimit(
                tokens: tokens(at: now), nextPermitAt: nextPermit(at: now), waiters: queue.count))
    }
}

/// A rate-limited key's entry, a token bucket or a window: a FIFO queue of ``PermitWaiter``s in
/// front of a meter. The wait, its cancellation and a reset go through this, for both.
protocol PermitQueueEntry: TimedEntry where Key == GroupKey {
    /// What a call asks for.
    associatedtype Request: Sendable
    /// A call at `now`: admitted at once, or not (nothing changes then).
    mutating func take(_ request: Request, at now: Duration) -> RateLimitEntry.Decision
    /// Queues a waiter after ``take(_:at:)`` said no; returns its id.
    mutating func enqueue(_ waiter: PermitWaiter, request: Request, deadline: Duration?) -> UInt64
    /// When the key's timer must wake; `nil`: no timer is needed.
    func timerWake(at now: Duration) -> Duration?
    /// Nobody waits and nothing is counted at `now`: the key can leave its table.
    func isIdle(at now: Duration) -> Bool
    /// Removes waiter `id` if it still waits, and admits whoever it held up.
    mutating func withdraw(_ id: UInt64, at now: Duration) -> (
        PermitWaiter, RateLimitEntry.Settled
    )?
    /// Makes the key fresh at `now`, and admits the waiters that lets through.
    mutating func reset(at now: Duration) -> RateLimitEntry.Settled
    /// Whether a waiter admitted by the timer records its start when its task resumes
    /// (``started(_:at:)``): a window counts operations as they start (or, for one it wraps,
    /// as it ends: ``TempoRegistry/endWindowOperation(_:ask:)``).
    static var countsStarts: Bool { get }
    /// A waiter admitted by the timer starts its operation at `now`.
    mutating func started(_ request: Request, at now: Duration)
    /// A waiter admitted by the timer was cancelled before its operation started: what it
    /// still can give back is given back, and whoever that lets through is admitted. `nil`:
    /// nothing changes.
    mutating func cancelledBeforeStart(_ request: Request, at now: Duration)
        -> RateLimitEntry.Settled?
}

/// A token bucket's call: its ask, and the limit's bucket (for the snapshot).
struct BucketRequest: Sendable {
    var ask: RateLimitEntry.Ask
    var bucket: (refill: Duration, burst: Int)
}

extension RateLimitState: PermitQueueEntry where Waiter == PermitWaiter {
    mutating func take(_ request: BucketRequest, at now: Duration) -> Decision {
        call(at: now, ask: request.ask, refill: request.bucket.refill, burst: request.bucket.burst)
    }

    mutating func enqueue(
        _ waiter: PermitWaiter, request: BucketRequest, deadline: Duration?
    ) -> UInt64 {
        enqueue(waiter, ask: request.ask, deadline: deadline)
    }

    func timerWake(at now: Duration) -> Duration? { wake(at: now) }

    /// A bucket's tokens are taken at admission; the start changes nothing.
    static var countsStarts: Bool { false }
    mutating func started(_ request: BucketRequest, at now: Duration) {}
    /// A bucket's tokens were taken at admission, and stay taken.
    mutating func cancelledBeforeStart(_ request: BucketRequest, at now: Duration)
        -> RateLimitEntry.Settled?
    { nil }
}

/// What a call's transition returns to the entry path.
struct RateLimitCall<Outcome: Sendable>: TransitionResult {
    var outcome: Outcome
    var timerWake: Duration?
    /// The work token of a queued waiter's task, parked once the key's timer is armed.
    var parking: SettleToken?
}

/// How a call that may wait ended its turn under the lock.
enum RateLimitWaitOutcome: Sendable {
    case admitted, queued, cancelled
}

extension TempoRegistry {
    /// Takes a permit at once, or says how long a call would wait: a clock read, a lock and a
    /// table update. `bucket` is the limit's, with a positive burst at least `weight`.
    @inline(__always)
    func enterRateLimit(
        _ key: GroupKey, weight: Int, bucket: (refill: Duration, burst: Int)
    ) -> RateLimitEntry.Decision {
        let now = clock.now()
        let ask = RateLimitEntry.Ask(weight: weight, burst: bucket.burst, refill: bucket.refill)
        return enter(
            RateLimitEntry.self, key,
            new: { RateLimitEntry(now: now, refill: bucket.refill, burst: bucket.burst) }
        ) { state in
            let decision = state.call(
                at: now, ask: ask, refill: bucket.refill, burst: bucket.burst)
            return RateLimitCall(outcome: decision, timerWake: state.wake(at: now))
        }.outcome
    }

    /// Waits in the key's queue for a permit, at most `maxWait` (`nil`: no limit). Returns the
    /// work token of a waiter admitted after waiting on a deterministic clock (finish it when
    /// the permit's work is done); `nil` for a task that carries a token of that clock (its
    /// token, parked while it waited, counts as running again). Throws `CancellationError` when
    /// the task is cancelled while waiting (the waiter leaves the queue and takes nothing),
    /// ``RateLimitError/limited(retryAfter:)`` when `maxWait` runs out.
    func waitForRatePermit(
        _ key: GroupKey, weight: Int, bucket: (refill: Duration, burst: Int), maxWait: Duration?,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> SettleToken? {
        let ask = RateLimitEntry.Ask(weight: weight, burst: bucket.burst, refill: bucket.refill)
        return try await waitForPermit(
            RateLimitEntry.self, key, BucketRequest(ask: ask, bucket: bucket),
            new: { RateLimitEntry(now: $0, refill: bucket.refill, burst: bucket.burst) },
            maxWait: maxWait)
    }

    /// Waits in the queue of a key of `Entry`'s table for what `request` asks, at most
    /// `maxWait`; as ``waitForRatePermit(_:weight:bucket:maxWait:isolation:)``.
    ///
    /// It runs on the caller's actor (`isolation`) up to the wait: the waiter joins the queue
    /// before the actor is let go, so calls made one after another on an actor queue in that
    /// order. (The wait's closure names `isolation`, which keeps it there: a closure of a
    /// `nonisolated(nonsending)` function would run off the actor.)
    func waitForPermit<Entry: PermitQueueEntry>(
        _: Entry.Type, _ key: GroupKey, _ request: Entry.Request,
        new: (Duration) -> Entry, maxWait: Duration?,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> SettleToken? {
        let waiterID = PermitWaiterID()
        let host = clock.host
        // The task's own work token, if it carries one of this clock (it runs an operation the
        // engine launched): the wait parks it.
        let callerToken = SettleToken.current(of: host)
        let grant = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation(isolation: isolation) { continuation in
                let now = clock.now()
                let outcome = enter(
                    Entry.self, key, new: { new(now) }
                ) { state -> RateLimitCall<RateLimitWaitOutcome> in
                    // A cancel before this point found no waiter: it is seen here instead.
                    if Task.isCancelled {
                        return RateLimitCall(
                            outcome: .cancelled, timerWake: state.timerWake(at: now))
                    }
                    guard case .limited(let estimate) = state.take(request, at: now) else {
                        return RateLimitCall(
                            outcome: .admitted, timerWake: state.timerWake(at: now))
                    }
                    let observed = events.isObserved
                    let id = state.enqueue(
                        PermitWaiter(
                            continuation: continuation, host: host, callerToken: callerToken,
                            report: observed
                                ? WaitReport(
                                    events: events, helper: .rateLimit, key: key, queuedAt: now,
                                    now: clock.now) : nil),
                        request: request, deadline: maxWait.map { now.adding($0) })
                    waiterID.value.withLock { $0 = id }
                    // Reported before the lock is let go, so that no decision of a timer on
                    // this waiter (admitted, expired) can be reported first. The observer
                    // does not run here: the event is only buffered.
                    if observed {
                        events.report(
                            .rateLimit, key, .rateLimitQueued(estimatedWait: estimate), at: now)
                    }
                    // Asleep until decided: parked under the lock, so no decision can come
                    // first, and after the key's timer is armed (see `TransitionResult`), so
                    // an advance that sees the task parked fires the timer when it comes due.
                    return RateLimitCall(
                        outcome: .queued, timerWake: state.timerWake(at: now),
                        parking: callerToken)
                }.outcome
                switch outcome {
                case .admitted: continuation.resume(returning: nil)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .queued: break
                }
            }
        } onCancel: {
            withdrawPermitWaiter(Entry.self, key, waiterID)
        }
        guard let grant else { return nil }
        // A cancel that came after the admission is seen where the operation would start:
        // the call throws, and a window gives its slot back.
        if Task.isCancelled {
            controlRateLimit(Entry.self, key) { state, now in
                state.cancelledBeforeStart(request, at: now)
            }?.resume()
            grant.token?.finish()
            throw CancellationError()
        }
        startAfterWaiting(Entry.self, key, request, new: new, report: grant.report)
        return grant.token
    }

    /// A waiter admitted by the key's timer has resumed and is about to start its operation:
    /// the clock is read here, where the operation starts. A window records the waiter's
    /// starts at that instant (they were in flight since the admission), so a task that
    /// resumes late does not spend the margin meant for the request's trip, or, for a call
    /// that wraps an operation, keeps them in flight until the operation ends; and the
    /// admission is reported at it, with the time waited until then.
    func startAfterWaiting<Entry: PermitQueueEntry>(
        _: Entry.Type, _ key: GroupKey, _ request: Entry.Request,
        new: (Duration) -> Entry, report: WaitReport?
    ) {
        let now = clock.now()
        if Entry.countsStarts {
            _ = enter(Entry.self, key, new: { new(now) }) { state in
                state.started(request, at: now)
                return RateLimitCall(outcome: (), timerWake: state.timerWake(at: now))
            }
        }
        report?.end(at: now) { .rateLimitAdmitted(waited: $0) }
    }

    /// The task of a waiter was cancelled: it leaves the queue (unless it was already admitted
    /// or let go) and throws `CancellationError`; whoever it held up is admitted.
    private func withdrawPermitWaiter<Entry: PermitQueueEntry>(
        _: Entry.Type, _ key: GroupKey, _ waiterID: PermitWaiterID
    ) {
        var withdrawn: PermitWaiter?
        let settled = controlRateLimit(Entry.self, key) { state, now -> RateLimitEntry.Settled? in
            let id = waiterID.value.withLock { $0 }
            guard id != 0, let (waiter, settled) = state.withdraw(id, at: now) else { return nil }
            withdrawn = waiter
            return settled
        }
        withdrawn?.fail(CancellationError())
        settled?.resume()
    }

    /// Fills the bucket of the rate limit `identifier`, and empties the window of the window
    /// limit `identifier`; see ``Tempo/resetRateLimit(identifier:)``.
    ///
    /// ```swift
    /// registry.resetRateLimit(identifier: "api")
    /// ```
    ///
    /// - Parameter identifier: The identifier the rate-limited calls were made with.
    public func resetRateLimit(identifier: String) {
        controlRateLimit(RateLimitEntry.self, .name(identifier)) { state, now in
            state.reset(at: now)
        }?.resume()
        controlRateLimit(WindowLimitEntry.self, .name(identifier)) { state, now in
            state.reset(at: now)
        }?.resume()
    }

    /// Applies `change` to the live entry of `key` under its lock; an entry left idle leaves its
    /// table, otherwise its timer is kept in step. Returns what `change` returned.
    private func controlRateLimit<Entry: PermitQueueEntry, R: Sendable>(
        _: Entry.Type, _ key: GroupKey, _ change: (inout Entry, Duration) -> R?
    ) -> R? {
        let now = clock.now()
        let (result, timer) = withShard(of: key) { tables in
            Entry.access(&tables) { table, ids -> (R?, TimerRef?) in
                guard var slot = table[key], let result = change(&slot.state, now) else {
                    return (nil, nil)
                }
                if slot.state.isIdle(at: now) {
                    table.removeLive(key)
                    return (result, slot.timer)
                }
                if let wake = slot.state.timerWake(at: now) {
                    arm(&slot, key: key, wake: wake, ids: &ids)
                }
                table[key] = slot
                return (result, nil)
            }
        }
        timer?.cancel()
        return result
    }
}
