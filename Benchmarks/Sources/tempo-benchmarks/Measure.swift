import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The median, minimum and maximum of repeated measurements.
struct Stats: Sendable {
    var median: Double
    var min: Double
    var max: Double

    init(_ values: [Double]) {
        precondition(!values.isEmpty, "no measurements")
        let sorted = values.sorted()
        let mid = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
        min = sorted[0]
        max = sorted[sorted.count - 1]
    }
}

/// The value below which `fraction` of `samples` fall (nearest rank).
func percentile(_ samples: [Double], _ fraction: Double) -> Double {
    precondition(!samples.isEmpty, "no samples")
    let sorted = samples.sorted()
    let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
    return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank))]
}

extension Duration {
    /// This duration in nanoseconds.
    var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}

/// Wall time of `body`, in nanoseconds.
func wallNanoseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return (ContinuousClock.now - start).nanoseconds
}

/// CPU time used so far by every thread of this process, in nanoseconds.
func processCPUNanoseconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) * 1e9 + Double(spec.tv_nsec)
}

/// Resident memory of this process in bytes, from `/proc/self/statm`; `nil` where it does not
/// exist.
func residentBytes() -> Int? {
    #if os(Linux)
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        // "size resident shared text lib data dt", in pages.
        let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self))
        else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
        return nil
    #endif
}

/// The 1-minute load average from `/proc/loadavg`; `nil` where it does not exist.
func loadAverage() -> Double? {
    #if os(Linux)
        let fd = open("/proc/loadavg", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return buffer[..<count].split(separator: UInt8(ascii: " ")).first.flatMap {
            Double(String(decoding: $0, as: UTF8.self))
        }
    #else
        return nil
    #endif
}

/// Returns freed memory at the top of the heap and in free lists to the system where the C
/// library can (glibc's `malloc_trim`); used only to tell memory the allocator keeps from
/// memory live objects hold.
func trimAllocator() {
    #if os(Linux)
        // `malloc.h` is not part of the Glibc module: look the function up at run time.
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
    #endif
}

/// Waits, polling, until `condition` holds or `timeout` passes; returns whether it held.
func waitUntil(timeout: Duration, _ condition: () -> Bool) async -> Bool {
    let end = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= end { return false }
        try? await Task.sleep(for: .microseconds(100))
    }
    return true
}

/// Records which calls of a burst ran, and when.
final class RunLog: Sendable {
    private let runs = Mutex<[(index: Int, at: ContinuousClock.Instant)]>([])

    init() {}

    /// Called by the operation of call `index`.
    func ran(_ index: Int) {
        let now = ContinuousClock.now
        runs.withLock { $0.append((index, now)) }
    }

    var entries: [(index: Int, at: ContinuousClock.Instant)] { runs.withLock { $0 } }
    var count: Int { runs.withLock { $0.count } }
    var last: (index: Int, at: ContinuousClock.Instant)? { runs.withLock { $0.last } }
}

/// A start line for threads: each waits until every one is ready, so they start together.
private final class StartGate: Sendable {
    let ready = Atomic<Int>(0)
    let open = Atomic<Bool>(false)
}

private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// Runs `body(k)` on `count` new OS threads that start together; returns the wall time from
/// the start to the last thread's end, in nanoseconds.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> Double {
    let gate = StartGate()
    #if os(Linux)
        var threads: [pthread_t] = []
    #else
        var threads: [pthread_t?] = []
    #endif
    for k in 0..<count {
        let thread = ThreadBody {
            gate.ready.add(1, ordering: .acquiringAndReleasing)
            while !gate.open.load(ordering: .acquiring) { sched_yield() }
            body(k)
        }
        let context = Unmanaged.passRetained(thread).toOpaque()
        #if os(Linux)
            var handle = pthread_t()
        #else
            var handle: pthread_t? = nil
        #endif
        let status = pthread_create(
            &handle, nil,
            { raw in
                Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            }, context)
        precondition(status == 0, "pthread_create failed: \(status)")
        threads.append(handle)
    }
    while gate.ready.load(ordering: .acquiring) < count { sched_yield() }
    let start = ContinuousClock.now
    gate.open.store(true, ordering: .releasing)
    #if os(Linux)
        for thread in threads { pthread_join(thread, nil) }
    #else
        for thread in threads { pthread_join(thread!, nil) }
    #endif
    return (ContinuousClock.now - start).nanoseconds
}
