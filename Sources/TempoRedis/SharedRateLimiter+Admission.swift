// The steps of a shared call: the admission in Redis (and the sleep until a reserved start),
// the hold on a retry-after, a script run within the time limit, and the keys.

import Tempo

extension SharedRateLimiter {
    enum Admission {
        case admitted
        /// Decided by the in-process limit, with what is left of the call's longest wait.
        case fallBack(RateLimit, RateLimitPolicy)
    }

    /// Asks the store for the call's permits and sleeps until the start it reserved. A window's
    /// call that is ready to start more than half the margin past the instant it asked plus
    /// its wait asks again (see ``lateness(allowedBy:)``), three asks at most. Runs in the
    /// caller's isolation, so that the instant checked is the one the operation starts at.
    nonisolated(nonsending) func admit(
        _ limit: RateLimit, weight: Int, policy: RateLimitPolicy, identifier: String
    ) async throws -> Admission {
        try Task.checkCancellation()
        guard weight > 0 else { return .admitted }
        let began = Self.now()
        let longest = policy.maxWait
        let allowed = Self.lateness(allowedBy: limit)
        var policy = policy
        for attempt in 1...Self.asksAtMost {
            // Cancelled while it was late: it does not ask again.
            try Task.checkCancellation()
            let asked = Self.now()
            // A refusal's `waited` counts from the first ask, when it asks again.
            switch try await ask(
                limit, weight: weight, policy: policy, identifier: identifier,
                waitingSince: attempt == 1 ? nil : began)
            {
            case .admitted(let wait, let undo):
                // Late past the earliest instant Redis can have recorded its start: it asked at
                // `asked`, so Redis decided then or later, and reserved its start `wait` after
                // that. The whole round trip to Redis counts.
                let late = Self.now() - (asked + wait)
                if let allowed, late > allowed, attempt < Self.asksAtMost {
                    // Its start, recorded in Redis, is behind it by more than the margin leaves
                    // for the trips. It gives the start back when nobody reserved after it (no
                    // request was sent at it), or leaves it counted, and asks again within what
                    // is left of its longest wait.
                    if let undo { await giveBack(undo, identifier: identifier) }
                    if let longest { policy = .wait(atMost: longest - (Self.now() - began)) }
                    continue
                }
                if wait > .zero || attempt > 1 {
                    registry.report(
                        .rateLimit, key: identifier,
                        .rateLimitAdmitted(waited: Self.now() - began))
                }
                return .admitted
            case .fallBack(let local):
                // After an ask that was late, with what is left of its longest wait (the failed
                // ask's time, up to the time limit, taken off too).
                if attempt > 1, let longest {
                    policy = .wait(atMost: longest - (Self.now() - began))
                }
                return .fallBack(local, policy)
            }
        }
        return .admitted  // not reached: the last ask returns or throws
    }

    /// How many times a call asks the store at most: a call still late after its third ask
    /// starts, late, rather than ask for ever on a machine that is always late.
    static let asksAtMost = 3

    /// How late a window's call may be ready to start past its reserved start: half the
    /// window's margin, the other half left for the requests' trips. `nil` (start however
    /// late) for a token bucket and for a window without a margin.
    static func lateness(allowedBy limit: RateLimit) -> Duration? {
        guard case .window = limit.measure, let margin = limit.margin, margin > .zero else {
            return nil
        }
        return margin / 2
    }

    enum Answer {
        /// Admitted, `wait` after the store decided (zero: at once); `undo` gives its start
        /// back when nobody reserved after it.
        case admitted(wait: Duration, undo: Undo?)
        case fallBack(RateLimit)
    }

    /// The script that gives a reservation back, with its keys and arguments.
    struct Undo {
        let script: RedisScript
        let keys: [String]
        let arguments: [String]
    }

    /// Gives a reservation back, when the store still can (see `Undo`). It runs from a task
    /// of its own: the caller's task may be cancelled, and a client may refuse to send from a
    /// cancelled task. A failure is reported like any other, not thrown: the reservation then
    /// stays counted, which errs on the side of the service.
    nonisolated(nonsending) func giveBack(_ undo: Undo, identifier: String) async {
        let limiter = self
        await Task {
            _ = try? await limiter.run(
                undo.script, keys: undo.keys, arguments: undo.arguments, identifier: identifier)
        }.value
    }

