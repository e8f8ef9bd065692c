import Synchronization

/// A registry's observer: receives a ``TempoEvent`` for each decision of the resilience
/// helpers, in the order they were reported, one at a time, on a thread of its own.
///
/// Made by ``TempoRegistry/observe(bufferLimit:_:)``; it receives events until ``cancel()``.
/// The engine never waits for it: reporting an event appends it to this observer's buffer,
/// and a thread of the observer's own (started by the first event, ended after a moment with
/// none) hands the buffered events to the handler. So the handler never runs under any of the
/// engine's locks or on the threads Swift's tasks share: a slow or blocking handler delays
/// only its own later events, and a handler that throws is counted in ``failureCount`` and
/// given the next event. No helper's outcome depends on it.
///
/// ```swift
/// let observer = registry.observe { event in log(event.description) }
/// // ...
/// observer.cancel()
/// ```
///
/// On a `TempoTesting.ManualClock` the registry runs on, delivery is work the clock waits for:
/// an `advance` of that clock returns once every event reported before it returns has been
/// handled. After calls that need no advance, or around a helper given another clock with
/// `clock:`, ``waitUntilDelivered()`` waits for their events.
public final class TempoObserver: Sendable {
    /// The list this observer is on, held weakly: the registry owns the list, and the list its
    /// observers, so a strong reference back would keep both alive once the registry is gone.
    private let hub: Lock<WeakHub>
    private let queue: DeliveryQueue

    init(
        hub: EventHub, host: (any DeterministicClock)?, bufferLimit: Int,
        handler: @escaping @Sendable (TempoEvent) throws -> Void
    ) {
        self.hub = Lock(WeakHub(hub: hub))
        queue = DeliveryQueue(host: host, bufferLimit: bufferLimit, handler: handler)
    }

    deinit { queue.close() }

    /// Events not delivered because the buffer already held `bufferLimit` events waiting for
    /// the handler: the newest are dropped, so the engine never waits and memory stays
    /// bounded.
    ///
    /// ```swift
    /// let observer = registry.observe(bufferLimit: 1_000) { print($0) }
    /// // ...
    /// if observer.droppedCount > 0 { print("the log fell behind") }
    /// ```
    public var droppedCount: Int { queue.dropped }

    /// Events whose handler threw. The error is dropped, and the next event is delivered as
    /// usual.
    ///
    /// ```swift
    /// let observer = registry.observe { _ in throw CancellationError() }
    /// // ...
    /// print("\(observer.failureCount) events threw")
    /// ```
    public var failureCount: Int { queue.failures }

    /// Stops this observer: no event reported after this returns reaches it. Events already
    /// buffered are still delivered. Calling it again does nothing.
    ///
    /// ```swift
    /// let observer = TempoRegistry.shared.observe { print($0) }
    /// observer.cancel()
    /// ```
    public func cancel() {
        queue.close()
        hub.withLock { $0.hub }?.remove(self)
    }

    /// Waits until every event reported before the call has been handed to the handler (and
    /// the handler has returned). Returns at once when nothing is buffered.
    ///
    /// ```swift
    /// import Synchronization
    ///
    /// let refusals = Mutex(0)
    /// let observer = registry.observe { _ in refusals.withLock { $0 += 1 } }
    /// let limit = RateLimit(1, per: .seconds(60))
    /// for _ in 0..<3 { try? takeRatePermit(limit, identifier: "api") }
    /// await observer.waitUntilDelivered()
    /// print(refusals.withLock { $0 })   // 2
    /// ```
    public func waitUntilDelivered() async { await queue.waitUntilDelivered() }

    /// Buffers `event`, waking or starting the delivery thread. A lock and an append.
    func enqueue(_ event: TempoEvent) { queue.enqueue(event) }
}

/// A weak reference to an observer's list.
struct WeakHub {
    weak var hub: EventHub?
}

/// A registry's observers, and the one check the helpers make before reporting anything.
final class EventHub: Sendable {
    private let observers = Lock<[TempoObserver]>([])
    private let count = Atomic<Int>(0)
    private let now: @Sendable () -> Duration
    private let host: (any DeterministicClock)?

