#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The registry's tables, split into shards by key hash. Every kind of entry has its table in
// every shard; all the state of one key lives in one shard, behind that shard's lock.

extension TempoRegistry {
    /// One entry's state, its timer, and the generation that timer was armed in (a timer that
    /// fires for an older generation is stale, and does nothing).
    struct Slot<State: Sendable>: Sendable {
        var state: State
        var timerGeneration: UInt64 = 0
        var timer: TimerRef?
        var timerDeadline: Duration = .zero

        /// `timerGeneration`, read in place: `table.values[index].timerGeneration` copies the
        /// whole slot out of the table first, while a mutating access does not.
        var timerGenerationInPlace: UInt64 { mutating get { timerGeneration } }

        /// Takes the timer out, in place (as `timerGenerationInPlace`, without copying the
        /// slot).
        mutating func takeTimer() -> TimerRef? {
            defer { timer = nil }
            return timer
        }
    }

    /// The tables of one shard.
    struct Tables {
        var debounces: [GroupKey: Slot<DebounceState<Operation>>] = [:]
        var throttles: [GroupKey: Slot<ThrottleState<Operation>>] = [:]
        var delays: [UInt64: Slot<DelayState>] = [:]
        var running: [UInt64: Slot<RunningWork>] = [:]
        /// The running named `repeat` loops of this shard, by name (the name's key picks the
        /// shard). Each also has a ``RunningWork`` entry, which is what ``count`` counts.
        var namedRepeats: [String: RepeatControl] = [:]
        var ids: IDSource
        var rateLimits: [GroupKey: Slot<RateLimitEntry>] = [:]
        var windowLimits: [GroupKey: Slot<WindowLimitEntry>] = [:]
        var concurrencyLimits: [GroupKey: Slot<ConcurrencyLimitState<LimitWaiter>>] = [:]
        /// The key whose idle concurrency-limit entry this shard keeps (see
        /// KeptIdleEntries.swift).
        var keptIdleLimit: GroupKey?
        var retryBudgets: [GroupKey: Slot<RetryBudgetState>] = [:]
        var circuitBreakers: [GroupKey: Slot<BreakerState>] = [:]
        /// The key whose idle breaker this shard keeps (see KeptIdleEntries.swift).
        var keptIdleBreaker: GroupKey?

        var count: Int {
            debounces.count + throttles.count + delays.count + running.count
                + rateLimits.count + windowLimits.count
                + concurrencyLimits.count - keptIdleLimitCount
                + retryBudgets.count
                + circuitBreakers.count - keptIdleBreakerCount
        }

        var capacity: Int {
            debounces.capacity + throttles.capacity + delays.capacity + running.capacity
                + namedRepeats.capacity
                + rateLimits.capacity + windowLimits.capacity + concurrencyLimits.capacity
                + retryBudgets.capacity
                + circuitBreakers.capacity
        }
    }

    /// Hands out a shard's ids: timer generations, and the keys of entries that have no key of
    /// their own (a pending delay, a piece of running work). Never reused.
    struct IDSource {
        private var last: UInt64 = 0
        /// This shard's index, and how many low bits of an id hold it.
        private let index: UInt64
        private let bits: UInt64

        init(index: UInt64, bits: UInt64) {
            self.index = index
            self.bits = bits
        }

        /// A new id: its low bits name this shard, so the id alone finds the shard again.
        mutating func next() -> UInt64 {
            last &+= 1
            return last << bits | index
        }
    }

    /// One shard: a pointer to its lock and the tables behind it, in storage the registry
    /// allocates when it is made and frees in its `deinit`. A plain pointer, not an object:
    /// reaching a shard costs no reference count, where a class would be retained and released
    /// by every call (an atomic write to the object's header on every lock taken).
    struct Shard: @unchecked Sendable {
        let storage: UnsafeMutablePointer<Lock<Tables>>

        /// The shard's lock and tables.
        var tables: Lock<Tables> {
            @inline(__always) unsafeAddress { UnsafePointer(storage) }
        }
    }

    /// The storage of every shard, each on its own 128-byte boundary (two cache lines, since
    /// some processors fetch lines in pairs): a lock that lives inline (on Apple platforms)
    /// then shares no cache line with another shard's.
    struct ShardStorage: ~Copyable, @unchecked Sendable {
        let base: UnsafeMutableRawPointer
        let shards: [Shard]

        static var stride: Int {
            let size = MemoryLayout<Lock<Tables>>.stride
            return (size + 127) / 128 * 128
        }

        init(count: Int, bits: UInt64) {
            let stride = Self.stride
            base = UnsafeMutableRawPointer.allocate(
                byteCount: stride * count,
                alignment: max(128, MemoryLayout<Lock<Tables>>.alignment))
            var shards: [Shard] = []
            shards.reserveCapacity(count)
            for index in 0..<count {
                let pointer = (base + index * stride).bindMemory(to: Lock<Tables>.self, capacity: 1)
                pointer.initialize(
                    to: Lock(
                        Tables(ids: IDSource(index: UInt64(index), bits: bits)), separated: true))
                shards.append(Shard(storage: pointer))
            }
            self.shards = shards
        }

        deinit {
            for shard in shards { shard.storage.deinitialize(count: 1) }
            base.deallocate()
        }
    }

    /// At most this many shards, whatever the processor count.
    static let maximumShardCount = 64

    /// The smallest power of two at least four times the number of active processors (capped).
    /// Two callers on distinct keys share a shard with a chance of one in the shard count: with
    /// one shard per core that is one in two on a two-core machine, with four per core one in
    /// eight. A shard costs one small allocation, and only `cancelAll`, `snapshot` and
    /// `liveKeyCount` visit them all.
    static let defaultShardCount: Int = {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
            let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #else
            let cores = 1
        #endif
        var count = 1
        while count < min(max(cores, 1) * 4, maximumShardCount) { count <<= 1 }
        return count
    }()

    /// The shard that holds `key`'s entries.
    @inline(__always)
    func shard(_ key: some ShardKey) -> Shard { shards[key.shardIndex(mask: shardMask)] }
}

/// A key of one of the registry's tables: it names the shard its entry lives in.
protocol ShardKey: Hashable, Sendable {
    func shardIndex(mask: Int) -> Int
}

extension GroupKey: ShardKey {
    @inline(__always)
    func shardIndex(mask: Int) -> Int { shardHash & mask }
}

/// An id from ``TempoRegistry/IDSource``: its low bits are its shard's index.
extension UInt64: ShardKey {
    @inline(__always)
    func shardIndex(mask: Int) -> Int { Int(truncatingIfNeeded: self) & mask }
}
