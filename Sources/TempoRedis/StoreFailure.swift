import Tempo

/// What a ``SharedRateLimiter``'s call does when the store fails: slow past the limiter's
/// time limit, unreachable, or answering an error.
///
/// ```swift
/// let strict = SharedRateLimiter(store: redis, whenStoreFails: .failClosed)
/// let lenient = SharedRateLimiter(
///     store: redis, whenStoreFails: .fallBack(dividingBy: 4))
/// ```
public struct StoreFailurePolicy: Sendable {
    enum Kind: Sendable {
        case failClosed
        case fallBack(@Sendable (RateLimit) -> RateLimit)
    }

    let kind: Kind

    /// The call throws ``SharedLimitStoreError``, which says what failed: nothing runs
    /// unless the shared limit admitted it.
    ///
    /// ```swift
    /// let shared = SharedRateLimiter(store: redis, whenStoreFails: .failClosed)
    /// ```
    public static let failClosed = StoreFailurePolicy(kind: .failClosed)

    /// The call is decided by an in-process limit instead: `local` turns the shared limit
    /// into it (same weights, policy and hold; the identifier gets a key of its own in the
    /// limiter's registry).
    ///
    /// ```swift
    /// let shared = SharedRateLimiter(
    ///     store: redis, whenStoreFails: .fallBack { _ in .window(20, per: .seconds(1)) })
    /// ```
    ///
    /// - Parameter local: The in-process limit for a shared one.
    /// - Returns: The policy.
    public static func fallBack(to local: @escaping @Sendable (RateLimit) -> RateLimit)
        -> StoreFailurePolicy
    {
        StoreFailurePolicy(kind: .fallBack(local))
    }

    /// The call is decided by the shared limit divided among `instances` in this process:
    /// `permits / instances` (at least 1) per interval, with the same window margin or burst
    /// share (see ``Tempo/RateLimit/dividedAmong(_:)``). With as many instances as that
    /// running, the fleet stays within the limit while the store is out.
    ///
    /// ```swift
    /// let shared = SharedRateLimiter(store: redis, whenStoreFails: .fallBack(dividingBy: 4))
    /// ```
    ///
    /// - Parameter instances: How many instances share the limit; less than 1 is 1.
    /// - Returns: The policy.
    public static func fallBack(dividingBy instances: Int) -> StoreFailurePolicy {
        .fallBack { $0.dividedAmong(instances) }
    }
}

extension RateLimit {
    /// This limit's share for one of `instances`: `permits / instances` (at least 1) per the
    /// same interval; a window keeps its margin, a bucket's burst is divided too (at least 1).
    /// The hold on retry-after is kept. Less than 1 instance is 1.
    ///
    /// ```swift
    /// let share = RateLimit.window(100, per: .seconds(1)).dividedAmong(4)   // 25 a second
    /// ```
    ///
    /// - Parameter instances: How many instances share the limit.
    /// - Returns: One instance's share.
    public func dividedAmong(_ instances: Int) -> RateLimit {
        let count = max(instances, 1)
        let share = max(permits / count, 1)
        var local =
            if let margin {
                RateLimit.window(share, per: interval, margin: margin)
            } else {
                RateLimit(share, per: interval, burst: max(burst / count, 1))
            }
        local = local.holdingOnRetryAfter(holdsOnRetryAfter)
        return local
    }
}

/// A shared limit's store failed, so the call was not decided there (and the limiter fails
/// closed).
///
/// ```swift
/// let shared = SharedRateLimiter(store: redis, whenStoreFails: .failClosed)
/// do {
///     try await shared.takePermit(.window(10, per: .seconds(1)), identifier: "api")
/// } catch let error as SharedLimitStoreError {
///     // the shared limit "api": the store gave no answer within 0.25 seconds
///     print(error)
/// }
/// ```
public struct SharedLimitStoreError: Error, Sendable, CustomStringConvertible, TempoRefusal {
    /// What went wrong.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// No answer within the limiter's time limit.
        case timedOut(after: Duration)
        /// The client threw: an error reply, a refused or broken connection (its text).
        case failed(String)
        /// The store answered something that is not a script's reply.
        case unexpectedReply([Int64])

