/// A throttle group owned by an object: a view model, a controller, a connection.
///
/// Calling a `Throttler` behaves as
/// ``throttle(_:identifier:by:option:fileID:line:column:operation:)-(_,_,_,_,StaticString,_,_,()->Void)``
/// with the options it was made with, in a group of its own. When it is deinitialised its
/// trailing call is cancelled and its group forgotten, so an owner that goes away leaves no
/// work and no timer behind, with no `invalidate()` to remember; made with `onDeinit: .flush`,
/// the trailing call runs then instead (see ``OnDeinit``). The registry keeps no reference to
/// the throttler, so there is no retain cycle through the scheduler. But the registry does hold
/// a trailing operation until it runs, and with it everything the operation captured: capture
/// the owner weakly (`[weak self]`), or a trailing call keeps the owner, and so its throttler,
/// alive until it has run.
///
/// ```swift
/// @MainActor
/// final class GalleryModel {
///     private let pacer = Throttler(
///         .milliseconds(200),
///         option: .ensureLast
///     )
///
///     func scrolled(to y: Double) {
///         pacer.onMainActor {
///             [weak self] in
///             self?.load(around: y)
///         }
///     }
///
///     private func load(
///         around y: Double
///     ) {
///         // fetch the images near y
///     }
/// }
/// ```
public final class Throttler: Sendable {
    /// The window length.
    ///
    /// ```swift
    /// let window = progress.duration   // .milliseconds(100)
    /// ```
    public let duration: Duration
    /// Where synchronous and asynchronous operations run.
    ///
    /// ```swift
    /// let actor = progress.actorType   // .ownedActor
    /// ```
    public let actorType: ActorType
    /// How calls inside an open window are treated.
    ///
    /// ```swift
    /// let option = progress.option   // .ensureLast
    /// ```
    public let option: ThrottleOptions
    /// What happens to the trailing call when the throttler is deinitialised.
    ///
    /// ```swift
    /// let onDeinit = progress.onDeinit   // .cancel
    /// ```
    public let onDeinit: OnDeinit
    let registry: TempoRegistry
    let key = GroupKey.newInstance()

    /// A throttler with its own group in `registry`.
    ///
    /// ```swift
    /// let progress = Throttler(.milliseconds(100), by: .ownedActor, option: .ensureLast)
    /// ```
    ///
    /// - Parameters:
    ///   - duration: The window length. Defaults to 1 second.
    ///   - actorType: Where the operations run. Defaults to the main actor.
    ///   - option: `.default` (leading), `.ensureLast` (leading and trailing) or `.trailing`.
    ///   - onDeinit: What happens to a trailing call when the throttler is deinitialised:
    ///     ``OnDeinit/cancel`` (the default) or ``OnDeinit/flush``.
    ///   - registry: The registry that times it: by default the one current where it is made.
    public init(
        _ duration: Duration = .seconds(1),
        by actorType: ActorType = .mainActor,
        option: ThrottleOptions = .default,
        onDeinit: OnDeinit = .cancel,
        registry: TempoRegistry = .current
    ) {
        self.duration = duration
        self.actorType = actorType
        self.option = option
        self.onDeinit = onDeinit
        self.registry = registry
    }

    deinit {
        // A flush that leaves the group live (its window still open) is followed by the
        // cancel, which then finds nothing pending and only forgets the group.
        if onDeinit == .flush { registry.flush(ThrottleState<Operation>.self, key) }
        registry.cancel(ThrottleState<Operation>.self, key)
    }

    /// Throttles `operation`, which runs on ``actorType``.
    ///
    /// ```swift
    /// let throttler = Throttler(.milliseconds(100), by: .ownedActor)
    /// throttler { metrics.flush() }
    /// ```
    ///
    /// - Parameter operation: The work to run, on ``actorType``.
    public func callAsFunction(_ operation: @escaping @Sendable () -> Void) {
        registry.throttle(
            key, duration: duration, option: option,
            operation: .sync(operation, actorType))
    }

    /// Throttles a main-actor operation; it runs on the main actor whatever ``actorType`` is.
    ///
    /// ```swift
    /// @MainActor func likeTapped() {
    ///     likeThrottler.onMainActor { [weak self] in self?.model.like() }
    /// }
    /// ```
    ///
    /// - Parameter operation: The work to run, on the main actor.
    public func onMainActor(_ operation: @escaping @MainActor @Sendable () -> Void) {
        registry.throttle(
            key, duration: duration, option: option,
            operation: .main(operation))
    }

    /// Throttles an asynchronous, throwing operation, and returns the task that runs it if this
    /// call is one that runs. The task finishes at once when the call is dropped, or after the
    /// operation when it runs; cancelling it before the operation starts withdraws the call.
    /// Errors go to `onError`. (The free `async throws` `throttle` returns a task that only
    /// stands for the call having been applied, as Throttler's does; this form is the one whose
    /// task carries the operation.)
    /// The operation runs isolated to ``actorType``, across its `await`s.
    ///
    /// `onError` runs right after the operation, on its actor, before the run counts as
    /// finished; a handler written in main-actor code is isolated to the main actor and may
    /// update its state (see ``ActorType``). Mark the operation `@MainActor in` for it to run
    /// on the main actor too, whatever ``actorType`` is.
    ///
    /// ```swift
    /// refresher(onError: { log($0) }) { try await feed.refresh() }
    /// ```
    ///
    /// - Parameters:
    ///   - onError: Called with any error the operation throws (`CancellationError` included),
    ///     on the operation's actor, before the run counts as finished; `nil` (the default):
    ///     errors are dropped.
    ///   - operation: The work to run, isolated to ``actorType`` across its `await`s.
    /// - Returns: The task that runs the operation if this call is the one that runs: it
    ///   finishes at once when the call is dropped, or after the operation (and `onError`) when this call is one that runs.
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
            registry.throttle(key, duration: duration, option: option, operation: $0)
        }
    }

    /// Cancels the trailing call: it never runs; the window closes, so the next call is
    /// treated as the first. An operation already running goes on.
    ///
    /// ```swift
    /// func stopTracking() { progress.cancel() }
    /// ```
    public func cancel() {
        registry.cancel(ThrottleState<Operation>.self, key)
    }

    /// Runs the trailing call now, with its latest operation; the run opens a new window. Does
    /// nothing when no trailing call is pending.
    ///
    /// ```swift
    /// func downloadFinished() { progress.flush() }   // show the last value now
    /// ```
    public func flush() {
        registry.flush(ThrottleState<Operation>.self, key)
    }

    /// The trailing call and when it runs; `nil` when none is pending.
    ///
    /// ```swift
    /// let catchingUp = progress.pending != nil
    /// ```
    public var pending: PendingCall? {
        registry.pending(ThrottleState<Operation>.self, key)
    }
}
