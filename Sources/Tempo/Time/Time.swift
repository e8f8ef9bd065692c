/// The format of the line `time` reports.
///
/// ```swift
/// let parsed = try time("parse", style: .verbose) { try parser.parse(data) }
/// // [Tempo] label="parse" result=success duration="12.4 ms"
/// ```
public enum TimeReportStyle: Sendable, Hashable {
    /// A sentence: `[Tempo] parse completed in 12.4 ms`,
    /// `[Tempo] parse failed in 3.100 s: timedOut`.
    ///
    /// ```swift
    /// let parsed = try time("parse", style: .compact) { try parser.parse(data) }
    /// ```
    case compact
    /// Key-value fields that are easy to grep and parse:
    /// `[Tempo] label="parse" result=failure duration="3.100 s" error="timedOut"`.
    ///
    /// ```swift
    /// let parsed = try time("parse", style: .verbose, report: { logger.debug($0) }) {
    ///     try parser.parse(data)
    /// }
    /// ```
    case verbose
}

/// Runs `operation` at once, in the caller's context, and reports how long it took.
///
/// Returns the operation's value or rethrows its error unchanged. Measures with the current
/// registry's clock (`ContinuousClock` unless a test made another registry current) and calls
/// `report` once, after success or failure. The elapsed time reads `0.123 ms` below 1 ms,
/// `124.3 ms` below 1 s, else `2.100 s`:
/// - `.compact`: `[Tempo] <label> completed in <d>`, `[Tempo] <label> failed in <d>: <error>`;
///   with no label, `[Tempo] completed in <d>`.
/// - `.verbose`: `[Tempo] label="<label>" result=success duration="<d>"`,
///   `[Tempo] label="<label>" result=failure duration="<d>" error="<error>"`; with no label the
///   `label` field is left out.
///
/// ```swift
/// let rows = time("load rows") {
///     database.allRows()
/// }
/// ```
///
/// It prints `[Tempo] load rows completed in 3.2 ms`.
///
/// Pass `clock:` to measure on another clock: `nil`, the default, is the current registry's clock.
///
/// ```swift
/// time("render", clock: SuspendingClock()) { renderer.draw(scene) }
/// ```
///
/// - Parameters:
///   - label: What the report calls the operation; `nil` (the default) leaves it out.
///   - style: The report's format: ``TimeReportStyle/compact`` (the default) or
///     ``TimeReportStyle/verbose``.
///   - report: Called once with the report line, after the operation returns or throws.
///     Defaults to `print`.
///   - clock: The clock to measure on; `nil` (the default) is the current registry's clock.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the call while it runs.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to time.
/// - Returns: The operation's value.
/// - Throws: The operation's error, unchanged, after `report` has been called.
@discardableResult
public func time<Value>(
    _ label: String? = nil,
    style: TimeReportStyle = .compact,
    report: (String) -> Void = { print($0) },
    clock: (any Clock<Duration>)? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: () throws -> Value
) rethrows -> Value {
    try measuring(
        label, style: style, report: report, clock: HelperClock(clock),
        site: HelperSite(fileID, line, column), operation: operation
    ).value
}

/// Runs an asynchronous `operation` at once, in the caller's context, and reports how long it
/// took.
///
/// The operation runs on the caller's actor, awaited in the caller's task; `report` is called
/// once, with one line, after it returns or throws, and its value or error comes back
/// unchanged. The time is read on the current registry's clock unless `clock:` names another.
///
/// ```swift
/// let user = try await time(
///     "fetch user", style: .verbose
/// ) {
///     try await api.user(id)
/// }
/// ```
///
/// It prints `[Tempo] label="fetch user" result=success duration="182.4 ms"`.
///
/// Pass `clock:` to measure on another clock: `nil`, the default, is the current registry's clock.
///
/// ```swift
/// try await time("sync", clock: SuspendingClock()) { try await store.sync() }
/// ```
///
/// - Parameters:
///   - label: What the report calls the operation; `nil` (the default) leaves it out.
///   - style: The report's format: ``TimeReportStyle/compact`` (the default) or
///     ``TimeReportStyle/verbose``.
///   - report: Called once with the report line, after the operation returns or throws.
///     Defaults to `print`.
///   - clock: The clock to measure on; `nil` (the default) is the current registry's clock.
///   - isolation: The actor the operation runs on: the caller's, filled in for you.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the call while it runs.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to time.
/// - Returns: The operation's value.
/// - Throws: The operation's error, unchanged, after `report` has been called.
@discardableResult
public func time<Value>(
    _ label: String? = nil,
    style: TimeReportStyle = .compact,
    report: (String) -> Void = { print($0) },
    clock: (any Clock<Duration>)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: () async throws -> Value
) async rethrows -> Value {
    try await measuring(
        label, style: style, report: report, clock: HelperClock(clock),
        site: HelperSite(fileID, line, column), operation: operation
    ).value
}

