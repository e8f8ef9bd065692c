// A call names `RateLimit`, `RateLimitPolicy` and `RateLimitError`: `import TempoRedis` is
// enough for them.
@_exported import Tempo

/// Rate limits that every instance of a service shares: the same ``RateLimit`` values as
/// Tempo's `rateLimit`, decided in Redis (or Valkey) through your own client.
///
/// Each admission is one script run in Redis, atomic and timed by the Redis server's clock,
/// so instances whose clocks disagree still share one window. A call that must wait reserves
/// its start there (the window's or the bucket's next free instant, in the order calls reached
/// Redis) and sleeps until it in its own process: no polling. Keys expire once idle.
///
/// Make one limiter per store connection (or pool) and keep it; each call names its limit and
/// its identifier, as the in-process `rateLimit` does. The identifier is required: call sites
/// differ between builds of a service, names do not.
///
/// ```swift
/// let shared = SharedRateLimiter(store: redis, whenStoreFails: .fallBack(dividingBy: 4))
/// let profiles = RateLimit.window(100, per: .seconds(1))
///
/// func fetchProfile(_ id: Int) async throws -> String {
///     try await shared.rateLimit(profiles, identifier: "profiles") {
///         "profile \(id)"
///     }
/// }
/// ```
///
/// When the store fails (no answer within ``timeLimit``, unreachable, an error reply), the
/// call follows ``whenStoreFails``: it throws ``SharedLimitStoreError``, or it is decided by
/// an in-process limit you choose. For ``retryStoreAfter`` after a failure, calls go straight
/// to that policy without asking the store; then the next call asks again. The registry's
/// observers see ``Tempo/TempoEvent/Decision/storeFailed(reason:fellBack:)`` when the store
/// starts failing and ``Tempo/TempoEvent/Decision/storeRecovered`` when it answers again.
public struct SharedRateLimiter: Sendable {
    /// Your client, conformed to ``RedisScripting``.
    public let store: any RedisScripting
    /// The start of every key this limiter uses in Redis (`{tempo:identifier}:w`, …).
    public let keyPrefix: String
    /// The longest a call waits for the store's answer before the store counts as failed.
    public let timeLimit: Duration
    /// How long after a failure calls go straight to ``whenStoreFails`` without asking.
    public let retryStoreAfter: Duration
    /// What a call does when the store fails.
    public let whenStoreFails: StoreFailurePolicy
    /// The registry whose observers are told of the store's failures and of the calls, and
    /// which holds the fallback's in-process limits.
    public let registry: TempoRegistry
    let health: StoreHealth
    /// For tests only: decide at this process's own reading of a clock (microseconds) instead
    /// of the Redis server's, to show what a fleet whose clocks disagree would do without it.
    var localInstant: (@Sendable () -> Int64)?
    /// For tests only: how a waiter sleeps until its reserved start (a test oversleeps, as a
    /// task on a loaded machine wakes late).
    var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// A limiter that keeps its limits in `store`.
    ///
    /// ```swift
    /// let shared = SharedRateLimiter(
    ///     store: redis, timeLimit: .milliseconds(100), whenStoreFails: .failClosed)
    /// ```
    ///
    /// - Parameters:
    ///   - store: Your Redis client, conformed to ``RedisScripting``.
    ///   - keyPrefix: The start of every key in Redis; `"tempo"` by default.
    ///   - timeLimit: The longest a call waits for the store's answer; 250 ms by default.
    ///     Zero or less: 1 ms.
    ///   - retryStoreAfter: How long after a failure calls skip the store; 1 s by default.
    ///   - whenStoreFails: Fail closed, or fall back to an in-process limit. No default: a
    ///     limiter that admitted everything when the store failed would do so silently.
    ///   - registry: The registry for events and the fallback's limits; the shared one by
    ///     default.
    public init(
        store: any RedisScripting, keyPrefix: String = "tempo",
        timeLimit: Duration = .milliseconds(250), retryStoreAfter: Duration = .seconds(1),
        whenStoreFails: StoreFailurePolicy, registry: TempoRegistry = .shared
    ) {
        self.store = store
        self.keyPrefix = keyPrefix
        self.timeLimit = max(timeLimit, .milliseconds(1))
        self.retryStoreAfter = max(retryStoreAfter, .zero)
        self.whenStoreFails = whenStoreFails
        self.registry = registry
        health = StoreHealth()
    }

