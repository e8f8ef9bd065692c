/// A debounce group owned by an object: a view model, a controller, a connection.
///
/// Calling a `Debouncer` behaves as
/// ``debounce(_:identifier:by:option:maxWait:fileID:line:column:operation:)-(_,_,_,_,_,StaticString,_,_,()->Void)``
/// with the options it was made with, in a group of its own. When it is deinitialised its
/// pending call is cancelled and its group forgotten, so an owner that goes away leaves no work
/// and no timer behind, with no `invalidate()` to remember; made with `onDeinit: .flush`, the
/// pending call runs then instead (see ``OnDeinit``). The registry keeps no reference to the
/// debouncer, so there is no retain cycle through the scheduler. But the registry does hold the
/// pending operation until it runs, and with it everything the operation captured: capture
/// the owner weakly (`[weak self]`), or a pending call keeps the owner, and so its debouncer,
/// alive until it has run, and the owner's deinit, with its cancel, waits for it.
///
/// ```swift
/// @MainActor
/// final class LocalSearchModel {
///     private let search =
///         Debouncer(
///             .milliseconds(300),
///             maxWait: .seconds(2)
///         )
///     var results: [String] = []
///
///     func textChanged(
///         _ text: String
///     ) {
///         search.onMainActor {
///             [weak self] in
///             self?.results =
///                 index.query(text)
///         }
///     }
///
///     // search the latest text now
///     func submit() {
///         search.flush()
///     }
/// }
/// ```
public final class Debouncer: Sendable {
    /// The quiet time that must pass after the latest call.
    ///
    /// ```swift
    /// let window = saver.duration   // .seconds(1)
    /// ```
    public let duration: Duration
    /// Where synchronous and asynchronous operations run.
    ///
    /// ```swift
    /// let actor = saver.actorType   // .mainActor
    /// ```
    public let actorType: ActorType
    /// How a burst of calls is treated.
    ///
    /// ```swift
    /// let option = saver.option   // .default
    /// ```
    public let option: DebounceOptions
    /// The longest a burst waits for a run: counted from its first call, then from its latest
    /// run.
    ///
    /// ```swift
    /// let cap = saver.maxWait   // .seconds(10), or nil
    /// ```
    public let maxWait: Duration?
    /// What happens to the pending call when the debouncer is deinitialised.
    ///
    /// ```swift
    /// let onDeinit = saver.onDeinit   // .flush
    /// ```
    public let onDeinit: OnDeinit
    let registry: TempoRegistry
    let key = GroupKey.newInstance()

    /// A debouncer with its own group in `registry`.
    ///
    /// ```swift
    /// let saver = Debouncer(.seconds(1), by: .ownedActor, maxWait: .seconds(10))
    /// ```
    ///
    /// - Parameters:
    ///   - duration: The quiet time that must pass after the latest call. Defaults to 1 second.
    ///   - actorType: Where the operations run. Defaults to the main actor.
    ///   - option: `.default` (trailing), `.runFirst` (leading and trailing) or `.leading`.
    ///   - maxWait: The longest a burst waits for a run; `nil`, zero or negative: no maximum.
    ///   - onDeinit: What happens to a pending call when the debouncer is deinitialised:
    ///     ``OnDeinit/cancel`` (the default) or ``OnDeinit/flush``.
    ///   - registry: The registry that times it: by default the one current where it is made.
    public init(
        _ duration: Duration = .seconds(1),
        by actorType: ActorType = .mainActor,
        option: DebounceOptions = .default,
        maxWait: Duration? = nil,
        onDeinit: OnDeinit = .cancel,
        registry: TempoRegistry = .current
    ) {
        self.duration = duration
        self.actorType = actorType
        self.option = option
        self.maxWait = maxWait
        self.onDeinit = onDeinit
        self.registry = registry
    }

