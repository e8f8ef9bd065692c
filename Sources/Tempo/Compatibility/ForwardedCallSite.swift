// The `debounce` and `throttle` forms that take the call site's file ID as a `String`, as
// Throttler's signatures do: a wrapper that captures `#fileID` into a `String` parameter and
// forwards it compiles against Tempo too. Calls that leave `fileID` out use the `StaticString`
// forms, whose call-site key is hashed and compared without building a string.

/// For wrapper authors: debounces `operation` under the call site a wrapper forwards, its file
/// ID as a `String`. Everything else is as in
/// ``debounce(_:identifier:by:option:maxWait:fileID:line:column:operation:)-(_,_,_,_,_,StaticString,_,_,()->Void)``.
///
/// ```swift
/// func debounceHere(
///     fileID: String = #fileID,
///     line: UInt = #line,
///     column: UInt = #column,
///     _ work: @escaping @Sendable
///         () -> Void
/// ) {
///     debounce(
///         by: .taskContext,
///         fileID: fileID,
///         line: line,
///         column: column,
///         operation: work
///     )
/// }
/// ```
///
/// - Parameters:
///   - duration: The quiet time that must pass after the latest call. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - actorType: Where the operation runs.
///   - option: Trailing only (`.default`), leading and trailing (`.runFirst`) or leading only
///     (`.leading`).
///   - maxWait: The longest a burst waits for a run: counted from its first call, then from
///     its latest run. `nil` (the default), zero or negative: no maximum.
///   - fileID: The file ID of the call site the wrapper forwards: with `line` and `column`,
///     the call site that groups calls when `identifier` is `nil`. Equal to the same file's
///     `#fileID` as a `StaticString`, so both forms name one call site.
///   - line: The call site's line, forwarded by the wrapper.
///   - column: The call site's column, forwarded by the wrapper.
///   - operation: The work to run.
public func debounce(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType,
    option: DebounceOptions = .default,
    maxWait: Duration? = nil,
    fileID: String,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @Sendable () -> Void
) {
    TempoRegistry.withCurrentRegistry {
        $0.debounce(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            maxWait: maxWait, operation: .sync(operation, actorType))
    }
}

/// For wrapper authors: debounces a main-actor operation under the call site a wrapper
/// forwards, its file ID as a `String`. Everything else is as in
/// ``debounce(_:identifier:option:maxWait:fileID:line:column:operation:)-(_,_,_,_,StaticString,_,_,_)``.
///
/// ```swift
/// @MainActor func debounceHere(
///     fileID: String = #fileID,
///     line: UInt = #line,
///     column: UInt = #column,
///     _ work: @escaping @MainActor
///         @Sendable () -> Void
/// ) {
///     debounce(
///         fileID: fileID,
///         line: line,
///         column: column,
///         operation: work
///     )
/// }
/// ```
///
/// - Parameters:
///   - duration: The quiet time that must pass after the latest call. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - option: Trailing only (`.default`), leading and trailing (`.runFirst`) or leading only
///     (`.leading`).
///   - maxWait: The longest a burst waits for a run: counted from its first call, then from
///     its latest run. `nil` (the default), zero or negative: no maximum.
///   - fileID: The file ID of the call site the wrapper forwards: with `line` and `column`,
///     the call site that groups calls when `identifier` is `nil`. Equal to the same file's
///     `#fileID` as a `StaticString`, so both forms name one call site.
///   - line: The call site's line, forwarded by the wrapper.
///   - column: The call site's column, forwarded by the wrapper.
///   - operation: The work to run, on the main actor.
public func debounce(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    option: DebounceOptions = .default,
    maxWait: Duration? = nil,
    fileID: String,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @MainActor @Sendable () -> Void
) {
    TempoRegistry.withCurrentRegistry {
        $0.debounce(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            maxWait: maxWait, operation: .main(operation))
    }
}

