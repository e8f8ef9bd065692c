import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The engine behind Tempo's helpers: it owns the live state of every debounce and throttle
/// group, every pending delay and every registered piece of running work, and the one timer
/// each of them needs.
///
/// The free functions use ``current``: ``shared`` (on `ContinuousClock`) unless a scope made
/// another registry current with ``withCurrent(isolation:_:)-(_,()->R)``. A registry built on a
/// `TempoTesting.ManualClock` lets tests drive that code without sleeping:
///
/// ```swift
/// let clock = ManualClock()
/// let registry = TempoRegistry(clock: clock)
/// await registry.withCurrent {
///     debounce(.milliseconds(300), by: .taskContext) { results.append("query") }
///     await clock.advance(by: .milliseconds(300))   // the debounced call has run
/// }
/// #expect(registry.liveKeyCount == 0)
/// ```
///
/// ## Design
/// The tables sit behind locks, not an actor: they are split into shards by key hash, each
/// behind its own lock, and all the state of one key lives in one shard. A call from
/// synchronous code (a button handler, a loop) is applied before the call returns, so calls made one after another are
/// applied in that order, its instant is read from the clock at the call, and no `Task` is
/// created to carry it. The per-group state machines (`DebounceState`, `ThrottleState`)
/// decide; the registry carries out their actions outside the lock, so user code never runs
/// while the lock is held.
///
/// Each group has at most one timer. A call that moves the group's deadline later does not
/// touch the timer: the timer fires at the old deadline, finds the new one and is re-armed to
/// it. On an ordinary clock the timers are entries of one `TimerDriver` heap served by one
/// runner task, so a live group costs no task.
/// Each timer carries the generation of the group it was armed for; a timer that wakes for a
/// group that was removed or re-armed since does nothing.
public final class TempoRegistry: Sendable {
    let clock: EngineClock
    /// The tables, split by key hash so that callers on distinct keys rarely share a lock.
    private let shards: [Shard]
    /// `shards.count - 1`; the count is a power of two.
    private let shardMask: Int
    private let timerCount = Atomic<Int>(0)
    /// The running named `repeat` loops, by name.
    let repeatsByName = Lock<[String: RepeatControl]>([:])

    /// A registry whose timing runs on `clock`.
    ///
    /// - Parameter clock: Any clock measured in `Duration`. Instants are kept as offsets from
    ///   the clock's reading when the registry is made.
    public convenience init<C: Clock>(clock: C) where C.Duration == Duration {
        self.init(clock: clock, shardCount: Self.defaultShardCount)
    }

    /// A registry with `shardCount` shards (rounded up to a power of two, at least 1), for
    /// measuring how the count matters.
    @_spi(Benchmarks)
    public convenience init<C: Clock>(clock: C, shardCount: Int) where C.Duration == Duration {
        self.init(engineClock: EngineClock(clock), shardCount: shardCount, isShared: false)
        Self.othersExist.store(true, ordering: .relaxed)
    }

    private init(engineClock: EngineClock, shardCount: Int, isShared: Bool) {
        clock = engineClock
        var count = 1
        while count < min(max(shardCount, 1), Self.maximumShardCount) { count <<= 1 }
        let bits = UInt64(count.trailingZeroBitCount)
        shards = (0..<count).map { Shard(index: UInt64($0), bits: bits) }
        shardMask = count - 1
        self.isShared = isShared
    }

    /// The registry of the whole program, on `ContinuousClock`.
    public static let shared = TempoRegistry(
        engineClock: EngineClock(ContinuousClock()), shardCount: defaultShardCount, isShared: true)

    /// Whether this is ``shared``.
    private let isShared: Bool
    @TaskLocal private static var scoped: TempoRegistry?
    /// Set for good once a registry other than ``shared`` is made. Until then no scope can name
    /// another registry, so ``current`` is ``shared`` without reading the task-local value.
    /// (A scope can only name a registry already made, and whatever handed it to the scope's
    /// task, or made the task, orders the store before the reads there: a relaxed load is
    /// enough.)
    private static let othersExist = Atomic<Bool>(false)

