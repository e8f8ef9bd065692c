// A gate that blocks the threads waiting on it, for the tests whose operation must hold its
// thread.

import Foundation

/// Blocks the threads that wait on it until it is opened. A test operation that must hold its
/// thread waits here rather than spinning: in a parallel run on two cores, a spinning thread
/// takes a whole core from the rest of the suite.
final class BlockingGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false

    /// Blocks the calling thread until the gate is open.
    func wait() {
        condition.lock()
        while !isOpen { condition.wait() }
        condition.unlock()
    }

    /// Opens the gate for good: every waiter goes on, and later waits return at once.
    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }
}
