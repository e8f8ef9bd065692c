// The regression gate's ceilings (see Gate.swift): for each cost row, the highest ratio to
// the floor measured in the same run that a `--quick` run lets pass. Each is 1.5 times the
// highest ratio the row showed in 11 `--quick` runs on the project's 2-core machine on
// 2026-12-02 (load average 0.1 to 3.5 at their starts), rounded up to two significant
// digits; the comment above each gives the row's lowest and highest ratio over those runs.
// Rows are named as the report names them, or by their `gateName` where the name holds a
// figure of the run. CONTRIBUTING.md ("Benchmark ceilings") says when a ceiling may change.

/// Every gated row's ceiling, by section and row.
let ceilings: [Ceiling] = [
    // 1.85× to 2.61×
    Ceiling("cost per call", "floor + storing the caller's capturing closure (reference)", 4.0),
    // 0.91× to 1.41×
    Ceiling("cost per call", "`debounce`, fire-and-forget, one hot identifier: at the caller", 2.2),
    // 0.93× to 1.44×
    Ceiling(
        "cost per call", "`debounce`, fire-and-forget: end to end, until the single trailing run",
        2.2),
    // 0.99× to 1.46×
    Ceiling("cost per call", "`debounce`, fire-and-forget: CPU of all threads until the run", 2.2),
    // 0.60× to 1.15×
    Ceiling(
        "cost per call", "`debounce` at the caller, operation capturing nothing (engine only)", 1.8),
    // 0.92× to 1.59×
    Ceiling("cost per call", "`throttle`, dropped call (window open)", 2.4),
    // 0.58× to 1.11×
    Ceiling(
        "cost per call", "`throttle`, dropped call, operation capturing nothing (engine only)", 1.7),
    // 1.78× to 3.17×
    Ceiling(
        "cost per call", "`await throttle(…).value`, dropped call (`Task`-returning overload)", 4.8),
    // 1.43× to 2.61×
    Ceiling(
        "cost per call", "`debounce` `Task`-returning overload: burst, every task awaited", 4.0),
    // 0.91× to 1.09×
    Ceiling("rate limit", "`takeRatePermit`, admitted at once", 1.7),
    // 0.79× to 1.08×
    Ceiling("rate limit", "`takeRatePermit`, refused at once (typed error)", 1.7),
    // 1.42× to 1.93×
    Ceiling("rate limit", "`try await rateLimit { }`, admitted at once", 2.9),
    // 1.23× to 1.90×
    Ceiling("rate limit", "`try await rateLimit(whenLimited: .reject) { }`, refused", 2.9),
    // 0.86× to 1.25×
    Ceiling(
        "rate limit",
        "`takeRatePermit` on `.window(1_000_000, per: 1 ms)`, admitted (steady state: "
            + "each call records its start and lets go of those that left the window)",
        1.9),
    // 0.75× to 1.13×
    Ceiling("rate limit", "`takeRatePermit` on `.window(1, per: 1 h)`, refused at once", 1.7),
    // 1.28× to 1.83×
    Ceiling("concurrency limit", "`concurrencyLimit`, admitted, the key otherwise idle", 2.8),
    // 1.22× to 1.71×
    Ceiling("concurrency limit", "`concurrencyLimit`, admitted beside a running call", 2.6),
    // 0.92× to 1.33×
    Ceiling("concurrency limit", "`concurrencyLimit`, turned away (queue full)", 2.0),
    // 2.85× to 5.48×
    Ceiling("cost per call", "`retry`, first attempt succeeds, no budget", 8.3),
    // 5.83× to 12.58×
    Ceiling("cost per call", "`retry` with a `RetryBudget`, first attempt succeeds", 19),
    // 1.68× to 2.29×
    Ceiling("circuit breaker", "`circuitBreaker`, through a closed breaker", 3.5),
    // 1.15× to 1.54×
    Ceiling("circuit breaker", "`circuitBreaker`, rejected by an open breaker", 2.4),
    // 0.19× to 0.40×
    Ceiling("cost per call", "plain async call (the operation `hedge` runs)", 0.60),
    // 60.94× to 109.24×
    Ceiling("cost per call", "`hedge`, the first attempt succeeds before the delay", 170),
    // 55.93× to 100.82×
    Ceiling("cost per call", "`hedge` with maxAttempts 1 (no timer)", 160),
    // 9.74× to 21.98×
    Ceiling("cost per call", "one child task in a task group, awaited", 33),
    // The observer's rows, added on 2026-12-02 from 11 `--quick --only events` runs taken while
    // a mutation run kept both cores busy (load average about 2.5).
    // 0.74× to 1.50×
    Ceiling("events", "`takeRatePermit` refused, nobody observing", 2.3),
    // 2.63× to 6.07×
    Ceiling("events", "`takeRatePermit` refused, an observer counting each event", 9.1),
]
