#if canImport(Darwin) || TEMPO_PORTABLE
    import Synchronization
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one lock every part of Tempo (and TempoTesting) uses.
///
/// On Apple platforms it is `Synchronization.Mutex`, an `os_unfair_lock`. Elsewhere it is a
/// plain `pthread_mutex_t`. `Mutex` on Linux waits on a priority-inheriting futex: when more
/// threads than cores contend, a holder that is descheduled inside its critical section makes
/// every waiter sleep in the kernel, and throughput collapses (the benchmarks' concurrency
/// section shows it: its `Mutex` floor rows against its `pthread_mutex_t` ones). A default
/// `pthread_mutex_t` takes a free lock with one atomic operation and otherwise waits on a
/// plain futex, without priority inheritance, so its throughput holds when threads outnumber
/// cores. ThreadSanitizer understands pthread mutexes, so no extra fences are needed for it.
///
/// Built with `-Xswiftc -DTEMPO_PORTABLE`, Linux takes the `Mutex` branch too: CI builds and
/// tests it that way, so a change that breaks the branch Apple platforms take fails there.
#if canImport(Darwin) || TEMPO_PORTABLE
    package struct Lock<Value: ~Copyable>: ~Copyable, Sendable {
        @usableFromInline let mutex: Mutex<Value>

        /// A lock guarding `value`. `separated` is for locks that many threads take at once
        /// (the registry's shards): on Apple platforms the lock lives inline in its owner, so
        /// the owner keeps its own distance (see `TempoRegistry.Shard`).
        package init(_ value: consuming sending Value, separated: Bool = false) {
            mutex = Mutex(value)
        }

        /// Runs `body` with exclusive access to the value.
        @inlinable
        package borrowing func withLock<Result: ~Copyable, Failure: Error>(
            _ body: (inout sending Value) throws(Failure) -> sending Result
        ) throws(Failure) -> sending Result {
            try mutex.withLock(body)
        }
    }
#else
    package struct Lock<Value: ~Copyable>: ~Copyable {
        /// One allocation: the mutex first, then the value at the next multiple of its alignment.
        /// Both must keep their address for the lock's life, which a stored property would not.
        @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
        @usableFromInline let value: UnsafeMutablePointer<Value>

        @usableFromInline static var valueOffset: Int {
            let size = MemoryLayout<pthread_mutex_t>.stride
            let alignment = MemoryLayout<Value>.alignment
            return (size + alignment - 1) / alignment * alignment
        }

        /// The distance between separated locks: 128 bytes, two cache lines, since some
        /// processors fetch lines in pairs.
        @usableFromInline static var separation: Int { 128 }

        /// A lock guarding `value`. A `separated` lock (for locks that many threads take at
        /// once, the registry's shards) starts and ends on a 128-byte boundary, so that no other
        /// lock or value shares its cache lines: threads taking different separated locks then
        /// do not slow each other down (two shards on one line would make two threads on
        /// distinct keys take turns, as if they shared one lock). Other locks, made per call,
        /// stay small.
        package init(_ value: consuming sending Value, separated: Bool = false) {
            let size = Self.valueOffset + MemoryLayout<Value>.size
            let unit = separated ? Self.separation : 1
            let raw = UnsafeMutableRawPointer.allocate(
                byteCount: (size + unit - 1) / unit * unit,
                alignment: max(
                    unit, MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<Value>.alignment))
            mutex = raw.bindMemory(to: pthread_mutex_t.self, capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            let status = pthread_mutex_init(mutex, nil)
            precondition(status == 0, "pthread_mutex_init failed with \(status)")
            self.value = (raw + Self.valueOffset).bindMemory(to: Value.self, capacity: 1)
            self.value.initialize(to: value)
        }

        deinit {
            pthread_mutex_destroy(mutex)
            value.deinitialize(count: 1)
            mutex.deinitialize(count: 1)
            UnsafeMutableRawPointer(mutex).deallocate()
        }

        /// Runs `body` with exclusive access to the value.
        @inlinable
        package borrowing func withLock<Result: ~Copyable, Failure: Error>(
            _ body: (inout sending Value) throws(Failure) -> sending Result
        ) throws(Failure) -> sending Result {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }

    // The value is reached only through `withLock`, which holds the mutex for the whole access, so
    // no two threads touch it at once; the pointers themselves never change after `init`. This is
    // the same reasoning that makes `Mutex` Sendable, for the same `sending` value.
    extension Lock: @unchecked Sendable where Value: ~Copyable {}
#endif
