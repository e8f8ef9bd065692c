import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The engine behind Tempo's helpers: it owns the live state of every debounce and throttle
/// group, pending delay, rate limit, concurrency limit, retry budget and circuit breaker, a
/// record of every piece of running work (`repeat`, `retry`, `timeout`, `time`, `hedge`), and
/// the one timer each of them needs.
///
/// The free functions use ``current``: ``shared`` (on `ContinuousClock`) unless a scope made
/// another registry current with ``withCurrent(isolation:_:)``. A registry built on a
/// `TempoTesting.ManualClock` lets tests drive that code without sleeping:
///
/// ```swift
/// let clock = ManualClock()
/// let registry =
///     TempoRegistry(clock: clock)
/// await registry.withCurrent {
///     debounce(
///         .milliseconds(300),
///         by: .taskContext
///     ) { results.append("query") }
///     // runs the debounced call
///     await clock.advance(
///         by: .milliseconds(300)
///     )
/// }
/// #expect(
///     registry.liveKeyCount == 0
/// )
/// ```
///
/// ## Design
/// The tables sit behind locks, not an actor, split into shards by key hash. A call from
/// synchronous code is applied before it returns, in the order calls are made, stamped with
/// the clock at the call, with no `Task`; your code never runs while a lock is held. Each group
/// has at most one timer, and a live group costs no task. <doc:Architecture> walks through
/// the engine (shards, locks, timers), and <doc:Guarantees> says what it promises.
public final class TempoRegistry: Sendable {
    let clock: EngineClock
    /// The tables, split by key hash so that callers on distinct keys rarely share a lock.
    let shards: [Shard]
    /// Owns the shards' storage: freed when the registry is.
    private let shardStorage: ShardStorage
    /// `shards.count - 1`; the count is a power of two.
    let shardMask: Int
    let timerCount = Atomic<Int>(0)
    /// Drains in progress (see ``drain(within:)``): read by every debounce and throttle call,
    /// so kept here, where reading it costs a load and no reference count.
    let drainCount = Atomic<Int>(0)
    /// The observers of the helpers' decisions (see ``observe(bufferLimit:_:)``).
    let events: EventHub

    /// A registry whose timing runs on `clock`.
    ///
    /// The new registry is not current anywhere yet: make it current with
    /// ``withCurrent(isolation:_:)``, or hand it to a ``Debouncer`` or ``Throttler``
    /// as their `registry:`. On a `TempoTesting.ManualClock` its timers fire only when the test
    /// advances the clock.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let registry = TempoRegistry(clock: clock)
    /// let saver = Debouncer(.seconds(1), registry: registry)
    /// ```
    ///
    /// - Parameter clock: Any clock measured in `Duration`. Instants are kept as offsets from
    ///   the clock's reading when the registry is made; on a `TempoTesting.ManualClock`, as
    ///   the clock's own offsets.
    public convenience init<C: Clock>(clock: C) where C.Duration == Duration {
        self.init(clock: clock, shardCount: Self.defaultShardCount)
    }

    /// A registry with `shardCount` shards (rounded up to a power of two, at least 1), for
    /// measuring how the count matters.
    @_spi(Benchmarks)
    public convenience init<C: Clock>(clock: C, shardCount: Int) where C.Duration == Duration {
        self.init(engineClock: EngineClock(clock), shardCount: shardCount, isShared: false)
    }

    private init(engineClock: EngineClock, shardCount: Int, isShared: Bool) {
        clock = engineClock
        var count = 1
        while count < min(max(shardCount, 1), Self.maximumShardCount) { count <<= 1 }
        let bits = UInt64(count.trailingZeroBitCount)
        shardStorage = ShardStorage(count: count, bits: bits)
        shards = shardStorage.shards
        shardMask = count - 1
        self.isShared = isShared
        events = EventHub(now: engineClock.now, host: engineClock.host)
        engineClock.host?.attach(self)
    }

