// The whole-registry verbs for shutting down without losing work: `flushAll()` runs every
// pending debounce and throttle call now, and `drain(within:)` does that and then waits until
// nothing the registry holds or launched is left to run.

extension TempoRegistry {
    /// Runs every pending debounce and throttle call of this registry now, each with its latest
    /// operation, on its actor: what ``flushDebounce(identifier:)``, ``Debouncer/flush()`` and
    /// their throttle forms do for one group, done for every group at once. Groups keyed by
    /// call site are flushed too.
    ///
    /// Nothing else changes: a group whose quiet window or throttle window is still open stays
    /// live (its next call is treated as it would have been), pending `delay` and `execute`
    /// calls keep their instants, and running work (`repeat`, `retry`, `timeout`, `time`),
    /// rate limits, concurrency limits, breakers and their waiting callers are not touched.
    /// The flushed operations start in no particular order across groups. An operation that
    /// runs in its caller (`.taskContext`) runs here, before `flushAll()` returns.
    ///
    /// Safe to call from inside an operation: no lock is held while operations run, and the
    /// operation calling it is running, not pending, so it is not run again.
    ///
    /// ```swift
    /// func sceneDidEnterBackground() {
    ///     TempoRegistry.shared.flushAll()   // every pending save starts now
    /// }
    /// ```
    public func flushAll() {
        let now = clock.now()
        var flushed = FlushedEntries()
        forEachShard { tables in
            flushed.take(DebounceState<Operation>.self, from: &tables, at: now, registry: self)
            flushed.take(ThrottleState<Operation>.self, from: &tables, at: now, registry: self)
        }
        for timer in flushed.timers { timer.cancel() }
        // Operations the registry starts see it as current, as a timer's do.
        firing {
            for (operation, stamp) in flushed.runs { operation.launch(clock, reporting: stamp) }
        }
        // Only when something ran: a drain's own flush that ran nothing must not wake it, or it
        // would look again for ever. (A `.taskContext` run happens right here, uncounted.)
        if !flushed.runs.isEmpty { pulseDrains() }
    }

    /// What `flushAll()` collects under the locks and carries out after them.
    private struct FlushedEntries {
        var timers: [TimerRef] = []
        /// The calls that run, each with the stamp of its flush.
        var runs: [(Operation, CallStamp?)] = []

        /// Flushes every entry of one kind in a shard; an entry left idle leaves its table.
        mutating func take<Entry: GroupEntry>(
            _: Entry.Type, from tables: inout Tables, at now: Duration, registry: TempoRegistry
        ) {
            Entry.access(&tables) { table, ids in
                var idle: [Entry.Key] = []
                for index in table.indices {
                    guard let run = table.values[index].state.flush(at: now) else { continue }
                    let key = table.keys[index]
                    runs.append((run, registry.stamp(Entry.self, key, at: now)))
                    if table.values[index].state.isIdle(at: now) {
                        idle.append(key)
                    } else if let wake = table.values[index].state.nextWake {
                        registry.arm(&table.values[index], key: key, wake: wake, ids: &ids)
                    }
                }
                for key in idle {
                    if let timer = table.removeLive(key)?.timer { timers.append(timer) }
                }
            }
        }
    }

