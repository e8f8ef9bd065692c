import Synchronization

/// A `Mutex` that ThreadSanitizer can see through.
///
/// On Linux, `Synchronization.Mutex` hands a contended lock over in the kernel (priority
/// inheriting futexes), so ThreadSanitizer never sees the hand-off and reports every contended
/// critical section as a race (reproduced with a four-task counter and nothing else). Each
/// critical section here also ends with a releasing store to `fence` and starts with an
/// acquiring load of it: the load runs after the lock is taken, so it reads the store of the
/// previous holder, and the pair is the happens-before edge ThreadSanitizer needs. It costs
/// one plain load and one plain store on x86-64 and one `ldar`/`stlr` pair on arm64, and keeps
/// Tempo free of anything but the standard library and `Synchronization`.
package struct Lock<Value: ~Copyable>: ~Copyable, Sendable {
    private let mutex: Mutex<Value>
    private let fence = Atomic<UInt8>(0)

    /// A lock guarding `value`.
    package init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    package borrowing func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(Failure) -> sending Result in
            _ = fence.load(ordering: .acquiring)
            defer { fence.store(0, ordering: .releasing) }
            return try body(&value)
        }
    }
}