    /// The registry the free functions use here: the one made current by the innermost
    /// enclosing ``withCurrent(isolation:_:)-(_,()->R)`` (tasks started inside it inherit it,
    /// as they inherit any task-local value), or the registry whose timer started the operation
    /// running here; else ``shared``.
    public static var current: TempoRegistry {
        guard othersExist.load(ordering: .relaxed) else { return shared }
        return scoped ?? shared
    }

    /// Runs `body` with this registry as ``current``, for the free functions it calls and the
    /// tasks they start, whatever else runs meanwhile.
    ///
    /// ```swift
    /// await TempoRegistry(clock: clock).withCurrent { try await model.search("swift") }
    /// ```
    public func withCurrent<R>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> R
    ) async rethrows -> R {
        try await Self.$scoped.withValue(self, operation: body, isolation: isolation)
    }

    /// Synchronous form of ``withCurrent(isolation:_:)-(_,()->R)``.
    public func withCurrent<R>(_ body: () throws -> R) rethrows -> R {
        try Self.$scoped.withValue(self, operation: body)
    }

    /// Runs a timer's callback with this registry current, so the operations it starts (and
    /// the tasks they start) see the registry that fired them. ``shared`` is current already
    /// wherever no scope says otherwise, so it binds nothing.
    private func firing<R>(_ body: () -> R) -> R {
        if isShared { return body() }
        return Self.$scoped.withValue(self, operation: body)
    }

    /// How many keys hold live state: debounce and throttle groups, pending delays and
    /// registered running work. Zero when the program is idle.
    public var liveKeyCount: Int {
        shards.reduce(0) { total, shard in total + shard.tables.withLock { $0.count } }
    }

    /// The slots the tables have room for: follows the live keys, not the peak (for tests).
    var tableCapacity: Int {
        shards.reduce(0) { total, shard in total + shard.tables.withLock { $0.capacity } }
    }

    /// The time on this registry's clock, as an offset from when the registry was made.
    public var now: Duration { clock.now() }

    /// How many timers this registry has armed since it was made: at most one per group
    /// becoming live (plus one when a call moves a group's deadline earlier), one per `delay`.
    /// A call that is dropped or replaced arms none, so tests and benchmarks read this to check
    /// that no `Task` is made per call.
    public var timersArmed: Int { timerCount.load(ordering: .relaxed) }
}

// MARK: - Tables

extension TempoRegistry {
    /// One group's state, its timer, and the generation that timer was armed for.
    struct Slot<State> {
        var state: State
        var generation: UInt64 = 0
        var timer: TimerRef?
        var timerDeadline: Duration = .zero
    }

    struct Tables {
        var debounces: [GroupKey: Slot<DebounceState<Operation>>] = [:]
        var throttles: [GroupKey: Slot<ThrottleState<Operation>>] = [:]
        var delays: [UInt64: Slot<DelayState>] = [:]
        var work: [UInt64: WorkRecord] = [:]
        /// The last generation or id handed out in this shard; never reused.
        var lastID: UInt64 = 0
        /// This shard's index, and how many low bits of an id hold it.
        let index: UInt64
        let bits: UInt64

        var count: Int { debounces.count + throttles.count + delays.count + work.count }

        var capacity: Int {
            debounces.capacity + throttles.capacity + delays.capacity + work.capacity
        }

        /// A new id for a delay or a work record: its low bits name this shard, so the id
        /// alone finds the shard again.
        mutating func nextID() -> UInt64 {
            lastID &+= 1
            return lastID << bits | index
        }
    }

    /// One lock and the tables behind it. A class, so that the shards can sit in an array.
    final class Shard: Sendable {
        let tables: Lock<Tables>
        init(index: UInt64, bits: UInt64) { tables = Lock(Tables(index: index, bits: bits)) }
    }

    /// At most this many shards, whatever the processor count.
    static let maximumShardCount = 64

    /// The smallest power of two at least four times the number of active processors (capped).
    /// Two callers on distinct keys share a shard with a chance of one in the shard count: with
    /// one shard per core that is one in two on a two-core machine, with four per core one in
    /// eight. A shard costs one small allocation, and only `cancelAll`, `snapshot` and
    /// `liveKeyCount` visit them all.
    static let defaultShardCount: Int = {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
            let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #else
            let cores = 1
        #endif
        var count = 1
        while count < min(max(cores, 1) * 4, maximumShardCount) { count <<= 1 }
        return count
    }()