    /// Runs every pending debounce and throttle call now (``flushAll()``), then waits until
    /// every operation this registry launched has finished and no pending `delay` or `execute`
    /// call is left, or until `timeLimit` has passed on the registry's clock. Returns what it
    /// found: complete, or what was still running and pending when it stopped.
    ///
    /// While a drain is in progress, debounce and throttle calls are applied as usual (each
    /// replaces, keeps or drops what its mode says), and a call left pending runs at once, as
    /// if flushed: a call made during a drain is not lost, and the drain waits for it too.
    /// `delay` and `execute` calls keep their instants: the drain waits for them to run. Work
    /// the registry does not launch is not waited for: `repeat`, `retry`, `timeout`, `time` and
    /// `hedge` run in their callers' tasks, and callers waiting in a rate limit, a concurrency limit or
    /// a breaker are waiting in their own tasks (cancel those tasks to stop them); they show in
    /// the report's ``DrainReport/snapshot``.
    ///
    /// Operations a flush or a drain starts see this registry as ``TempoRegistry/current``, as
    /// the operations its timers start do.
    ///
    /// A drain started from inside an operation this registry launched makes that operation
    /// *draining* until the drain returns, and waits for every operation that is not draining:
    /// not for the one it is called from (which would wait for itself), nor for others that are
    /// draining (each is already waiting for everything else, so drains in two operations would
    /// otherwise wait for each other for ever). Drains in several operations, nested ones
    /// included, all return once everything else is done. A drain started from anywhere else
    /// (no operation of this registry waits for it) waits for every operation, draining ones
    /// included, so when it completes they have all finished. An operation that awaits an
    /// operation that drains is still waited for by that drain, which then waits until its time
    /// limit: give it one. Cancelling the drain's task ends the wait at once, with an
    /// incomplete report.
    ///
    /// On a `TempoTesting.ManualClock`, the drain waits while the test advances the clock: its
    /// task counts as asleep on the clock, and pending delays and the time limit come due as the
    /// clock reaches them.
    ///
    /// ```swift
    /// func shutDown() async {
    ///     let report = await TempoRegistry.shared.drain(within: .seconds(10))
    ///     if !report.isComplete { log.warning("shut down with work left: \(report)") }
    /// }
    /// ```
    ///
    /// - Parameter timeLimit: The longest to wait, on the registry's clock; `nil` (the
    ///   default): no limit. Zero or negative: flush, then report at once without waiting.
    /// - Returns: Whether everything finished, and otherwise what was left.
    @discardableResult
    public func drain(within timeLimit: Duration? = nil) async -> DrainReport {
        guard let work = clock.work else { preconditionFailure("a registry's clock counts work") }
        let startedAt = clock.now()
        let deadline = timeLimit.map { startedAt.adding(max($0, .zero)) }
        // The operation of this registry the drain is called from, if any: draining while the
        // drain lasts. A drain called from an operation waits for no draining operation (it
        // would wait for itself, and for a drain in another operation that waits for it); one
        // called from elsewhere is waited for by no operation, and waits for them all.
        let own = SettleToken.current.flatMap { $0.work === work ? $0 : nil }
        // The task's token on a manual clock: asleep on the clock while the drain waits.
        let caller = SettleToken.current(of: clock.host)
        // Before the first flush: a call applied after it takes the shard's lock after the
        // flush released it, and so sees the count (see `isDraining`).
        drainCount.add(1, ordering: .sequentiallyConsistent)
        work.beginDrain()
        // After `beginDrain`: the drains asleep now, or about to sleep, see the change.
        let draining = own?.beginDraining() ?? false
        defer {
            if draining { own?.endDraining() }
            work.endDrain()
            drainCount.subtract(1, ordering: .sequentiallyConsistent)
        }
        let timer = deadline.flatMap { deadline in
            deadline > startedAt
                ? clock.startTimer(at: deadline) { [work] _ in
                    work.pulse()
                    return nil
                } : nil
        }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            while true {
                let epoch = work.epoch
                flushAll()
                let pending = pendingEntries()
                let running = draining ? work.waitedForCount : work.runningCount
                let now = clock.now()
                if running == 0, pending.isEmpty {
                    return DrainReport(
                        isComplete: true, wasCancelled: false, runningOperations: 0,
                        pending: [], snapshot: snapshotAfterDrain(), startedAt: startedAt,
                        endedAt: now)
                }
                let cancelled = Task.isCancelled
                if cancelled || deadline.map({ now >= $0 }) == true {
                    return DrainReport(
                        isComplete: false, wasCancelled: cancelled, runningOperations: running,
                        pending: pending, snapshot: snapshotAfterDrain(), startedAt: startedAt,
                        endedAt: now)
                }
                await work.sleep(after: epoch, caller: caller)
            }
        } onCancel: {
            work.pulse()
        }
    }

    /// Whether a drain is in progress: calls flush what they leave pending. A call that reads
    /// `false` was applied before the drain's first flush took its shard's lock, so that flush
    /// finds its pending call; relaxed is enough, the lock orders the two.
    @inline(__always)
    var isDraining: Bool { drainCount.load(ordering: .relaxed) != 0 }

    /// Something a drain waits for may have changed (a timer fired, an entry was cancelled).
    @inline(__always)
    func pulseDrains() {
        // After the change, under the shard's lock: a drain that missed it sees the count.
        if drainCount.load(ordering: .sequentiallyConsistent) != 0 { clock.work?.pulse() }
    }

    /// The snapshot a drain reports: what is live as it returns, with `isDraining` saying
    /// whether another drain is still in progress (this one is ending).
    private func snapshotAfterDrain() -> TempoSnapshot {
        let live = snapshot()
        return TempoSnapshot(
            now: live.now, entries: live.entries, runningOperations: live.runningOperations,
            isDraining: drainCount.load(ordering: .sequentiallyConsistent) > 1)
    }

    /// The debounce, throttle and delay entries with a call waiting, as ``snapshot()`` shows
    /// them (and sorts them).
    private func pendingEntries() -> [TempoSnapshot.Entry] {
        snapshot().entries.filter { entry in
            switch entry.state {
            case .debounce(let runsAt, _): runsAt != nil
            case .throttle(_, let trailingPending): trailingPending
            case .delay: true
            default: false
            }
        }
    }
}

