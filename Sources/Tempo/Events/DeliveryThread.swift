#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An observer's buffer of events and the thread that hands them to its handler.
///
/// The handler runs on a thread of its own, not in a task: a handler that blocks (a slow write,
/// a lock held elsewhere) then holds only that thread, never one of the threads Swift's tasks
/// share, on which the engine's timers and every caller's `await` run. The thread is started by
/// the first event and ends once it has had nothing to deliver for ``idleTime`` (or the
/// observer is gone); the next event starts another.
///
/// Everything below is guarded by one pthread mutex, with a condition variable the thread
/// waits on while the buffer is empty. (`@unchecked Sendable`: the mutex is the guard.)
final class DeliveryQueue: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    private let handler: @Sendable (TempoEvent) throws -> Void
    private let bufferLimit: Int
    private let host: (any DeterministicClock)?

    // Guarded by `mutex`.
    private var buffer: [TempoEvent] = []
    /// Events are buffered or being handed out; `waitUntilDelivered` waits until not.
    private var delivering = false
    /// While `delivering` on a deterministic clock: the work an advance waits for.
    private var token: SettleToken?
    private var threadRunning = false
    private var threadWaiting = false
    private var closed = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var droppedCount = 0
    private var failureCount = 0

    /// How many times the thread yields, looking again at an empty buffer, before it sleeps.
    static let idleTurns = 32

    /// How long the thread waits for another event before it ends.
    static let idleTime: Duration = .milliseconds(200)

    init(
        host: (any DeterministicClock)?, bufferLimit: Int,
        handler: @escaping @Sendable (TempoEvent) throws -> Void
    ) {
        self.host = host
        self.bufferLimit = max(bufferLimit, 1)
        self.handler = handler
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    private func locked<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    var dropped: Int { locked { droppedCount } }
    /// Whether the thread is asleep on the condition, waiting for an event (for tests: an
    /// event reported now must wake it).
    var isWaitingForEvents: Bool { locked { threadWaiting } }
    var failures: Int { locked { failureCount } }

    /// No event is taken from now on; those buffered are still delivered.
    func close() {
        locked {
            closed = true
            pthread_cond_signal(condition)
        }
    }

    /// Buffers `event` (or drops it when the buffer is full), waking or starting the thread.
    func enqueue(_ event: TempoEvent) {
        let start = locked { () -> Bool in
            guard !closed else { return false }
            guard buffer.count < bufferLimit else {
                droppedCount += 1
                return false
            }
            buffer.append(event)
            if !delivering {
                delivering = true
                // On a deterministic clock an advance waits for the delivery, as for any work
                // the engine starts.
                token = host.map { SettleToken(host: $0) }
            }
            if threadWaiting { pthread_cond_signal(condition) }
            guard !threadRunning else { return false }
            threadRunning = true
            return true
        }
        if start { startThread() }
    }

    /// Returns once nothing is buffered or being handed out.
    func waitUntilDelivered() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = locked { () -> Bool in
                guard delivering else { return true }
                waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func startThread() {
        let context = Unmanaged.passRetained(self).toOpaque()
        #if canImport(Darwin)
            var thread: pthread_t?
        #else
            var thread = pthread_t()
        #endif
        let status = pthread_create(&thread, nil, deliveryThreadMain, context)
        guard status == 0 else {
            // No thread to be had now: the events stay buffered (never handled in the reporter,
            // which may hold a lock), and the next event tries again.
            Unmanaged<DeliveryQueue>.fromOpaque(context).release()
            locked { threadRunning = false }
            return
        }
        #if canImport(Darwin)
            if let thread { pthread_detach(thread) }
        #else
            pthread_detach(thread)
        #endif
    }

    /// The thread's loop: hands out the buffer, oldest first, in batches; waits while it is
    /// empty; ends after ``idleTime`` with nothing to do, or once closed and empty.
    func run() {
        // Two buffers take turns: reporters append to one while this thread hands out the
        // other, so in a steady stream neither allocates.
        var batch: [TempoEvent] = []
        // Turns spent looking again at an empty buffer before sleeping on the condition: in a
        // stream of events the next one usually comes within them, and finds the thread
        // awake (waking a sleeping thread costs its reporter a system call).
        var idleTurns = 0
        while true {
            if idleTurns > 0 { sched_yield() }
            let done = locked {
                () -> (finished: [CheckedContinuation<Void, Never>], token: SettleToken?, end: Bool)
                in
                if buffer.isEmpty, delivering {
                    // Everything reported so far is handled: whoever waits has it.
                    delivering = false
                    defer {
                        waiters = []
                        token = nil
                    }
                    return (waiters, token, false)
                }
                if buffer.isEmpty, !closed, idleTurns < Self.idleTurns {
                    idleTurns += 1
                    return ([], nil, false)
                }
                if buffer.isEmpty {
                    if closed || !waitForEvents() {
                        threadRunning = false
                        return ([], nil, true)
                    }
                }
                idleTurns = 0
                swap(&buffer, &batch)
                return ([], nil, false)
            }
            for waiter in done.finished { waiter.resume() }
            done.token?.finish()
            if done.end { return }
            guard !batch.isEmpty else { continue }
            var failed = 0
            for event in batch {
                do { try handler(event) } catch { failed += 1 }
            }
            batch.removeAll(keepingCapacity: true)
            if failed > 0 { locked { failureCount += failed } }
        }
    }

    /// Waits, under the mutex, for an event or `close()`, at most ``idleTime``; `false` when
    /// the time ran out with the buffer still empty.
    private func waitForEvents() -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let (seconds, attoseconds) = Self.idleTime.components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += time_t(seconds) + time_t(nanoseconds / 1_000_000_000)
        deadline.tv_nsec = .init(nanoseconds % 1_000_000_000)
        threadWaiting = true
        defer { threadWaiting = false }
        while buffer.isEmpty && !closed {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT {
                return !buffer.isEmpty
            }
        }
        return !buffer.isEmpty
    }
}

/// The delivery thread's entry point: runs the queue handed to it, then lets it go.
#if canImport(Darwin)
    private func deliveryThreadMain(_ context: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?
    {
        Unmanaged<DeliveryQueue>.fromOpaque(context).takeRetainedValue().run()
        return nil
    }
#else
    private func deliveryThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    {
        guard let context else { return nil }
        Unmanaged<DeliveryQueue>.fromOpaque(context).takeRetainedValue().run()
        return nil
    }
#endif
