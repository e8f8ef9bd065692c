/// The error `hedge` throws when every attempt failed, or before starting any when its
/// attempt count is not in 1...1,000.
///
/// ```swift
/// do {
///     _ = try await hedge(maxAttempts: 3, after: .milliseconds(50)) { _ in
///         try await api.user(id)
///     }
/// } catch HedgingError.allAttemptsFailed(let errors) {
///     print("\(errors.count) attempts failed, the first with \(errors[0])")
/// }
/// ```
public enum HedgingError: Error, Sendable {
    /// Every attempt started failed; the associated array holds each attempt's error in the
    /// order the attempts started (the first attempt's error first), one per attempt.
    ///
    /// ```swift
    /// struct Unavailable: Error {}
    /// _ = try await hedge(maxAttempts: 2, after: .milliseconds(50)) { _ -> Int in
    ///     throw Unavailable()
    /// }
    /// // throws HedgingError.allAttemptsFailed([Unavailable(), Unavailable()])
    /// ```
    case allAttemptsFailed([any Error])
    /// `maxAttempts` was zero or negative, or more than 1,000; the associated value is what
    /// was passed. Nothing ran.
    ///
    /// ```swift
    /// _ = try await hedge(maxAttempts: 0, after: .milliseconds(50)) { _ in 1 }
    /// // throws HedgingError.invalidAttemptCount(0)
    /// ```
    case invalidAttemptCount(Int)

    /// The attempts' errors in start order for ``allAttemptsFailed(_:)``; empty for
    /// ``invalidAttemptCount(_:)``.
    ///
    /// ```swift
    /// do {
    ///     _ = try await hedge(after: .milliseconds(50)) { _ in try await api.user(id) }
    /// } catch let error as HedgingError {
    ///     for (index, failure) in error.errors.enumerated() {
    ///         print("attempt \(index + 1): \(failure)")
    ///     }
    /// }
    /// ```
    public var errors: [any Error] {
        if case .allAttemptsFailed(let errors) = self { return errors }
        return []
    }
}