    /// The shard that holds `key`'s groups, delays and work records.
    @inline(__always)
    func shard(_ key: GroupKey) -> Shard { shards[key.shardHash & shardMask] }

    /// The shard an id of ``Tables/nextID()`` came from.
    @inline(__always)
    func shard(id: UInt64) -> Shard { shards[Int(truncatingIfNeeded: id) & shardMask] }

    /// A pending `delay` or `execute`.
    struct DelayState {
        var key: GroupKey
        var deadline: Duration
        var operation: Operation
    }

    /// The kinds of timer the registry arms.
    fileprivate enum TimerKind {
        case debounce(GroupKey)
        case throttle(GroupKey)
    }

    /// Makes sure a group's timer wakes no later than `wake`. Called with the lock held.
    private func arm<State>(
        _ slot: inout Slot<State>, wake: Duration, kind: TimerKind, lastID: inout UInt64
    ) {
        if slot.timer != nil, slot.timerDeadline <= wake { return }
        slot.timer?.cancel()
        lastID &+= 1
        let generation = lastID
        slot.generation = generation
        slot.timerDeadline = wake
        timerCount.add(1, ordering: .relaxed)
        slot.timer = clock.startTimer(at: wake) { [self] now in
            firing {
                switch kind {
                case .debounce(let key): debounceFired(key, generation: generation, at: now)
                case .throttle(let key): throttleFired(key, generation: generation, at: now)
                }
            }
        }
    }
}

// MARK: - Calls

/// What a call transition returns: the earliest instant the group needs its timer.
protocol WakeReporting { var wake: Duration { get } }
extension DebounceState.CallResult: WakeReporting {}
extension ThrottleState.CallResult: WakeReporting {}

extension TempoRegistry {
    /// Applies a call's transition to a group's slot in place and makes sure its timer wakes in
    /// time. Called with the lock held.
    private func update<State, Result: WakeReporting>(
        _ slot: inout Slot<State>, lastID: inout UInt64, kind: TimerKind,
        _ transition: (inout State) -> Result
    ) -> Result {
        let result = transition(&slot.state)
        arm(&slot, wake: result.wake, kind: kind, lastID: &lastID)
        return result
    }
}

extension TempoRegistry {
    /// A group's timer fired: applies the state's `fire` transition under the lock (unless the
    /// timer is stale: another generation), keeps or removes the group, and launches what is
    /// due outside the lock. Returns when to fire next, or `nil` to end the timer.
    private func fired<State: Sendable>(
        _ table: WritableKeyPath<Tables, [GroupKey: Slot<State>]> & Sendable, _ key: GroupKey,
        generation: UInt64,
        _ fire: @Sendable (inout State) -> (run: Operation?, next: Duration?)
    ) -> Duration? {
        let result = shard(key).tables.withLock { tables -> (run: Operation?, next: Duration?)? in
            guard var slot = tables[keyPath: table][key], slot.generation == generation else {
                return nil
            }
            let result = fire(&slot.state)
            if let next = result.next {
                slot.timerDeadline = next
                tables[keyPath: table][key] = slot
            } else {
                tables[keyPath: table].removeLive(key)
            }
            return result
        }
        result?.run?.launch(clock)
        return result?.next
    }
}

// MARK: - Debounce

extension TempoRegistry {
    /// Applies a debounce call. Returns the task that runs it when it runs at once and is an
    /// ``AsyncOperation``, else `nil`.
    @discardableResult
    func debounce(
        _ key: GroupKey, duration: Duration, option: DebounceOptions, maxWait: Duration? = nil,
        operation: Operation
    ) -> Task<Void, Never>? {
        let now = clock.now()
        guard duration > .zero else { return operation.launchReturningTask(clock) }
        if case .ticket(let ticket) = operation {
            ticket.setWithdrawal { [self] in withdraw($0, debounce: key) }
        }
        let result = shard(key).tables.withLock { tables in
            // One hash: the slot is updated in place (a new group starts with a default slot).
            update(
                &tables.debounces[key, default: Slot(state: DebounceState())],
                lastID: &tables.lastID, kind: .debounce(key)
            ) {
                $0.call(
                    at: now, duration: duration, option: option, maxWait: maxWait,
                    payload: operation)
            }
        }
        result.replaced?.discard()
        result.catchUp?.launch(clock)
        return result.runNow?.launchReturningTask(clock)
    }