    deinit {
        // A flush that leaves the group live (its window still open) is followed by the
        // cancel, which then finds nothing pending and only forgets the group.
        if onDeinit == .flush { registry.flush(DebounceState<Operation>.self, key) }
        registry.cancel(DebounceState<Operation>.self, key)
    }

    /// Debounces `operation`, which runs on ``actorType``.
    ///
    /// ```swift
    /// let debouncer = Debouncer(.milliseconds(300), by: .ownedActor)
    /// debouncer { index.rebuild() }
    /// ```
    ///
    /// - Parameter operation: The work to run, on ``actorType``.
    public func callAsFunction(_ operation: @escaping @Sendable () -> Void) {
        registry.debounce(
            key, duration: duration, option: option, maxWait: maxWait,
            operation: .sync(operation, actorType))
    }

    /// Debounces a main-actor operation; it runs on the main actor whatever ``actorType`` is.
    ///
    /// ```swift
    /// @MainActor func textChanged() {
    ///     debouncer.onMainActor { [weak self] in
    ///         guard let self else { return }
    ///         self.summary.text = self.model.summary
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter operation: The work to run, on the main actor.
    public func onMainActor(_ operation: @escaping @MainActor @Sendable () -> Void) {
        registry.debounce(
            key, duration: duration, option: option, maxWait: maxWait,
            operation: .main(operation))
    }

    /// Debounces an asynchronous, throwing operation, and returns the task that runs it if this
    /// call is the one that runs. The task finishes at once when a newer call replaces this
    /// one, or after the operation when it runs; cancelling it before the operation starts
    /// withdraws the call. Errors go to `onError`. (The free `async throws` `debounce` returns a
    /// task that only stands for the call having been applied, as Throttler's does; this form
    /// is the one whose task carries the operation.)
    /// The operation runs isolated to ``actorType``, across its `await`s.
    ///
    /// `onError` runs right after the operation, on its actor, before the run counts as
    /// finished; a handler written in main-actor code is isolated to the main actor and may
    /// update its state (see ``ActorType``). Mark the operation `@MainActor in` for it to run
    /// on the main actor too, whatever ``actorType`` is.
    ///
    /// ```swift
    /// saver(onError: { log($0) }) { try await api.save(draft) }
    /// ```
    ///
    /// - Parameters:
    ///   - onError: Called with any error the operation throws (`CancellationError` included),
    ///     on the operation's actor, before the run counts as finished; `nil` (the default):
    ///     errors are dropped.
    ///   - operation: The work to run, isolated to ``actorType`` across its `await`s.
    /// - Returns: The task that runs the operation if this call is the one that runs: it
    ///   finishes at once when a newer call replaces this one, or after the operation (and `onError`) when this call is the one that runs.
    @discardableResult
    public func callAsFunction(
        @_inheritActorContext onError: (
            nonisolated(nonsending) @Sendable (any Error) async -> Void
        )? = nil,
        _ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Void
    ) -> Task<Void, Never> {
        makeTicketedTask(
            after: duration, in: registry, by: actorType, onError: onError, operation: operation
        ) {
            registry.debounce(
                key, duration: duration, option: option, maxWait: maxWait, operation: $0)
        }
    }

    /// Cancels the pending call: it never runs, and the next call starts a new burst. An
    /// operation already running goes on.
    ///
    /// ```swift
    /// func discardDraft() { saver.cancel() }
    /// ```
    public func cancel() {
        registry.cancel(DebounceState<Operation>.self, key)
    }

    /// Runs the pending call now, with its latest operation. Does nothing when nothing is
    /// pending.
    ///
    /// ```swift
    /// func windowWillClose() { saver.flush() }
    /// ```
    public func flush() {
        registry.flush(DebounceState<Operation>.self, key)
    }

    /// The pending call and when it runs; `nil` when nothing is pending.
    ///
    /// ```swift
    /// var hasUnsavedChanges: Bool { saver.pending != nil }
    /// ```
    public var pending: PendingCall? {
        registry.pending(DebounceState<Operation>.self, key)
    }
}
