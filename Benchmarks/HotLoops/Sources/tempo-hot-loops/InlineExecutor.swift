import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A task executor that runs its jobs on the thread that drains it: `run` starts a task that
/// prefers it, then runs every job enqueued until that task has finished. A job enqueued from
/// another thread is waited for (a spin, then a short sleep).
final class InlineExecutor: TaskExecutor {
    private let jobs = Mutex<[UnownedJob]>([])

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
    }

    /// Runs `body` in a task on a new inline executor and returns its result once it is done.
    /// `body` is given the executor, for the tasks it starts (an unstructured task does not
    /// inherit a task executor preference).
    static func run(_ body: @escaping @Sendable (InlineExecutor) async -> Double) -> Double {
        let executor = InlineExecutor()
        let result = Mutex<Double?>(nil)
        Task(executorPreference: executor) {
            let value = await body(executor)
            result.withLock { $0 = value }
        }
        var idle = 0
        while true {
            if let value = result.withLock({ $0 }) { return value }
            let batch = executor.jobs.withLock { jobs in
                defer { jobs.removeAll(keepingCapacity: true) }
                return jobs
            }
            if batch.isEmpty {
                idle += 1
                if idle > 1_000 { usleep(50) }
                continue
            }
            idle = 0
            for job in batch { job.runSynchronously(on: executor.asUnownedTaskExecutor()) }
        }
    }
}