    private func debounceFired(_ key: GroupKey, generation: UInt64, at now: Duration) -> Duration? {
        fired(\.debounces, key, generation: generation) {
            let result = $0.fire(at: now)
            return (result.run, result.next)
        }
    }

    private func withdraw(_ ticket: Ticket, debounce key: GroupKey) {
        let timer = shard(key).tables.withLock { tables -> TimerRef? in
            guard var slot = tables.debounces[key], slot.state.pending?.isTicket(ticket) == true
            else { return nil }
            _ = slot.state.cancelPending()
            if slot.state.isIdle(at: clock.now()) {
                tables.debounces.removeLive(key)
                return slot.timer
            }
            tables.debounces[key] = slot
            return nil
        }
        timer?.cancel()
    }
}

// MARK: - Throttle

extension TempoRegistry {
    /// Applies a throttle call. Returns the task that runs it when it runs at once and is an
    /// ``AsyncOperation``, else `nil`.
    @discardableResult
    func throttle(
        _ key: GroupKey, duration: Duration, option: ThrottleOptions, operation: Operation
    ) -> Task<Void, Never>? {
        let now = clock.now()
        guard duration > .zero else { return operation.launchReturningTask(clock) }
        if case .ticket(let ticket) = operation {
            ticket.setWithdrawal { [self] in withdraw($0, throttle: key) }
        }
        let result = shard(key).tables.withLock { tables in
            update(
                &tables.throttles[key, default: Slot(state: ThrottleState())],
                lastID: &tables.lastID, kind: .throttle(key)
            ) { $0.call(at: now, duration: duration, option: option, payload: operation) }
        }
        result.dropped?.discard()
        result.catchUp?.launch(clock)
        return result.runNow?.launchReturningTask(clock)
    }

    private func throttleFired(_ key: GroupKey, generation: UInt64, at now: Duration) -> Duration? {
        fired(\.throttles, key, generation: generation) {
            let result = $0.fire(at: now)
            return (result.run, result.next)
        }
    }

    private func withdraw(_ ticket: Ticket, throttle key: GroupKey) {
        shard(key).tables.withLock { tables in
            guard tables.throttles[key]?.state.trailing?.isTicket(ticket) == true else { return }
            _ = tables.throttles[key]?.state.cancelTrailing()
        }
    }
}

// MARK: - Delay

extension TempoRegistry {
    /// Runs `operation` once `duration` has passed. Durations of zero or less run it at once.
    func delay(_ duration: Duration, key: GroupKey, operation: Operation) {
        let now = clock.now()
        guard duration > .zero else { return operation.launch(clock) }
        let deadline = now.adding(duration)
        shard(key).tables.withLock { tables in
            let id = tables.nextID()
            if case .ticket(let ticket) = operation {
                ticket.setWithdrawal { [self] _ in cancelDelay(id) }
            }
            var slot = Slot(state: DelayState(key: key, deadline: deadline, operation: operation))
            slot.generation = id
            slot.timerDeadline = deadline
            timerCount.add(1, ordering: .relaxed)
            slot.timer = clock.startTimer(at: deadline) { [self] now in
                firing { delayFired(id, at: now) }
            }
            tables.delays[id] = slot
        }
    }

    private func delayFired(_ id: UInt64, at now: Duration) -> Duration? {
        let due = shard(id: id).tables.withLock { tables -> Operation? in
            guard let slot = tables.delays[id] else { return nil }
            guard slot.state.deadline <= now else { return nil }
            tables.delays.removeLive(id)
            return slot.state.operation
        }
        due?.launch(clock)
        return nil
    }

    private func cancelDelay(_ id: UInt64) {
        let slot = shard(id: id).tables.withLock { $0.delays.removeLive(id) }
        slot?.timer?.cancel()
    }
}

// MARK: - Registered work (repeat, retry, timeout, time)

