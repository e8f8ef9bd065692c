/// A cap on the retries of every `retry` that shares it: at most `ratio` retries per call over a
/// sliding window, plus a small allowance per second, so that when a dependency fails outright
/// the retries add at most that share of extra load.
///
/// Pass it to `retry` as `budget:`. Every `retry` call deposits once, when its first attempt
/// starts; every retry withdraws one, when it is decided (after a failure, before `onRetry` and
/// the wait). A retry is allowed while the key's balance holds a whole retry:
///
/// `ratio × calls + minimumPerSecond × window − retries ≥ 1`
///
/// counting the calls and retries of the last `window`. So in every window the key makes at most
/// `ratio × calls + minimumPerSecond × window` retries, and over a whole outage the retries are
/// at most `ratio` times the calls plus the allowance of each window it spans. When the budget
/// refuses a retry, `retry` throws the last attempt's error at once, as when its attempts run
/// out, and `onRetry` is not told.
///
/// Budgets with the same ``identifier`` share one balance in the current ``TempoRegistry``, on
/// its clock; a budget with no identifier is shared by the calls of one `retry` call site. The
/// balance shows in ``TempoRegistry/snapshot()`` as ``TempoSnapshot/Kind/retryBudget`` and is
/// emptied by ``resetRetryBudget(identifier:)``.
///
/// ```swift
/// let budget = RetryBudget(
///     identifier: "api", ratio: 0.1
/// )
/// let user = try await retry(
///     3,
///     every: .milliseconds(200),
///     budget: budget
/// ) {
///     try await api.user(id)
/// }
/// ```
///
/// The window is kept in ten slices of `window / 10` each, so the memory is fixed however busy
/// the key is: a call or retry counts until the start of the tenth slice after its own, between
/// nine tenths of `window` and `window` after it. Slices are whole multiples of `window / 10`
/// on the registry's clock, anywhere in its range (before its origin too), so the bound holds
/// at either end of the range as near zero. The key leaves the registry when nothing is
/// counted any more. Budgets sharing an identifier should have the same settings; if they do
/// not, each retry is judged by its own budget's `ratio` and allowance, on the slices of the
/// budget that made the key live.
public struct RetryBudget: Sendable, Hashable {
    /// The ratio above which the budget treats `ratio` as this (a thousand retries per call).
    ///
    /// ```swift
    /// // Counted as RetryBudget.maximumRatio: a thousand retries per call.
    /// let unlimited = RetryBudget(ratio: .infinity)
    /// ```
    public static let maximumRatio: Double = 1000
    /// The allowance above which the budget treats `minimumPerSecond` as this.
    ///
    /// ```swift
    /// let generous = RetryBudget(minimumPerSecond: RetryBudget.maximumPerSecond)
    /// ```
    public static let maximumPerSecond: Double = 1_000_000
    /// The shortest window the budget keeps; a shorter `window` (zero and negative included) is
    /// counted as this.
    ///
    /// ```swift
    /// let brief = RetryBudget(window: RetryBudget.minimumWindow)
    /// ```
    public static let minimumWindow: Duration = .milliseconds(1)
    /// The longest window the budget keeps; a longer `window` is counted as this.
    ///
    /// ```swift
    /// let daily = RetryBudget(window: RetryBudget.maximumWindow)
    /// ```
    public static let maximumWindow: Duration = .seconds(86_400)

    /// The key the balance is kept under, shared with every budget of the same identifier;
    /// `nil` keeps it under the `retry` call site.
    ///
    /// ```swift
    /// let shared = RetryBudget(identifier: "payments").identifier   // "payments"
    /// ```
    public var identifier: String?
    /// Retries allowed per call: `0.1` lets ten calls pay for one retry. Negative and NaN count
    /// as 0 (only the allowance), above ``maximumRatio`` as ``maximumRatio``; kept to a
    /// millionth.
    ///
    /// ```swift
    /// var budget = RetryBudget(identifier: "api")
    /// budget.ratio = 0.2
    /// ```
    public var ratio: Double
    /// Retries allowed per second of `window` whatever the traffic, so a key with few calls can
    /// still retry: `minimumPerSecond × window` retries per window. Negative and NaN count as 0
    /// (no allowance), above ``maximumPerSecond`` as ``maximumPerSecond``.
    ///
    /// ```swift
    /// let strict = RetryBudget(identifier: "api", ratio: 0.1, minimumPerSecond: 0)
    /// ```
    public var minimumPerSecond: Double
    /// How long a call's deposit and a retry's withdrawal count, so the budget follows recent
    /// traffic. Clamped to ``minimumWindow`` ... ``maximumWindow``.
    ///
    /// ```swift
    /// let budget = RetryBudget(identifier: "api", window: .seconds(30))
    /// ```
    public var window: Duration