    /// The registry of the whole program, on `ContinuousClock`: ``current`` wherever no
    /// ``withCurrent(isolation:_:)`` scope names another.
    ///
    /// ```swift
    /// print(TempoRegistry.shared.snapshot())
    /// ```
    public static let shared = TempoRegistry(
        engineClock: EngineClock(ContinuousClock()), shardCount: defaultShardCount, isShared: true)

    /// Whether this is ``shared``.
    private let isShared: Bool
    @TaskLocal private static var scoped: Binding?

    /// One scope's binding of a registry as ``current``: what a `withCurrent` scope, or a timer
    /// of a registry other than ``shared``, puts in the task-local value. While a binding of a
    /// registry other than ``shared`` is alive (its scope runs, or a task that inherited it
    /// does), ``current`` reads the task-local value. While none is, every binding a task can
    /// have names ``shared``, so ``current`` is ``shared`` without reading it: in a program that
    /// only ever uses ``shared``, and once every scope of another registry has ended, the free
    /// functions do not pay for the lookup (and the retain and release that come with it).
    ///
    /// A relaxed count is enough. A task that has a binding holds it, so the binding's increment
    /// is not yet undone; and the task reads the count after the increment (made in the task
    /// before it bound the value, or before it was started by the task that did), so it sees
    /// that increment or a later value, which the live binding keeps above zero.
    final class Binding: Sendable {
        let registry: TempoRegistry
        /// Keeps two bindings off one cache line: a task inside a scope retains and releases its
        /// binding on every call, and two threads doing that to neighbouring objects would slow
        /// each other down as if they shared one.
        private let padding: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        private static let live = Atomic<Int>(0)
        static var anyLive: Bool { live.load(ordering: .relaxed) != 0 }

        init(_ registry: TempoRegistry) {
            self.registry = registry
            if !registry.isShared { Self.live.add(1, ordering: .relaxed) }
        }

        deinit { if !registry.isShared { Self.live.subtract(1, ordering: .relaxed) } }
    }

    /// The registry the free functions use here: the one made current by the innermost
    /// enclosing ``withCurrent(isolation:_:)`` (tasks started inside it inherit it,
    /// as they inherit any task-local value), or the registry whose timer started the operation
    /// running here; else ``shared``.
    ///
    /// ```swift
    /// let liveHere = TempoRegistry.current.liveKeyCount
    /// ```
    public static var current: TempoRegistry {
        withCurrentRegistry { $0 }
    }

    /// Runs `body` with ``current``: what the free functions' hot paths use. Handing ``shared``
    /// to a closure borrows it, where returning it from ``current`` retains and releases it,
    /// on every call, on the one object every caller of the program shares.
    @inline(__always) @discardableResult
    static func withCurrentRegistry<R, Failure: Error>(
        _ body: (TempoRegistry) throws(Failure) -> R
    ) throws(Failure) -> R {
        guard Binding.anyLive, let binding = scoped else { return try body(shared) }
        return try body(binding.registry)
    }