/// What ``TempoRegistry/drain(within:)`` found when it returned.
///
/// ```swift
/// let report = await registry.drain(
///     within: .seconds(5)
/// )
/// if !report.isComplete {
///     print(report)
/// }
/// ```
///
/// With an operation still running and a `delay` still waiting at the time limit, it prints:
///
/// ```text
/// drain stopped at its time limit after 5.000 s: 1 operation still running
/// delay  Sync/Uploader.swift:12:9  runs at 30.000 s (in 25.000 s)
/// ```
public struct DrainReport: Sendable, Hashable, CustomStringConvertible {
    /// Whether every operation the registry launched finished and nothing was left pending:
    /// `false` when the time limit passed or the drain's task was cancelled first.
    ///
    /// ```swift
    /// let clean = await registry.drain().isComplete   // true: no limit, nothing left
    /// ```
    public let isComplete: Bool
    /// Whether the drain ended because its task was cancelled (rather than complete, or at its
    /// time limit).
    ///
    /// ```swift
    /// let report = await registry.drain(within: .seconds(5))
    /// if report.wasCancelled { print("shutdown abandoned") }
    /// ```
    public let wasCancelled: Bool
    /// How many of the operations the drain waits for were still running when it returned:
    /// every operation the registry launched and that had not finished, except, for a drain
    /// called from inside an operation, the draining ones (the one it was called from
    /// included). Zero when the report is complete; the ``snapshot`` counts them all.
    ///
    /// ```swift
    /// let report = await registry.drain(within: .seconds(5))
    /// let unfinished = report.runningOperations
    /// ```
    public let runningOperations: Int
    /// The `delay` and `execute` calls (and any debounce or throttle call made in the last
    /// instant) still waiting to run when the drain returned, as ``TempoSnapshot`` shows them.
    ///
    /// ```swift
    /// let report = await registry.drain(within: .seconds(5))
    /// for entry in report.pending { print(entry.key) }
    /// ```
    public let pending: [TempoSnapshot.Entry]
    /// Everything live in the registry when the drain returned, running work and limits
    /// included; its `isDraining` says whether another drain was still in progress.
    ///
    /// ```swift
    /// let report = await registry.drain(within: .seconds(5))
    /// let repeats = report.snapshot.entries.filter { $0.kind == .repeat }
    /// ```
    public let snapshot: TempoSnapshot
    /// The registry's clock when the drain began and when it returned.
    ///
    /// ```swift
    /// let report = await registry.drain()
    /// let took = report.endedAt - report.startedAt
    /// ```
    public let startedAt: Duration
    /// See ``startedAt``.
    ///
    /// ```swift
    /// let report = await registry.drain()
    /// let took = report.endedAt - report.startedAt
    /// ```
    public let endedAt: Duration

    /// One line saying how the drain ended, then a line per pending call.
    ///
    /// ```swift
    /// print(await registry.drain(within: .seconds(2)))
    /// // drain complete after 120.0 ms
    /// ```
    public var description: String {
        let took = formatDuration(endedAt.subtracting(startedAt))
        guard !isComplete else { return "drain complete after \(took)" }
        let running =
            runningOperations == 1 ? "1 operation" : "\(runningOperations) operations"
        let how = wasCancelled ? "drain cancelled" : "drain stopped at its time limit"
        var lines = ["\(how) after \(took): \(running) still running"]
        if !pending.isEmpty {
            let listed = TempoSnapshot(now: endedAt, entries: pending).description
            lines += listed.split(separator: "\n").map(String.init)
        }
        return lines.joined(separator: "\n")
    }
}