    /// One admission: asks the store and sleeps until the start it reserved.
    private nonisolated(nonsending) func ask(
        _ limit: RateLimit, weight: Int, policy: RateLimitPolicy, identifier: String,
        waitingSince: ContinuousClock.Instant?
    ) async throws -> Answer {
        let script: RedisScript
        let keys: [String]
        let arguments: [String]
        let maxWait = policy.maxWait.map { String(Self.microseconds($0, roundingUp: false)) } ?? ""
        switch limit.measure {
        case .unlimited:
            return .admitted(wait: .zero, undo: nil)
        case .window(let permits, let span):
            guard weight <= permits else {
                throw RateLimitError.cannotAdmit(weight: weight, burst: permits)
            }
            // Beyond 2^40 permits (a trillion), a window is measured as 2^40, and a call as at
            // most that: the scripts' numbers stay exact.
            let permits = min(permits, Self.maxPermits)
            let weight = min(weight, Self.maxPermits)
            script = .windowAdmit
            keys = [key(identifier, "w"), key(identifier, "h")]
            arguments = [
                decisionInstant(), String(Self.microseconds(span)), String(permits),
                String(weight), maxWait,
            ]
        case .bucket(let refill, let burst):
            guard weight <= burst else {
                throw RateLimitError.cannotAdmit(weight: weight, burst: burst)
            }
            script = .bucketAdmit
            keys = [key(identifier, "b")]
            arguments = [
                decisionInstant(), String(Self.microseconds(refill)), String(burst),
                String(weight), maxWait,
            ]
        }
        let reply: [Int64]
        do {
            if let failure = health.skipping(now: Self.now()) { throw failure }
            reply = try await run(script, keys: keys, arguments: arguments, identifier: identifier)
        } catch let error as SharedLimitStoreError {
            switch whenStoreFails.kind {
            case .failClosed: throw error
            case .fallBack(let local): return .fallBack(local(limit))
            }
        }
        guard reply.count >= 4, reply[0] == 0 || reply[0] == 1 else {
            throw fail(.unexpectedReply(reply), identifier)
        }
        guard reply[1] >= 0 else { throw fail(.unexpectedReply(reply), identifier) }
        let wait = Duration.microseconds(reply[1])
        guard reply[0] == 1 else {
            let waited = waitingSince.map { Self.now() - $0 } ?? .zero
            registry.report(
                .rateLimit, key: identifier, .rateLimitRefused(retryAfter: wait, waited: waited))
            throw RateLimitError.limited(retryAfter: wait)
        }
        let undo: Undo? =
            if script == .windowAdmit {
                Undo(
                    script: .windowCancel, keys: keys,
                    arguments: [
                        "", String(reply[3]), String(min(weight, Self.maxPermits)),
                        String(reply[2] + reply[1]),
                    ])
            } else if reply.count >= 6 {
                Undo(
                    script: .bucketCancel, keys: keys,
                    arguments: ["", String(reply[3]), String(reply[4]), String(reply[5])])
            } else {
                nil
            }
        guard wait > .zero else { return .admitted(wait: .zero, undo: undo) }
        registry.report(.rateLimit, key: identifier, .rateLimitQueued(estimatedWait: wait))
        do {
            try await sleep(wait)
        } catch {
            // Cancelled while it waited: its start is given back when it still can be.
            if let undo { await giveBack(undo, identifier: identifier) }
            throw error
        }
        return .admitted(wait: wait, undo: undo)
    }

    /// An error of the operation that carries a retry-after holds the key for every instance
    /// (the limiter's own refusals and cancellation do not). A store failure here is reported,
    /// not thrown: the operation's error is what the caller sees.
    func holdIfAsked(by error: any Error, _ limit: RateLimit, _ identifier: String) async {
        guard !(error is RateLimitError), !(error is CancellationError),
            !(error is SharedLimitStoreError),
            let after = (error as? any RetryAfterProviding)?.retryAfter, after > .zero
        else { return }
        try? await hold(limit, identifier: identifier, for: after)
    }

    /// Runs a script within the time limit. A failure is reported (when the store starts
    /// failing) and thrown as ``SharedLimitStoreError``; an answer after failures reports the
    /// recovery.
    func run(_ script: RedisScript, keys: [String], arguments: [String], identifier: String)
        async throws -> [Int64]
    {
        let store = store
        let outcome = await TimeLimited.run(within: timeLimit) {
            try await store.evaluate(script, keys: keys, arguments: arguments)
        }
        switch outcome {
        case .answered(let reply):
            if health.recovered() { registry.report(.rateLimit, key: identifier, .storeRecovered) }
            return reply
        case .failed(let error):
            if error is CancellationError { throw error }
            throw fail(.failed(String(describing: error)), identifier)
        case .timedOut:
            throw fail(.timedOut(after: timeLimit), identifier)
        case .cancelled:
            throw CancellationError()
        }
    }

    private func fail(_ reason: SharedLimitStoreError.Reason, _ identifier: String)
        -> SharedLimitStoreError
    {
        let error = SharedLimitStoreError(identifier: identifier, reason: reason)
        if health.failed(error, now: Self.now(), skipFor: retryStoreAfter) {
            let fellBack = if case .fallBack = whenStoreFails.kind { true } else { false }
            registry.report(
                .rateLimit, key: identifier,
                .storeFailed(reason: error.reason.description, fellBack: fellBack))
        }
        return error
    }

    /// The instant a script decides at: empty for the Redis server's clock (`TIME`).
    func decisionInstant() -> String { localInstant.map { String($0()) } ?? "" }

    /// `{prefix:identifier}:suffix`: one hash tag per identifier, so a Redis cluster keeps a
    /// key's parts on one node.
    func key(_ identifier: String, _ suffix: String) -> String {
        "{\(keyPrefix):\(identifier)}:\(suffix)"
    }

    /// The in-process key of the fallback, apart from the program's own `rateLimit` keys.
    func fallbackIdentifier(_ identifier: String) -> String {
        "\(keyPrefix)-fallback:\(identifier)"
    }

    /// Whole microseconds (rounded up: a window or a refill is never shorter than asked; a
    /// maximum wait is rounded down), within the range a script's numbers hold exactly.
    static func microseconds(_ duration: Duration, roundingUp: Bool = true) -> Int64 {
        let (quotient, remainder) = duration.attoseconds.quotientAndRemainder(
            dividingBy: 1_000_000_000_000)
        let whole = roundingUp && remainder > 0 ? quotient + 1 : quotient
        return Int64(min(max(whole, 0), Int128(maxMicroseconds)))
    }

    /// 2^52 microseconds, about 142 years: Lua's numbers (doubles) hold every integer up to
    /// 2^53, and an instant plus such a span stays below that.
    static let maxMicroseconds: Int64 = 1 << 52

    /// The most permits a window is measured with in Redis (see `admit`).
    static let maxPermits = 1 << 40

    static func now() -> ContinuousClock.Instant { ContinuousClock.now }
}
