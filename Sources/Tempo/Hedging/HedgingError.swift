/// The error `hedge` throws when every attempt failed, or before starting any when its
/// attempt count is not in 1...1,000.
///
/// ```swift
/// do {
///     _ = try await hedge(
///         maxAttempts: 3,
///         after: .milliseconds(50)
///     ) { _ in
///         try await api.user(id)
///     }
/// } catch HedgingError
///     .allAttemptsFailed(let errors)
/// {
///     // one per attempt, in order
///     print(errors.count, errors[0])
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
    /// - for an actor, they are one instance (its state is the actor's, not read from here);
    /// - for any other type, they are one instance of a class, or their stored values, as
    ///   `Mirror` lists them (a superclass's included), are the same one for one, compared by
    ///   these same rules: a dictionary's entries in any order, a class met again inside itself
    ///   as the same. A value with no stored values (an empty struct, a closure) is compared by
    ///   its `String(reflecting:)` description. Values more than 64 levels down are not
    ///   compared. The stored values of a class are read as they are, without its locks.
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
            return left.count == right.count && zip(left, right).allSatisfy(sameError)
        default:
            return false
        }
    }
}

/// One comparison of two `HedgingError`s: how deep it is, and the pairs of class instances
/// it has compared or is comparing. It carries on into the `==` of a `HedgingError` held
/// inside an attempt's error, so that a cycle through one ends, and a graph of classes is
/// walked once per pair.
private final class ErrorComparison: @unchecked Sendable {
    // @unchecked: made, used and dropped by one `==` call, on one thread, synchronously.
    struct Pair: Hashable {
        let left: ObjectIdentifier
        let right: ObjectIdentifier
    }
    var depth = 0
    var visiting: Set<Pair> = []
    var decided: [Pair: Bool] = [:]

    @TaskLocal static var current: ErrorComparison?

    /// The comparison under way on this thread, or a new one for `body`.
    static func within(_ body: (ErrorComparison) -> Bool) -> Bool {
        if let current { return body(current) }
        let comparison = ErrorComparison()
        return $current.withValue(comparison) { body(comparison) }
    }
}

/// How deep a comparison goes: below this, values are not compared.
private let deepestLevel = 64

/// Whether two attempts' errors say the same, by the rules of ``HedgingError/==(_:_:)``.
private func sameError(_ left: any Error, _ right: any Error) -> Bool {
    ErrorComparison.within { sameValue(left, right, in: $0) }
}

/// Whether two values say the same, by the rules of ``HedgingError/==(_:_:)``.
private func sameValue(_ left: Any, _ right: Any, in comparison: ErrorComparison) -> Bool {
    guard ObjectIdentifier(type(of: left)) == ObjectIdentifier(type(of: right)) else {
        return false
    }
    guard comparison.depth < deepestLevel else { return true }
    comparison.depth += 1
    defer { comparison.depth -= 1 }
    if let left = left as? any Equatable { return left.isEqual(to: right) }
    if type(of: left) is AnyObject.Type {
        let pair = ErrorComparison.Pair(
            left: ObjectIdentifier(left as AnyObject), right: ObjectIdentifier(right as AnyObject))
        if pair.left == pair.right { return true }
        if left is any Actor { return false }
        if let decided = comparison.decided[pair] { return decided }
        // Met again inside itself: the same, unless something else differs.
        guard comparison.visiting.insert(pair).inserted else { return true }
        let same = sameFields(left, right, in: comparison)
        comparison.visiting.remove(pair)
        comparison.decided[pair] = same
        return same
    }
    return sameFields(left, right, in: comparison)
}

/// Whether two values of one type have the same stored values.
private func sameFields(_ left: Any, _ right: Any, in comparison: ErrorComparison) -> Bool {
    let leftFields = storedValues(of: left)
    let rightFields = storedValues(of: right)
    guard !leftFields.isEmpty || !rightFields.isEmpty else {
        return String(reflecting: left) == String(reflecting: right)
    }
    guard leftFields.count == rightFields.count else { return false }
    func same(_ left: Mirror.Child, _ right: Mirror.Child) -> Bool {
        left.label == right.label && sameValue(left.value, right.value, in: comparison)
    }
    guard Mirror(reflecting: left).displayStyle == .dictionary else {
        return zip(leftFields, rightFields).allSatisfy(same)
    }
    // A dictionary lists its entries in an order of its own: match them in any order.
    var unmatched = rightFields
    for field in leftFields {
        guard let match = unmatched.firstIndex(where: { same(field, $0) }) else { return false }
        unmatched.remove(at: match)
    }
    return true
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
