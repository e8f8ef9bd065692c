// The `debounce` and `throttle` forms that take the call site's file ID as a `String`, as
// Throttler's signatures do: a wrapper that captures `#fileID` into a `String` parameter and
// forwards it compiles against Tempo too. Calls that leave `fileID` out use the `StaticString`
// forms, whose call-site key is hashed and compared without building a string.

/// Debounces `operation`, grouped by a call site whose file ID a wrapper forwards as a `String`;
/// otherwise as
/// ``debounce(_:identifier:by:option:maxWait:fileID:line:column:operation:)-(_,_,_,_,_,StaticString,_,_,()->Void)``.
///
/// ```swift
/// func debounceHere(
///     fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
///     _ work: @escaping @Sendable () -> Void
/// ) {
///     debounce(
///         by: .taskContext, fileID: fileID, line: line, column: column, operation: work)
/// }
/// ```
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
    TempoRegistry.current.debounce(
        GroupKey(identifier, fileID, line, column), duration: duration, option: option,
        maxWait: maxWait, operation: .sync(operation, actorType))
}

/// Debounces a main-actor operation, grouped by a call site whose file ID a wrapper forwards
/// as a `String`; otherwise as
/// ``debounce(_:identifier:option:maxWait:fileID:line:column:operation:)-(_,_,_,_,StaticString,_,_,_)``.
///
/// ```swift
/// @MainActor func debounceHere(
///     fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
///     _ work: @escaping @MainActor @Sendable () -> Void
/// ) {
///     debounce(fileID: fileID, line: line, column: column, operation: work)
/// }
/// ```
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
    TempoRegistry.current.debounce(
        GroupKey(identifier, fileID, line, column), duration: duration, option: option,
        maxWait: maxWait, operation: .main(operation))
}

/// Debounces an asynchronous, throwing operation, grouped by a call site whose file ID a
/// wrapper forwards as a `String`; otherwise as
/// ``debounce(_:identifier:by:option:maxWait:fileID:line:column:onError:operation:)-(_,_,_,_,_,StaticString,_,_,_,_)``.
///
/// ```swift
/// @discardableResult
/// func debounceHere(
///     fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
///     _ work: @escaping @Sendable () async throws -> Void
/// ) -> Task<Void, Never> {
///     debounce(fileID: fileID, line: line, column: column, operation: work)
/// }
/// ```
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
    onError: (@Sendable (any Error) -> Void)? = nil,
    operation: @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    TempoRegistry.current.debounce(
        GroupKey(identifier, fileID, line, column), duration: duration, option: option,
        maxWait: maxWait,
        operation: .async(AsyncOperation(operation, on: actorType, onError: onError))
    ) ?? appliedCallTask
}

/// Throttles `operation`, grouped by a call site whose file ID a wrapper forwards as a `String`;
/// otherwise as
/// ``throttle(_:identifier:by:option:fileID:line:column:operation:)-(_,_,_,_,StaticString,_,_,()->Void)``.
///
/// ```swift
/// func throttleHere(
///     fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
///     _ work: @escaping @Sendable () -> Void
/// ) {
///     throttle(
///         by: .taskContext, fileID: fileID, line: line, column: column, operation: work)
/// }
/// ```
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
    TempoRegistry.current.throttle(
        GroupKey(identifier, fileID, line, column), duration: duration, option: option,
        operation: .sync(operation, actorType))
}

/// Throttles a main-actor operation, grouped by a call site whose file ID a wrapper forwards
/// as a `String`; otherwise as
/// ``throttle(_:identifier:option:fileID:line:column:operation:)-(_,_,_,StaticString,_,_,_)``.
///
/// ```swift
/// @MainActor func throttleHere(
///     fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
///     _ work: @escaping @MainActor @Sendable () -> Void
/// ) {
///     throttle(fileID: fileID, line: line, column: column, operation: work)
/// }
/// ```
public func throttle(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    option: ThrottleOptions = .default,
    fileID: String,
    line: UInt = #line,
    column: UInt = #column,
    operation: @escaping @MainActor @Sendable () -> Void
) {
    TempoRegistry.current.throttle(
        GroupKey(identifier, fileID, line, column), duration: duration, option: option,
        operation: .main(operation))
}

/// Throttles an asynchronous, throwing operation, grouped by a call site whose file ID a
/// wrapper forwards as a `String`; otherwise as
/// ``throttle(_:identifier:by:option:fileID:line:column:onError:operation:)-(_,_,_,_,StaticString,_,_,_,_)``.
///
/// ```swift
/// @discardableResult
/// func throttleHere(
///     fileID: String = #fileID, line: UInt = #line, column: UInt = #column,
///     _ work: @escaping @Sendable () async throws -> Void
/// ) -> Task<Void, Never> {
///     throttle(fileID: fileID, line: line, column: column, operation: work)
/// }
/// ```
@discardableResult
public func throttle(
    _ duration: Duration = .seconds(1),
    identifier: String? = nil,
    by actorType: ActorType = .mainActor,
    option: ThrottleOptions = .default,
    fileID: String,
    line: UInt = #line,
    column: UInt = #column,
    onError: (@Sendable (any Error) -> Void)? = nil,
    operation: @escaping @Sendable () async throws -> Void
) -> Task<Void, Never> {
    TempoRegistry.current.throttle(
        GroupKey(identifier, fileID, line, column), duration: duration, option: option,
        operation: .async(AsyncOperation(operation, on: actorType, onError: onError))
    ) ?? appliedCallTask
}