    /// A budget of `ratio` retries per call over `window`, plus `minimumPerSecond` retries a
    /// second whatever the traffic.
    ///
    /// The defaults, 0.1 retries per call, one retry a second and a 10-second window, add at
    /// most a tenth more calls to a failing dependency once traffic passes ten calls a second;
    /// below that the allowance of ten retries per window dominates.
    ///
    /// ```swift
    /// let budget = RetryBudget(identifier: "search", ratio: 0.2, minimumPerSecond: 2)
    /// ```
    ///
    /// - Parameters:
    ///   - identifier: The key the balance is shared under; `nil` (the default): the `retry`
    ///     call site.
    ///   - ratio: Retries per call. Defaults to 0.1.
    ///   - minimumPerSecond: Retries per second allowed whatever the traffic. Defaults to 1.
    ///   - window: How long calls and retries count. Defaults to 10 seconds.
    public init(
        identifier: String? = nil, ratio: Double = 0.1, minimumPerSecond: Double = 1,
        window: Duration = .seconds(10)
    ) {
        self.identifier = identifier
        self.ratio = ratio
        self.minimumPerSecond = minimumPerSecond
        self.window = window
    }

    /// `window`, clamped as ``window`` says.
    static func clampedWindow(_ window: Duration) -> Duration {
        min(max(window, minimumWindow), maximumWindow)
    }
}

/// Empties the retry budget `identifier` in the current registry: its calls and retries are
/// forgotten, so its next retry is judged on the allowance alone (and the calls made from then
/// on). Does nothing when nothing is counted for `identifier`.
///
/// ```swift
/// resetRetryBudget(identifier: "api")   // the service is back: start afresh
/// ```
///
/// - Parameter identifier: The ``RetryBudget/identifier`` of the budget.
public func resetRetryBudget(identifier: String) {
    TempoRegistry.current.resetRetryBudget(identifier: identifier)
}

extension RetryBudgetState: TimedEntry {
    static func access<R>(
        _ tables: inout TempoRegistry.Tables,
        _ body: (inout [GroupKey: TempoRegistry.Slot<Self>], inout TempoRegistry.IDSource) -> R
    ) -> R { body(&tables.retryBudgets, &tables.ids) }

    /// The timer only forgets slices: the key leaves when nothing is counted.
    mutating func timerFired(at now: Duration) -> (run: Operation?, next: Duration?) {
        expire(at: now)
        return (nil, nextExpiry)
    }

    /// A key whose oldest slice ends past the clock's last instant (the clock is there, so its
    /// timer ended) stays with its counts: its retries still count against its calls.
    func keepsWhenTimerEnds(at now: Duration) -> Bool { !isIdle(at: now) }

    func snapshotEntry(key: GroupKey, now: Duration) -> TempoSnapshot.Entry {
        var live = self
        live.expire(at: now)
        let (calls, retries) = live.counts
        return TempoSnapshot.Entry(
            kind: .retryBudget, key: key.description,
            state: .retryBudget(
                balance: Double(live.balance(under: rule)) / Double(RetryBudgetRule.unit),
                calls: Int(clamping: calls), retries: Int(clamping: retries)))
    }
}

extension TempoRegistry {
    /// A `retry` call with a budget starts: it deposits under `key`.
    func depositRetryBudget(_ key: GroupKey, _ rule: RetryBudgetRule) {
        _ = updateRetryBudget(key, rule) { state, now in
            state.call(at: now, rule: rule)
            return true
        }
    }

    /// A retry of a call with a budget asks to go ahead: `true` when it spent one retry.
    func spendRetryBudget(_ key: GroupKey, _ rule: RetryBudgetRule) -> Bool {
        updateRetryBudget(key, rule) { state, now in state.spend(at: now, rule: rule) }
    }

    /// Applies `change` to the entry of `key` (a new one when none is live) under its lock; an
    /// entry left with nothing counted leaves its table, otherwise its timer wakes when its
    /// oldest slice expires.
    private func updateRetryBudget(
        _ key: GroupKey, _ rule: RetryBudgetRule,
        _ change: (inout RetryBudgetState, Duration) -> Bool
    ) -> Bool {
        let now = clock.now()
        let (result, timer) = withShard(of: key) { tables in
            RetryBudgetState.access(&tables) { table, ids -> (Bool, TimerRef?) in
                var slot = table[key] ?? Slot(state: RetryBudgetState(rule: rule))
                let result = change(&slot.state, now)
                guard let wake = slot.state.nextExpiry else {
                    return (result, table.removeLive(key)?.timer)
                }
                arm(&slot, key: key, wake: wake, ids: &ids)
                table[key] = slot
                return (result, nil)
            }
        }
        timer?.cancel()
        return result
    }

    /// Empties the retry budget `identifier`; see ``Tempo/resetRetryBudget(identifier:)``.
    ///
    /// ```swift
    /// registry.resetRetryBudget(identifier: "api")
    /// ```
    ///
    /// - Parameter identifier: The ``RetryBudget/identifier`` of the budget.
    public func resetRetryBudget(identifier: String) {
        let key = GroupKey.name(identifier)
        let removed = withShard(of: key) { tables in tables.retryBudgets.removeLive(key) }
        removed?.timer?.cancel()
    }
}
