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
///
/// Two values are equal when they are the same case and say the same: the same count, or the
/// same errors one for one, in order (see ``==(_:_:)``), so a test can compare one with
/// `#expect(throws:)`.
public enum HedgingError: Error, Equatable, Sendable {
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

extension HedgingError {
    /// Whether two errors say the same: the same case, and the same attempt count or the same
    /// errors one for one, in order. Two attempts' errors are the same when they are of one
    /// type and, for a type that is `Equatable`, equal by its `==`; for any other type, when
    /// their `String(reflecting:)` descriptions match (a struct's stored values, an enum's
    /// case and payload).
    ///
    /// ```swift
    /// struct Unavailable: Error {}
    /// let expected = HedgingError.allAttemptsFailed([Unavailable(), Unavailable()])
    /// await #expect(throws: expected) {
    ///     try await hedge(maxAttempts: 2, after: .milliseconds(50)) { _ -> Int in
    ///         throw Unavailable()
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: An error to compare.
    ///   - rhs: Another error to compare.
    /// - Returns: `true` when both say the same.
    public static func == (lhs: HedgingError, rhs: HedgingError) -> Bool {
        switch (lhs, rhs) {
        case (.invalidAttemptCount(let left), .invalidAttemptCount(let right)):
            return left == right
        case (.allAttemptsFailed(let left), .allAttemptsFailed(let right)):
            return left.count == right.count && zip(left, right).allSatisfy(sameError)
        default:
            return false
        }
    }
}

/// Whether two attempts' errors say the same, as ``HedgingError/==(_:_:)`` describes.
private func sameError(_ left: any Error, _ right: any Error) -> Bool {
    guard ObjectIdentifier(type(of: left)) == ObjectIdentifier(type(of: right)) else {
        return false
    }
    if let left = left as? any Equatable { return left.isEqual(to: right) }
    return String(reflecting: left) == String(reflecting: right)
}

extension Equatable {
    /// `self == other`, for an `other` known only as `Any`: `false` when it is another type.
    fileprivate func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