    /// Runs `operation` once a permit of `limit` is free for `identifier` across every
    /// instance that shares the store, in the caller's task: the fleet's form of Tempo's
    /// `rateLimit(_:weight:whenLimited:identifier:operation:)`.
    ///
    /// A call whose permits are free runs at once. Otherwise `policy` decides: `.wait` (the
    /// default) reserves the call's start in Redis, first come first served across the fleet,
    /// and sleeps until it; `.wait(atMost:)` does so only when that start is no more than the
    /// maximum wait away, and otherwise throws `RateLimitError.limited(retryAfter:)` at once
    /// (the store knows the wait when it answers, so nobody waits to be refused); `.reject`
    /// throws unless the permits are free now. Cancelling the task while it sleeps throws
    /// `CancellationError` and gives its reservation back when nobody reserved after it (the
    /// calls after it were told their starts counting it; see the article on shared limits).
    /// A window's call ready to start (in the caller's isolation) more than half the limit's
    /// margin past the instant it asked plus its wait gives its start back when nobody reserved
    /// after it and asks the store again, within what is left of its maximum wait, instead of
    /// starting late; after its third ask it starts however late it is. A `weight` of zero or less, or a limit with no interval, runs at once without
    /// asking the store; a `weight` above what the limit ever admits throws
    /// `RateLimitError.cannotAdmit(weight:burst:)`.
    ///
    /// With a limit made `holdingOnRetryAfter()`, an error of `operation` that carries a
    /// retry-after holds the key in Redis until then, for every instance.
    ///
    /// ```swift
    /// let shared = SharedRateLimiter(store: redis, whenStoreFails: .failClosed)
    /// let limit = RateLimit.window(10, per: .seconds(1))
    /// let page = try await shared.rateLimit(limit, identifier: "api") {
    ///     "page"
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - limit: The permits per interval, as in one process.
    ///   - weight: How many permits this call takes. Defaults to 1.
    ///   - policy: Wait (at most how long) or reject when no permit is free.
    ///   - identifier: The key's name, the same on every instance.
    ///   - operation: The work to run once admitted, in the caller's isolation.
    /// - Returns: What `operation` returns.
    /// - Throws: `RateLimitError` when refused, ``SharedLimitStoreError`` when the store
    ///   failed and the policy fails closed, `CancellationError`, and what `operation` throws.
    public nonisolated(nonsending) func rateLimit<Value>(
        _ limit: RateLimit,
        weight: Int = 1,
        whenLimited policy: RateLimitPolicy = .wait,
        identifier: String,
        operation: nonisolated(nonsending) () async throws -> Value
    ) async throws -> Value {
        switch try await admit(limit, weight: weight, policy: policy, identifier: identifier) {
        case .admitted:
            do {
                return try await operation()
            } catch {
                if limit.holdsOnRetryAfter { await holdIfAsked(by: error, limit, identifier) }
                throw error
            }
        case .fallBack(let local, let policy):
            // In the limiter's registry, whatever registry is current for the caller.
            return try await registry.withCurrent {
                try await Tempo.rateLimit(
                    local, weight: weight, whenLimited: policy,
                    identifier: fallbackIdentifier(identifier), operation: operation)
            }
        }
    }

    /// Waits until a permit of `limit` is free for `identifier` across the fleet and takes it,
    /// without wrapping an operation; as
    /// ``rateLimit(_:weight:whenLimited:identifier:operation:)`` otherwise.
    ///
    /// ```swift
    /// let shared = SharedRateLimiter(store: redis, whenStoreFails: .failClosed)
    /// try await shared.takePermit(.window(10, per: .seconds(1)), identifier: "api")
    /// ```
    ///
    /// - Parameters:
    ///   - limit: The permits per interval, as in one process.
    ///   - weight: How many permits this call takes. Defaults to 1.
    ///   - policy: Wait (at most how long) or reject when no permit is free.
    ///   - identifier: The key's name, the same on every instance.
    /// - Throws: As ``rateLimit(_:weight:whenLimited:identifier:operation:)``.
    public nonisolated(nonsending) func takePermit(
        _ limit: RateLimit, weight: Int = 1, whenLimited policy: RateLimitPolicy = .wait,
        identifier: String
    ) async throws {
        try await rateLimit(limit, weight: weight, whenLimited: policy, identifier: identifier) {}
    }

    /// Holds `identifier`'s permits until `retryAfter` from now, for every instance (what a
    /// limit made `holdingOnRetryAfter()` does on an error that carries a retry-after).
    ///
    /// ```swift
    /// let shared = SharedRateLimiter(store: redis, whenStoreFails: .failClosed)
    /// try await shared.hold(
    ///     .window(10, per: .seconds(1)), identifier: "api", for: .seconds(30))
    /// ```
    ///
    /// - Parameters:
    ///   - limit: The limit the key is used with (a window and a bucket hold differently).
    ///   - identifier: The key's name.
    ///   - retryAfter: How long no call of the key is admitted.
    /// - Throws: ``SharedLimitStoreError`` when the store failed.
    public func hold(_ limit: RateLimit, identifier: String, for retryAfter: Duration)
        async throws
    {
        guard retryAfter > .zero else { return }
        let after = String(Self.microseconds(retryAfter))
        let arguments: [String]
        let keys: [String]
        switch limit.measure {
        case .unlimited: return
        case .window:
            keys = [key(identifier, "h")]
            arguments = [decisionInstant(), after, "", ""]
        case .bucket(let refill, let burst):
            keys = [key(identifier, "b")]
            arguments = [
                decisionInstant(), after, String(Self.microseconds(refill)), String(burst),
            ]
        }
        _ = try await run(.hold, keys: keys, arguments: arguments, identifier: identifier)
        registry.report(.rateLimit, key: identifier, .rateLimitHeld(for: retryAfter))
    }

    /// Forgets `identifier`'s state in Redis (both kinds of limit, and any hold), for every
    /// instance.
    ///
    /// ```swift
    /// let shared = SharedRateLimiter(store: redis, whenStoreFails: .failClosed)
    /// try await shared.reset(identifier: "api")
    /// ```
    ///
    /// - Parameter identifier: The key's name.
    /// - Throws: ``SharedLimitStoreError`` when the store failed.
    public func reset(identifier: String) async throws {
        let keys = ["w", "h", "b"].map { key(identifier, $0) }
        _ = try await run(.reset, keys: keys, arguments: [], identifier: identifier)
    }
}
