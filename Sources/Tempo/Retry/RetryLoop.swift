// The one retry loop behind every `retry` overload: attempts, waits, the retry budget and the
// total time budget.

/// The one retry loop behind every overload.
func runRetry<Value>(
    isolation: isolated (any Actor)? = #isolation,
    maxAttempts: Int,
    backoff: RetryBackoff,
    jitter: RetryJitter,
    random: inout some RandomNumberGenerator,
    shouldRetry: ((any Error) -> Bool)?,
    onRetry: ((Int, any Error, Duration) -> Void)?,
    budget: RetryBudget?,
    timeBudget: Duration?,
    clock: HelperClock,
    site: HelperSite,
    operation: () async throws -> Value
) async throws -> Value {
    guard maxAttempts > 0 else { throw RetryError.invalidAttemptCount(maxAttempts) }
    let registry = clock.registry
    // Retries may start only before this instant of the retry's clock (`nil`: any time).
    let deadline = timeBudget.map { clock.now().adding(max($0, .zero)) }
    let account = budget.map {
        (
            key: GroupKey($0.identifier, site.fileID, site.line, site.column),
            rule: RetryBudgetRule($0)
        )
    }
    var attempt = 1
    let id = site.begin(
        .retry, in: registry,
        state: .retrying(attempt: attempt, maxAttempts: maxAttempts, waitingUntil: nil))
    defer { registry.endRunningWork(id) }
    var previous = max(backoff.initial, .zero)
    while true {
        do {
            try Task.checkCancellation()
            if attempt == 1, let account { registry.depositRetryBudget(account.key, account.rule) }
            return try await operation()
        } catch {
            if error is CancellationError { throw error }
            if Task.isCancelled { throw CancellationError() }
            func stop(_ reason: TempoEvent.RetryStop) -> any Error {
                site.report(
                    .retry, .retryStopped(attempt: attempt, error: error, reason: reason),
                    in: registry)
                return error
            }
            guard attempt < maxAttempts else { throw stop(.attemptsExhausted) }
            guard shouldRetry?(error) ?? true else { throw stop(.notRetryable) }
            var wait = jitter.delay(
                forRetry: attempt, backoff: backoff, previous: previous, using: &random)
            if let provider = error as? any RetryAfterProviding, let after = provider.retryAfter {
                wait = min(max(after, .zero), backoff.cap)
            }
            // A retry that would start at or past the deadline is not waited for.
            if let deadline, clock.now().adding(max(wait, .zero)) >= deadline {
                throw stop(.timeBudgetExhausted)
            }
            if let account, !registry.spendRetryBudget(account.key, account.rule) {
                throw stop(.budgetRefused(budget: account.key.description))
            }
            previous = wait
            onRetry?(attempt, error, wait)
            site.report(
                .retry, .retryScheduled(attempt: attempt, error: error, delay: wait), in: registry)
            if wait > .zero {
                let wakeAt = clock.now().adding(wait)
                registry.updateRunningWork(
                    id,
                    .retrying(
                        attempt: attempt, maxAttempts: maxAttempts,
                        waitingUntil: clock.registryInstant(wakeAt)))
                try await clock.sleep(until: wakeAt)
            }
            try Task.checkCancellation()
            // A clock that woke late must not start an attempt past the deadline either.
            if let deadline, clock.now() >= deadline { throw stop(.timeBudgetExhausted) }
            attempt += 1
            registry.updateRunningWork(
                id, .retrying(attempt: attempt, maxAttempts: maxAttempts, waitingUntil: nil))
        }
    }
}
