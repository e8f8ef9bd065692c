extension Debouncer {
    /// Debounces a main-actor operation: it runs on the main actor whatever ``actorType`` is,
    /// and may touch main-actor state. Same as ``onMainActor(_:)``.
    ///
    /// A closure marked `@MainActor in`, or a `@MainActor` function, comes here, so in a
    /// `@MainActor` type the call reads as the free `debounce` does. (Swift does not pick an
    /// overload by where a closure is written, so an unmarked closure goes to
    /// ``callAsFunction(_:)``, which runs on ``actorType``.)
    ///
    /// ```swift
    /// @MainActor final class Editor {
    ///     private let autosave = Debouncer(.seconds(1))
    ///     private(set) var saves = 0
    ///
    ///     func edited() {
    ///         autosave { @MainActor [weak self] in self?.saves += 1 }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - operation: The work to run, on the main actor.
    ///   - isolation: The caller's isolation, filled in for you.
    public func callAsFunction(
        _ operation: @escaping @MainActor @Sendable () -> Void,
        isolation: isolated (any Actor)? = #isolation
    ) {
        onMainActor(operation)
    }
}