/// For wrapper authors: debounces an asynchronous, throwing operation under the call site a
/// wrapper forwards, its file ID as a `String`. Everything else is as in
/// ``debounce(_:identifier:by:option:maxWait:fileID:line:column:onError:operation:)-(_,_,_,_,_,StaticString,_,_,_,_)``.
///
/// ```swift
/// @discardableResult
/// func debounceHere(
///     fileID: String = #fileID,
///     line: UInt = #line,
///     column: UInt = #column,
///     _ work: @escaping @Sendable
///         () async throws -> Void
/// ) -> Task<Void, Never> {
///     debounce(
///         fileID: fileID,
///         line: line,
///         column: column,
///         operation: work
///     )
/// }
/// ```
///
/// - Parameters:
///   - duration: The quiet time that must pass after the latest call. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - actorType: Where the operation is called and `onError` runs. Defaults to the main
///     actor. The operation's type here is a plain `@Sendable () async throws -> Void`, so
///     unless it is isolated itself (a `@MainActor` function) its body runs on the generic
///     executor (see ``ActorType``).
///   - option: Trailing only (`.default`), leading and trailing (`.runFirst`) or leading only
///     (`.leading`).
///   - maxWait: The longest a burst waits for a run: counted from its first call, then from
///     its latest run. `nil` (the default), zero or negative: no maximum.
///   - fileID: The file ID of the call site the wrapper forwards: with `line` and `column`,
///     the call site that groups calls when `identifier` is `nil`. Equal to the same file's
///     `#fileID` as a `StaticString`, so both forms name one call site.
///   - line: The call site's line, forwarded by the wrapper.
///   - column: The call site's column, forwarded by the wrapper.
///   - onError: Called with any error the operation throws (`CancellationError` included), on
///     the operation's actor. `nil` (the default): errors are dropped.
///   - operation: The work to run.
/// - Returns: The task running the operation when this call runs it at once; otherwise a
///   shared task that has already finished.
@discardableResult
public func debounce(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType = .mainActor,
    option: DebounceOptions = .default,
    maxWait: Duration? = nil,
    fileID: String,
    line: UInt = #line,
    column: UInt = #column,
    @_inheritActorContext onError: (nonisolated(nonsending) @Sendable (any Error) async -> Void)? =
        nil,
    operation: @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    TempoRegistry.withCurrentRegistry {
        $0.debounce(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            maxWait: maxWait,
            operation: .async(AsyncOperation(operation, on: actorType, onError: onError)))
    } ?? appliedCallTask
}

/// For wrapper authors: throttles `operation` under the call site a wrapper forwards, its file
/// ID as a `String`. Everything else is as in
/// ``throttle(_:identifier:by:option:fileID:line:column:operation:)-(_,_,_,_,StaticString,_,_,()->Void)``.
///
/// ```swift
/// func throttleHere(
///     fileID: String = #fileID,
///     line: UInt = #line,
///     column: UInt = #column,
///     _ work: @escaping @Sendable
///         () -> Void
/// ) {
///     throttle(
///         by: .taskContext,
///         fileID: fileID,
///         line: line,
///         column: column,
///         operation: work
///     )
/// }
/// ```
///
/// - Parameters:
///   - duration: The window length. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - actorType: Where the operation runs.
///   - option: Leading only (`.default`), leading and trailing (`.ensureLast`) or trailing
///     only (`.trailing`).
///   - fileID: The file ID of the call site the wrapper forwards: with `line` and `column`,
///     the call site that groups calls when `identifier` is `nil`. Equal to the same file's
///     `#fileID` as a `StaticString`, so both forms name one call site.
///   - line: The call site's line, forwarded by the wrapper.
///   - column: The call site's column, forwarded by the wrapper.
///   - operation: The work to run.
public func throttle(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType,
    option: ThrottleOptions = .default,
    fileID: String,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @Sendable () -> Void
) {
    TempoRegistry.withCurrentRegistry {
        $0.throttle(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            operation: .sync(operation, actorType))
    }
}

