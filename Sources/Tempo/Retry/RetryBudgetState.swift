// The counts behind a `RetryBudget`: calls and retries of one key over a sliding window, kept in
// ten slices so the memory stays fixed whatever the traffic. Pure: it holds no clock, the
// registry passes each instant in. Amounts are kept in millionths of a retry so the bound
// `retries <= ratio * calls + allowance` is checked in whole numbers, exactly.

/// The settings of a ``RetryBudget`` as the engine uses them: whole millionths, positive slices.
struct RetryBudgetRule: Sendable, Hashable {
    /// One retry, in millionths.
    static let unit: Int64 = 1_000_000
    /// The number of slices a window is kept in.
    static let slices: Int64 = 10

    /// What one call deposits, in millionths of a retry (`ratio × 1,000,000`, rounded).
    let deposit: Int64
    /// The allowance per window, in millionths of a retry (`minimumPerSecond × window`, rounded).
    let reserve: Int64
    /// One slice of the window, in nanoseconds (at least 1).
    let slice: Int64

    init(_ budget: RetryBudget) {
        let ratio = budget.ratio.isNaN ? 0 : min(max(budget.ratio, 0), RetryBudget.maximumRatio)
        deposit = Int64((ratio * Double(Self.unit)).rounded())
        let window = RetryBudget.clampedWindow(budget.window)
        let nanoseconds = Self.nanoseconds(window)
        slice = max(nanoseconds / Self.slices, 1)
        let perSecond =
            budget.minimumPerSecond.isNaN
            ? 0 : min(max(budget.minimumPerSecond, 0), RetryBudget.maximumPerSecond)
        // Millionths of a retry: per second × nanoseconds / 1,000, to the nearest.
        reserve = Int64((perSecond * Double(slice * Self.slices) / 1_000).rounded())
    }

    /// A non-negative `duration` in whole nanoseconds (rounded down, saturating).
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (sum, sumOverflow) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return sumOverflow ? .max : sum
    }
}

/// One key's calls and retries over its window.
struct RetryBudgetState: Sendable {
    /// One slice's counts; `index` is the instant divided by the slice length, rounded down
    /// (toward the past, for a negative instant too): every instant of `Duration`'s range has
    /// its own, as an `Int128`, so no two slices of the clock's range share one index.
    struct Slice: Sendable, Hashable {
        var index: Int128
        var calls: Int64 = 0
        var retries: Int64 = 0
    }

    /// The slice length the entry was made with, in attoseconds (at least a nanosecond):
    /// every caller of the key shares it.
    let slice: Int128
    /// The rule of the latest call: the one ``balance(at:)`` and the snapshot use.
    private(set) var rule: RetryBudgetRule
    /// The live slices, oldest first, at most ``RetryBudgetRule/slices``.
    private(set) var window: [Slice] = []

    init(rule: RetryBudgetRule) {
        self.rule = rule
        slice = Int128(rule.slice) * 1_000_000_000
        window.reserveCapacity(Int(RetryBudgetRule.slices))
    }

    /// The index of the slice `now` falls in: `now` divided by the slice, rounded down, at
    /// either end of the range (so slice `i` spans `[i × slice, (i + 1) × slice)` everywhere).
    private func index(at now: Duration) -> Int128 {
        let (quotient, remainder) = now.attoseconds.quotientAndRemainder(dividingBy: slice)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// Forgets the slices that have left the window at `now`: slice `i` counts until the start of
    /// slice `i + 10`.
    mutating func expire(at now: Duration) {
        let oldest = index(at: now) - Int128(RetryBudgetRule.slices) + 1
        if let first = window.firstIndex(where: { $0.index >= oldest }) {
            if first > 0 { window.removeFirst(first) }
        } else {
            window.removeAll(keepingCapacity: true)
        }
    }

    /// The calls and retries counted at `now` (after ``expire(at:)``).
    var counts: (calls: Int64, retries: Int64) {
        window.reduce((0, 0)) { ($0.0 &+ $1.calls, $0.1 &+ $1.retries) }
    }

    /// The retries `rule` allows now, in millionths: `deposit × calls + reserve − unit × retries`
    /// (saturating). Call after ``expire(at:)``.
    func balance(under rule: RetryBudgetRule) -> Int64 {
        let (calls, retries) = counts
        let (deposits, overflow) = calls.multipliedReportingOverflow(by: rule.deposit)
        let credit = overflow ? Int64.max : deposits
        let (spent, spentOverflow) = retries.multipliedReportingOverflow(by: RetryBudgetRule.unit)
        let (sum, sumOverflow) = credit.addingReportingOverflow(rule.reserve)
        let available = sumOverflow ? Int64.max : sum
        return spentOverflow ? Int64.min : available.subtractingReportingOverflow(spent).0
    }

    /// Adds one to the slice `now` falls in.
    private mutating func count(at now: Duration, _ add: (inout Slice) -> Void) {
        let current = index(at: now)
        if let last = window.indices.last, window[last].index >= current {
            add(&window[last])
        } else {
            var new = Slice(index: current)
            add(&new)
            window.append(new)
        }
    }

    /// A call (a first attempt) at `now`: it deposits.
    mutating func call(at now: Duration, rule: RetryBudgetRule) {
        self.rule = rule
        expire(at: now)
        count(at: now) { $0.calls &+= 1 }
    }

    /// A retry asks to start at `now`: it spends one retry when the balance under `rule` holds
    /// one, and says whether it did.
    mutating func spend(at now: Duration, rule: RetryBudgetRule) -> Bool {
        self.rule = rule
        expire(at: now)
        guard balance(under: rule) >= RetryBudgetRule.unit else { return false }
        count(at: now) { $0.retries &+= 1 }
        return true
    }

    /// When the oldest live slice leaves the window (the start of slice `index + 10`, which
    /// is `.saturatedMax` when that lies past the range: the slice then counts until the clock
    /// reaches the end); `nil` when nothing is counted.
    var nextExpiry: Duration? {
        guard let first = window.first else { return nil }
        // `index` is at most `Int128.max / slice` and `slice` at least 10^9: the sum cannot
        // overflow, the product can.
        let (end, overflow) = (first.index + Int128(RetryBudgetRule.slices))
            .multipliedReportingOverflow(by: slice)
        return overflow ? .saturatedMax : Duration(attoseconds: end)
    }

    /// Nothing counted at `now`.
    func isIdle(at now: Duration) -> Bool {
        var copy = self
        copy.expire(at: now)
        return copy.window.isEmpty
    }
}