/// Runs `operation` at once and returns its value with the time it took, on the current
/// registry's clock (or `clock`), reporting nothing. Rethrows the operation's error.
///
/// ```swift
/// let (rows, elapsed) = measure { database.allRows() }
/// metrics.record("rows.load", elapsed)
/// ```
///
/// - Parameters:
///   - clock: The clock to measure on; `nil` (the default) is the current registry's clock.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the call while it runs.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to time.
/// - Returns: The operation's value and the time it took.
/// - Throws: The operation's error, unchanged.
public func measure<Value>(
    clock: (any Clock<Duration>)? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: () throws -> Value
) rethrows -> (value: Value, duration: Duration) {
    try measuring(
        nil, style: nil, report: { _ in }, clock: HelperClock(clock),
        site: HelperSite(fileID, line, column), operation: operation)
}

/// Runs an asynchronous `operation` at once, in the caller's context, and returns its value
/// with the time it took, reporting nothing.
///
/// ```swift
/// let (page, elapsed) = try await measure { try await client.fetch(url) }
/// if elapsed > .seconds(1) { log.warning("slow fetch: \(elapsed)") }
/// ```
///
/// - Parameters:
///   - clock: The clock to measure on; `nil` (the default) is the current registry's clock.
///   - isolation: The actor the operation runs on: the caller's, filled in for you.
///   - fileID: The caller's file, filled in for you: with `line` and `column`, the call site
///     under which ``TempoRegistry/snapshot()`` lists the call while it runs.
///   - line: The caller's line, filled in for you.
///   - column: The caller's column, filled in for you.
///   - operation: The work to time.
/// - Returns: The operation's value and the time it took.
/// - Throws: The operation's error, unchanged.
public func measure<Value>(
    clock: (any Clock<Duration>)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    column: UInt = #column,
    operation: () async throws -> Value
) async rethrows -> (value: Value, duration: Duration) {
    try await measuring(
        nil, style: nil, report: { _ in }, clock: HelperClock(clock),
        site: HelperSite(fileID, line, column), operation: operation)
}

/// Times a synchronous operation; reports when `style` is not `nil`.
private func measuring<Value>(
    _ label: String?,
    style: TimeReportStyle?,
    report: (String) -> Void,
    clock: HelperClock,
    site: HelperSite,
    operation: () throws -> Value
) rethrows -> (value: Value, duration: Duration) {
    let registry = clock.registry
    let start = clock.now()
    let id = site.begin(
        .timing, in: registry, state: .timing(startedAt: clock.registryInstant(start)))
    defer { registry.endRunningWork(id) }
    do {
        let value = try operation()
        let elapsed = clock.now().subtracting(start)
        if let style { report(timeReport(label, style: style, elapsed: elapsed, error: nil)) }
        return (value, elapsed)
    } catch {
        let elapsed = clock.now().subtracting(start)
        if let style { report(timeReport(label, style: style, elapsed: elapsed, error: error)) }
        throw error
    }
}

/// Times an asynchronous operation in the caller's isolation; reports when `style` is not
/// `nil`.
private func measuring<Value>(
    _ label: String?,
    style: TimeReportStyle?,
    report: (String) -> Void,
    clock: HelperClock,
    site: HelperSite,
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> Value
) async rethrows -> (value: Value, duration: Duration) {
    let registry = clock.registry
    let start = clock.now()
    let id = site.begin(
        .timing, in: registry, state: .timing(startedAt: clock.registryInstant(start)))
    defer { registry.endRunningWork(id) }
    do {
        let value = try await operation()
        let elapsed = clock.now().subtracting(start)
        if let style { report(timeReport(label, style: style, elapsed: elapsed, error: nil)) }
        return (value, elapsed)
    } catch {
        let elapsed = clock.now().subtracting(start)
        if let style { report(timeReport(label, style: style, elapsed: elapsed, error: error)) }
        throw error
    }
}

/// The line `time` reports; see ``TimeReportStyle``.
func timeReport(
    _ label: String?, style: TimeReportStyle, elapsed: Duration, error: (any Error)?
) -> String {
    let duration = formatDuration(elapsed)
    switch style {
    case .compact:
        let head = label.map { "[Tempo] \($0)" } ?? "[Tempo]"
        guard let error else { return "\(head) completed in \(duration)" }
        return "\(head) failed in \(duration): \(error)"
    case .verbose:
        let head = label.map { "[Tempo] label=\"\($0)\"" } ?? "[Tempo]"
        guard let error else { return "\(head) result=success duration=\"\(duration)\"" }
        return "\(head) result=failure duration=\"\(duration)\" error=\"\(error)\""
    }
}