/// For wrapper authors: throttles a main-actor operation under the call site a wrapper
/// forwards, its file ID as a `String`. Everything else is as in
/// ``throttle(_:identifier:option:fileID:line:column:operation:)-(_,_,_,StaticString,_,_,_)``.
///
/// ```swift
/// @MainActor func throttleHere(
///     fileID: String = #fileID,
///     line: UInt = #line,
///     column: UInt = #column,
///     _ work: @escaping @MainActor
///         @Sendable () -> Void
/// ) {
///     throttle(
///         fileID: fileID,
///         line: line,
///         column: column,
///         operation: work
///     )
/// }
/// ```
///
/// - Parameters:
///   - duration: The window length. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - option: Leading only (`.default`), leading and trailing (`.ensureLast`) or trailing
///     only (`.trailing`).
///   - fileID: The file ID of the call site the wrapper forwards: with `line` and `column`,
///     the call site that groups calls when `identifier` is `nil`. Equal to the same file's
///     `#fileID` as a `StaticString`, so both forms name one call site.
///   - line: The call site's line, forwarded by the wrapper.
///   - column: The call site's column, forwarded by the wrapper.
///   - operation: The work to run, on the main actor.
public func throttle(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    option: ThrottleOptions = .default,
    fileID: String,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @MainActor @Sendable () -> Void
) {
    TempoRegistry.withCurrentRegistry {
        $0.throttle(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            operation: .main(operation))
    }
}

/// For wrapper authors: throttles an asynchronous, throwing operation under the call site a
/// wrapper forwards, its file ID as a `String`. Everything else is as in
/// ``throttle(_:identifier:by:option:fileID:line:column:onError:operation:)-(_,_,_,_,StaticString,_,_,_,_)``.
///
/// ```swift
/// @discardableResult
/// func throttleHere(
///     fileID: String = #fileID,
///     line: UInt = #line,
///     column: UInt = #column,
///     _ work: @escaping @Sendable
///         () async throws -> Void
/// ) -> Task<Void, Never> {
///     throttle(
///         fileID: fileID,
///         line: line,
///         column: column,
///         operation: work
///     )
/// }
/// ```
///
/// - Parameters:
///   - duration: The window length. Defaults to 1 second.
///   - identifier: Groups calls from any call site under this name (`""` too is a name);
///     `nil` groups by call site.
///   - actorType: Where the operation is called and `onError` runs. Defaults to the main
///     actor. The operation's type here is a plain `@Sendable () async throws -> Void`, so
///     unless it is isolated itself (a `@MainActor` function) its body runs on the generic
///     executor (see ``ActorType``).
///   - option: Leading only (`.default`), leading and trailing (`.ensureLast`) or trailing
///     only (`.trailing`).
///   - fileID: The file ID of the call site the wrapper forwards: with `line` and `column`,
///     the call site that groups calls when `identifier` is `nil`. Equal to the same file's
///     `#fileID` as a `StaticString`, so both forms name one call site.
///   - line: The call site's line, forwarded by the wrapper.
///   - column: The call site's column, forwarded by the wrapper.
///   - onError: Called with any error the operation throws (`CancellationError` included), on
///     the operation's actor. `nil` (the default): errors are dropped.
///   - operation: The work to run.
/// - Returns: The task running the operation when this call runs it at once; otherwise a
///   shared task that has already finished.
@discardableResult
public func throttle(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType = .mainActor,
    option: ThrottleOptions = .default,
    fileID: String,
    line: UInt = #line,
    column: UInt = #column,
    @_inheritActorContext onError: (nonisolated(nonsending) @Sendable (any Error) async -> Void)? =
        nil,
    operation: @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    TempoRegistry.withCurrentRegistry {
        $0.throttle(
            GroupKey(identifier, fileID, line, column), duration: duration, option: option,
            operation: .async(AsyncOperation(operation, on: actorType, onError: onError)))
    } ?? appliedCallTask
}