    init(now: @escaping @Sendable () -> Duration, host: (any DeterministicClock)?) {
        self.now = now
        self.host = host
    }

    /// Whether anyone observes: a relaxed load, all that a decision pays when nobody does.
    @inline(__always)
    var isObserved: Bool { count.load(ordering: .relaxed) != 0 }

    func add(
        bufferLimit: Int, _ handler: @escaping @Sendable (TempoEvent) throws -> Void
    ) -> TempoObserver {
        let observer = TempoObserver(
            hub: self, host: host, bufferLimit: bufferLimit, handler: handler)
        observers.withLock {
            $0.append(observer)
            count.store($0.count, ordering: .relaxed)
        }
        return observer
    }

    func remove(_ observer: TempoObserver) {
        observers.withLock {
            $0.removeAll { $0 === observer }
            count.store($0.count, ordering: .relaxed)
        }
    }

    /// Reports a decision of the helper of `key`, stamped now (or `at`): buffers it for each
    /// observer. No observer runs here, so a transition may report under its shard's lock
    /// when a decision a timer makes next must not be reported first. The key's text is
    /// made only when someone observes.
    @inline(__always)
    func report(
        _ helper: TempoSnapshot.Kind, _ key: GroupKey, _ decision: TempoEvent.Decision,
        at instant: Duration? = nil
    ) {
        guard isObserved else { return }
        report(helper, key.description, decision, at: instant)
    }

    func report(
        _ helper: TempoSnapshot.Kind, _ key: String, _ decision: TempoEvent.Decision,
        at instant: Duration? = nil
    ) {
        let listeners = observers.withLock { $0 }
        guard !listeners.isEmpty else { return }
        let event = TempoEvent(helper: helper, key: key, at: instant ?? now(), decision: decision)
        for observer in listeners { observer.enqueue(event) }
    }
}

extension TempoRegistry {
    /// Starts delivering a ``TempoEvent`` to `handler` for every decision the resilience
    /// helpers make in this registry from now on: breaker changes and rejections, rate-limit
    /// queueing, admissions after a wait, refusals and holds, concurrency-limit queueing, admissions,
    /// refusals and queue timeouts, retries scheduled and stopped, hedges started, won and
    /// failed, and timeouts; and the debounce and throttle calls dropped and run.
    ///
    /// The handler runs on a thread of the observer's own, one event at a time, in the order
    /// the events were reported, never under the engine's locks; the helpers never wait for
    /// it, and a handler that blocks holds no thread Swift's tasks share.
    /// With no observer, a decision pays one relaxed atomic load. See <doc:ObservingDecisions>.
    ///
    /// ```swift
    /// TempoRegistry.shared.observe { event in
    ///     if case .breakerChanged(_, let to) = event.decision {
    ///         print("breaker \(event.key) is now \(to)")
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - bufferLimit: How many events may wait for the handler; past that, new events are
    ///     dropped and counted in ``TempoObserver/droppedCount``. Values below 1 count as 1.
    ///     Defaults to 10,000.
    ///   - handler: Called with each event. An error it throws is counted in
    ///     ``TempoObserver/failureCount`` and otherwise ignored.
    /// - Returns: The observer: keep it to ``TempoObserver/cancel()`` it. Discarding it keeps
    ///   it observing for the registry's lifetime. The registry holds `handler` until then, and
    ///   what it captures: a handler that captures the registry keeps it alive until the
    ///   observer is cancelled.
    @discardableResult
    public func observe(
        bufferLimit: Int = 10_000,
        _ handler: @escaping @Sendable (TempoEvent) throws -> Void
    ) -> TempoObserver {
        events.add(bufferLimit: bufferLimit, handler)
    }
}

extension TempoRegistry {
    /// Reports `decision` on `key` of a `helper` to this registry's observers, at the clock's
    /// reading now (nothing when nobody observes): the door TempoRedis's shared limits report
    /// through, as the in-process helpers do.
    package func report(
        _ helper: TempoSnapshot.Kind, key: String, _ decision: TempoEvent.Decision
    ) {
        guard events.isObserved else { return }
        events.report(helper, key, decision)
    }

    /// Whether anybody observes this registry's decisions.
    package var isObserved: Bool { events.isObserved }
}