    /// Runs `body` with this registry as ``current``, for the free functions it calls and the
    /// tasks they start, whatever else runs meanwhile.
    ///
    /// The scope is a task-local binding: it ends when `body` returns, and `Task { }` started
    /// inside it inherits it, while `Task.detached` does not.
    ///
    /// ```swift
    /// try await TempoRegistry(clock: clock).withCurrent { try await model.search("swift") }
    /// ```
    ///
    /// The error keeps its type. Swift infers `any Error` for a closure that throws unless the
    /// closure says otherwise, so name the type to keep it:
    ///
    /// ```swift
    /// do {
    ///     try await registry.withCurrent { () async throws(RateLimitError) in
    ///         try takeRatePermit(RateLimit(10, per: .seconds(1)), identifier: "api")
    ///     }
    /// } catch {
    ///     print(error.retryAfter ?? .zero)   // error is a RateLimitError
    /// }
    /// ```
    ///
    /// A `body` that does not `await` picks the synchronous form, ``withCurrent(_:)``, and an
    /// `await` before the call then draws the compiler's "no 'async' operations occur within
    /// 'await' expression"; to get this form, mark the closure `() async in`.
    ///
    /// - Parameters:
    ///   - isolation: The actor `body` runs on: the caller's, filled in for you.
    ///   - body: The code that sees this registry as ``current``.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, with its type; this method throws nothing of its own.
    public func withCurrent<R, Failure: Error>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(Failure) -> R
    ) async throws(Failure) -> R {
        // The task-local scope rethrows untyped errors: the result crosses it as a value. The
        // closure names `isolation`, which isolates it to the caller's actor: a closure that
        // did not would be nonisolated, and leave the caller's actor (and give its turn away)
        // on its way into `body` and again on the way out.
        let result = await Self.$scoped.withValue(
            Binding(self),
            operation: { () async -> Result<R, Failure> in
                _ = isolation
                do throws(Failure) { return .success(try await body()) } catch {
                    return .failure(error)
                }
            }, isolation: isolation)
        return try result.get()
    }

    /// Synchronous form of ``withCurrent(isolation:_:)``: runs `body` at once with
    /// this registry as ``current``.
    ///
    /// ```swift
    /// let registry = TempoRegistry(clock: clock)
    /// registry.withCurrent {
    ///     debounce(identifier: "search", by: .taskContext) { search(text) }
    /// }
    /// let waiting = registry.pendingDebounce(identifier: "search") != nil   // true
    /// ```
    ///
    /// - Parameter body: The code that sees this registry as ``current``.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, with its type; this method throws nothing of its own.
    public func withCurrent<R, Failure: Error>(_ body: () throws(Failure) -> R) throws(Failure) -> R
    {
        let result = Self.$scoped.withValue(Binding(self)) { () -> Result<R, Failure> in
            do throws(Failure) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Runs a timer's callback with this registry current, so the operations it starts (and
    /// the tasks they start) see the registry that fired them. ``shared`` is current already
    /// wherever no scope says otherwise, so it binds nothing.
    func firing<R>(_ body: () -> R) -> R {
        if isShared { return body() }
        return Self.$scoped.withValue(Binding(self), operation: body)
    }

    /// How many keys hold live state: debounce and throttle groups, pending delays and
    /// registered running work (a `repeat`, `retry`, `timeout` or `time` in progress). Zero
    /// when the program is idle.
    ///
    /// ```swift
    /// let registry = TempoRegistry(clock: clock)
    /// await registry.withCurrent {
    ///     delay(.seconds(1), by: .taskContext) { save() }
    ///     await clock.advance(by: .seconds(1))
    /// }
    /// #expect(registry.liveKeyCount == 0)   // nothing left behind
    /// ```
    public var liveKeyCount: Int {
        var total = 0
        forEachShard { total += $0.count }
        return total
    }

    /// The slots the tables have room for: follows the live keys, not the peak (for tests).
    var tableCapacity: Int {
        var total = 0
        forEachShard { total += $0.capacity }
        return total
    }

    /// The time on this registry's clock, as an offset from when the registry was made (on a
    /// `TempoTesting.ManualClock`, the clock's own offset, so a registry made on
    /// `ManualClock(now: .init(offset: .seconds(10)))` reads 10 s): the scale of
    /// ``PendingCall/runsAt`` and of ``TempoSnapshot``'s instants.
    ///
    /// ```swift
    /// if let runsAt = registry.pendingDebounce(identifier: "save")?.runsAt {
    ///     print("saves in \(runsAt - registry.now)")
    /// }
    /// ```
    public var now: Duration { clock.now() }

    /// How many timers this registry has armed since it was made: at most one per group
    /// becoming live (plus one when a call moves a group's deadline earlier), one per `delay`.
    /// A call that is dropped or replaced arms none, so tests and benchmarks read this to check
    /// that no `Task` is made per call.
    ///
    /// ```swift
    /// let registry = TempoRegistry(clock: clock)
    /// registry.withCurrent {
    ///     for text in ["s", "sw", "swi"] { debounce(by: .taskContext) { search(text) } }
    /// }
    /// #expect(registry.timersArmed == 1)   // one burst, one timer
    /// ```
    public var timersArmed: Int { timerCount.load(ordering: .relaxed) }
}
