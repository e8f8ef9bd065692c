extension Dictionary {
    /// Removes `key`, and rebuilds the storage once seven eighths of it are empty, so a table's
    /// memory follows the keys that are live rather than the most there ever were. Rebuilding
    /// costs the live keys, and happens again only after the table shrank eightfold more:
    /// amortized, a constant per removal.
    @discardableResult
    mutating func removeLive(_ key: Key) -> Value? {
        let removed = removeValue(forKey: key)
        shrinkIfSparse()
        return removed
    }

    /// ``removeLive(_:)`` for an entry already found: no second hash.
    @discardableResult
    mutating func removeLive(at index: Index) -> Value {
        let removed = remove(at: index).value
        shrinkIfSparse()
        return removed
    }

    @inline(__always)
    private mutating func shrinkIfSparse() {
        if capacity > 64, count * 8 < capacity {
            var compact = [Key: Value](minimumCapacity: count)
            for (key, value) in self { compact[key] = value }
            self = compact
        }
    }
}