extension TempoRegistry {
    /// What a piece of registered work is doing now; shown by ``snapshot()``.
    struct WorkRecord {
        var kind: TempoSnapshot.Kind
        var key: GroupKey
        var state: TempoSnapshot.State
    }

    /// Registers running work so it appears in ``snapshot()``; returns its id for
    /// ``updateWork(_:_:)`` and ``endWork(_:)``. A lock, no await, no task.
    package func beginWork(
        _ kind: TempoSnapshot.Kind, identifier: String?, fileID: StaticString, line: UInt,
        column: UInt, state: TempoSnapshot.State
    ) -> UInt64 {
        let key = GroupKey(identifier, fileID, line, column)
        return shard(key).tables.withLock { tables in
            let id = tables.nextID()
            tables.work[id] = WorkRecord(kind: kind, key: key, state: state)
            return id
        }
    }

    /// Updates what registered work is doing.
    package func updateWork(_ id: UInt64, _ state: TempoSnapshot.State) {
        shard(id: id).tables.withLock { $0.work[id]?.state = state }
    }

    /// Removes registered work.
    package func endWork(_ id: UInt64) {
        shard(id: id).tables.withLock { _ = $0.work.removeLive(id) }
    }
}

// MARK: - Control and inspection

extension TempoRegistry {
    /// Cancels every pending debounce, throttle and delay call of this registry. Operations
    /// already running go on; cancelled ones never start. Registered running work (repeat,
    /// retry, timeout, time) is not touched: cancel its task.
    ///
    /// A call whose instant has already come when `cancelAll()` is called (its timer is a little
    /// late on a busy clock) is not cancelled: it runs, as it would have a moment earlier.
    ///
    /// ```swift
    /// func userDidSignOut() { TempoRegistry.shared.cancelAll() }
    /// ```
    public func cancelAll() {
        let now = clock.now()
        var timers: [TimerRef] = []
        var due: [Operation] = []
        var dropped: [Operation] = []
        for shard in shards {
            shard.tables.withLock { tables in
                func add(_ timer: TimerRef?, _ outcome: (due: Operation?, dropped: Operation?)) {
                    if let timer { timers.append(timer) }
                    if let operation = outcome.due { due.append(operation) }
                    if let operation = outcome.dropped { dropped.append(operation) }
                }
                for var slot in tables.debounces.values {
                    add(slot.timer, slot.state.cancel(at: now))
                }
                for var slot in tables.throttles.values {
                    add(slot.timer, slot.state.cancel(at: now))
                }
                for slot in tables.delays.values {
                    let operation = slot.state.operation
                    add(
                        slot.timer, slot.state.deadline <= now ? (operation, nil) : (nil, operation)
                    )
                }
                tables.debounces.removeAll()
                tables.throttles.removeAll()
                tables.delays.removeAll()
            }
        }
        for timer in timers { timer.cancel() }
        for operation in dropped { operation.discard() }
        for operation in due { operation.launch(clock) }
    }

    /// What is live in this registry now, per call site or identifier. Empty when idle.
    ///
    /// ```swift
    /// print(TempoRegistry.shared.snapshot())
    /// // debounce  Search/SearchModel.swift:41:9  runs at 12.300 s (in 300.0 ms)
    /// ```
    public func snapshot() -> TempoSnapshot {
        let now = clock.now()
        var entries: [TempoSnapshot.Entry] = []
        for shard in shards {
            shard.tables.withLock { tables in
                for (key, slot) in tables.debounces {
                    let due = slot.state.pending == nil ? nil : slot.state.deadline
                    entries.append(
                        .init(
                            kind: .debounce, key: key.description,
                            state: .debounce(runsAt: due, quietUntil: slot.state.quietUntil)))
                }
                for (key, slot) in tables.throttles {
                    entries.append(
                        .init(
                            kind: .throttle, key: key.description,
                            state: .throttle(
                                windowClosesAt: slot.state.closesAt ?? now,
                                trailingPending: slot.state.trailing != nil)))
                }
                for slot in tables.delays.values {
                    entries.append(
                        .init(
                            kind: .delay, key: slot.state.key.description,
                            state: .delay(runsAt: slot.state.deadline)))
                }
                for record in tables.work.values {
                    entries.append(
                        .init(kind: record.kind, key: record.key.description, state: record.state))
                }
            }
        }
        entries.sort { ($0.kind.rawValue, $0.key) < ($1.kind.rawValue, $1.key) }
        return TempoSnapshot(now: now, entries: entries)
    }
}