        /// The reason in a few words.
        public var description: String {
            switch self {
            case .timedOut(let after): "the store gave no answer within \(after)"
            case .failed(let error): "the store failed: \(error)"
            case .unexpectedReply(let reply): "the store answered \(reply), not a script's reply"
            }
        }
    }

    /// The identifier of the call's limit.
    public let identifier: String
    /// What went wrong.
    public let reason: Reason

    /// The identifier and the reason, such as `the shared limit "api": the store gave no
    /// answer within 0.25 seconds`.
    public var description: String { "the shared limit \"\(identifier)\": \(reason)" }
}

/// Whether the store failed lately: for a while after a failure, calls skip it.
final class StoreHealth: Sendable {
    private struct State {
        var failing = false
        var skipUntil: ContinuousClock.Instant?
        var lastFailure: SharedLimitStoreError?
    }

    private let state = Lock(State())

    /// The failure to act on without asking the store, while calls skip it.
    func skipping(now: ContinuousClock.Instant) -> SharedLimitStoreError? {
        state.withLock { state in
            guard let until = state.skipUntil, now < until else { return nil }
            return state.lastFailure
        }
    }

    /// Records a failure; `true` when the store was not failing before (report it).
    func failed(_ error: SharedLimitStoreError, now: ContinuousClock.Instant, skipFor: Duration)
        -> Bool
    {
        state.withLock { state in
            defer {
                state.failing = true
                state.lastFailure = error
                state.skipUntil = skipFor > .zero ? now.advanced(by: skipFor) : nil
            }
            return !state.failing
        }
    }

    /// Records an answer; `true` when the store was failing before (report the recovery).
    func recovered() -> Bool {
        state.withLock { state in
            guard state.failing else { return false }
            state = State()
            return true
        }
    }
}

/// Runs a store call with a time limit. The call runs in a task of its own: a client that
/// does not stop when cancelled is left to finish in the background, and its caller is not
/// held past the limit.
enum TimeLimited {
    enum Outcome<Value: Sendable>: Sendable {
        case answered(Value)
        case failed(any Error)
        case timedOut
        case cancelled
    }

    /// The first outcome wins: the work's, the timer's or the caller's cancellation.
    private final class Race<Value: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Outcome<Value>, Never>?
            var outcome: Outcome<Value>?
        }

        private let state = Lock(State())

        func finish(_ outcome: Outcome<Value>) {
            let waiting = state.withLock { state -> CheckedContinuation<Outcome<Value>, Never>? in
                guard state.outcome == nil else { return nil }
                state.outcome = outcome
                defer { state.continuation = nil }
                return state.continuation
            }
            waiting?.resume(returning: outcome)
        }

        func wait(_ continuation: CheckedContinuation<Outcome<Value>, Never>) {
            let finished = state.withLock { state -> Outcome<Value>? in
                if let outcome = state.outcome { return outcome }
                state.continuation = continuation
                return nil
            }
            if let finished { continuation.resume(returning: finished) }
        }
    }

    static func run<Value: Sendable>(
        within limit: Duration, _ work: @escaping @Sendable () async throws -> Value
    ) async -> Outcome<Value> {
        let race = Race<Value>()
        let worker = Task {
            do { race.finish(.answered(try await work())) } catch { race.finish(.failed(error)) }
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            race.finish(.timedOut)
        }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { race.wait($0) }
        } onCancel: {
            race.finish(.cancelled)
        }
        // The store call is not cancelled: a client that closes its connection when a command
        // is cancelled (valkey-swift does) would fail the commands queued behind it. It ends
        // in the background, its answer dropped.
        _ = worker
        timer.cancel()
        return outcome
    }
}
