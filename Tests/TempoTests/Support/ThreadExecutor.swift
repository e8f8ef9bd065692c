// A task executor with a thread of its own, for the real-network tests' clients and for the
// tests whose operation holds a thread of the task pool until the test releases it.

import Foundation

/// Runs its jobs on a thread of its own. The network tests' client tasks prefer it, so that the
/// throughput the server counts is the limit's and not that of a task pool shared with the rest
/// of a parallel test run (on two cores, other suites' work can hold every pool thread for a
/// while, and each permit or slot handed on would wait for one).
///
/// Its jobs run strictly in the order they come, whatever their priority: a subclass that is
/// also a `SerialExecutor` (see `runJob(_:)`) gives an actor that order.
class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    init() {
        Thread.detachNewThread { [self] in run() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs enqueued so far have run.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            runJob(job)
        }
    }

    /// Runs one job on this thread: as a task executor's job here.
    func runJob(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }
}