// MARK: - Control by key

extension TempoRegistry {
    /// Forgets a debounce group: its pending call never runs, its quiet window ends, its timer
    /// is cancelled and its key is removed. Does nothing for a key that is not live.
    func cancelDebounce(_ key: GroupKey) {
        let now = clock.now()
        guard var slot = shard(key).tables.withLock({ $0.debounces.removeLive(key) }) else {
            return
        }
        slot.timer?.cancel()
        let (due, dropped) = slot.state.cancel(at: now)
        dropped?.discard()
        due?.launch(clock)
    }

    /// Runs a debounce group's pending call now, if it has one.
    func flushDebounce(_ key: GroupKey) {
        let now = clock.now()
        let (run, timer) = shard(key).tables.withLock { tables -> (Operation?, TimerRef?) in
            guard var slot = tables.debounces[key], let run = slot.state.flush(at: now) else {
                return (nil, nil)
            }
            if slot.state.isIdle(at: now) {
                tables.debounces.removeLive(key)
                return (run, slot.timer)
            }
            if let wake = slot.state.quietUntil {
                arm(&slot, wake: wake, kind: .debounce(key), lastID: &tables.lastID)
            }
            tables.debounces[key] = slot
            return (run, nil)
        }
        timer?.cancel()
        run?.launch(clock)
    }

    /// When a debounce group's pending call runs, if it has one.
    func pendingDebounce(_ key: GroupKey) -> PendingCall? {
        let now = clock.now()
        let runsAt = shard(key).tables.withLock { $0.debounces[key]?.state.pendingDeadline }
        return runsAt.map { PendingCall(runsAt: $0, now: now) }
    }

    /// Forgets a throttle group: its trailing call never runs, its window closes, its timer is
    /// cancelled and its key is removed. Does nothing for a key that is not live.
    func cancelThrottle(_ key: GroupKey) {
        let now = clock.now()
        guard var slot = shard(key).tables.withLock({ $0.throttles.removeLive(key) }) else {
            return
        }
        slot.timer?.cancel()
        let (due, dropped) = slot.state.cancel(at: now)
        dropped?.discard()
        due?.launch(clock)
    }

    /// Runs a throttle group's trailing call now, if it has one; the run opens a new window.
    func flushThrottle(_ key: GroupKey) {
        let now = clock.now()
        let (run, timer) = shard(key).tables.withLock { tables -> (Operation?, TimerRef?) in
            guard var slot = tables.throttles[key], let run = slot.state.flush(at: now) else {
                return (nil, nil)
            }
            guard let wake = slot.state.closesAt else {
                tables.throttles.removeLive(key)
                return (run, slot.timer)
            }
            arm(&slot, wake: wake, kind: .throttle(key), lastID: &tables.lastID)
            tables.throttles[key] = slot
            return (run, nil)
        }
        timer?.cancel()
        run?.launch(clock)
    }

    /// When a throttle group's trailing call runs, if it has one.
    func pendingThrottle(_ key: GroupKey) -> PendingCall? {
        let now = clock.now()
        let runsAt = shard(key).tables.withLock { $0.throttles[key]?.state.pendingDeadline }
        return runsAt.map { PendingCall(runsAt: $0, now: now) }
    }
}

extension Dictionary {
    /// Removes `key`, and rebuilds the storage once seven eighths of it are empty, so a table's
    /// memory follows the keys that are live rather than the most there ever were. Rebuilding
    /// costs the live keys, and happens again only after the table shrank eightfold more:
    /// amortized, a constant per removal.
    @discardableResult
    mutating func removeLive(_ key: Key) -> Value? {
        let removed = removeValue(forKey: key)
        if capacity > 64, count * 8 < capacity {
            var compact = [Key: Value](minimumCapacity: count)
            for (key, value) in self { compact[key] = value }
            self = compact
        }
        return removed
    }
}
