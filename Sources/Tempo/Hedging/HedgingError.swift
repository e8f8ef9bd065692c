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
    /// errors one for one, in order.
    ///
    /// Two attempts' errors are the same when they are of one type and:
    /// - for a type that is `Equatable`, they are equal by its own `==` (an error whose `==`
    ///   does not hold for itself, such as one with a `Double.nan` field, is not the same as
    ///   itself either);
    /// - for any other type, they are one instance of a class, or their stored values, as
    ///   `Mirror` lists them (a superclass's included), are the same one for one, compared by
    ///   these same rules. A value with no stored values, and any value eight levels down, is
    ///   compared by its `String(reflecting:)` description.
    ///
    /// So a test that expects `allAttemptsFailed([StatusError(code: 503)])` fails when the
    /// attempts failed with `StatusError(code: 502)`, whether or not `StatusError` is
    /// `Equatable`, and whether it is a struct or a class.
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
            return left.count == right.count
                && zip(left, right).allSatisfy { sameValue($0, $1, depth: 0) }
        default:
            return false
        }
    }
}

/// Whether two values say the same, by the rules of ``HedgingError/==(_:_:)``.
private func sameValue(_ left: Any, _ right: Any, depth: Int) -> Bool {
    guard ObjectIdentifier(type(of: left)) == ObjectIdentifier(type(of: right)) else {
        return false
    }
    if let left = left as? any Equatable { return left.isEqual(to: right) }
    if type(of: left) is AnyObject.Type, (left as AnyObject) === (right as AnyObject) {
        return true
    }
    let leftFields = storedValues(of: left)
    let rightFields = storedValues(of: right)
    guard depth < 8, !leftFields.isEmpty || !rightFields.isEmpty else {
        return String(reflecting: left) == String(reflecting: right)
    }
    return leftFields.count == rightFields.count
        && zip(leftFields, rightFields).allSatisfy { left, right in
            left.label == right.label && sameValue(left.value, right.value, depth: depth + 1)
        }
}

/// A value's stored values as `Mirror` lists them, a class's superclasses' included.
private func storedValues(of value: Any) -> [Mirror.Child] {
    var fields: [Mirror.Child] = []
    var mirror: Mirror? = Mirror(reflecting: value)
    while let current = mirror {
        fields.append(contentsOf: current.children)
        mirror = current.superclassMirror
    }
    return fields
}

extension Equatable {
    /// `self == other`, for an `other` known only as `Any`: `false` when it is another type.
    fileprivate func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
