/// The timers of one registry on an ordinary clock: a min-heap of deadlines served by one task.
///
/// A live group costs a heap entry and a table entry, not a sleeping task, so arming a timer
/// is a lock and a heap push. The one runner task sleeps until the earliest deadline, fires
/// what is due and sleeps again; when no timer is left it ends, and the next timer starts a new
/// one. A timer armed earlier than the runner's wake-up cancels that runner and starts a fresh
/// one (a clock's sleep can only be cut short by cancellation); a timer re-armed later by its
/// own callback is pushed back without waking anyone, which is the common case: a debounce
/// group whose deadline moved.
///
/// Timer callbacks run on the runner and must not run user code: ``Operation/launch(_:)``
/// moves `.taskContext` operations to a task of their own when it sees ``isRunner``.
///
/// A timer handed to its callback is out of the table while the callback runs; ``cancel(_:)``
/// then marks it cancelled, and the runner does not put it back, so a cancel is never lost.
///
/// The runner runs at the highest priority of the tasks that armed its timers since it
/// started (the default priority at least), so callers of a higher priority than the runner's
/// do not starve the timers they wait for: a timer armed by a higher-priority task starts a
/// runner of that priority in place of the current one.
final class TimerDriver: Sendable {
    private struct Timer {
        var deadline: Duration
        var fire: @Sendable (Duration) -> Duration?
    }

    /// A heap node; stale when the timer was cancelled or moved since it was pushed.
    private struct Node {
        var deadline: Duration
        var id: UInt64
    }

    private struct State {
        var heap: [Node] = []
        var timers: [UInt64: Timer] = [:]
        var lastID: UInt64 = 0
        /// The runner task, when one exists, and its generation.
        var runner: Task<Void, Never>?
        var runnerGeneration: UInt64 = 0
        /// When the runner will wake; `nil` while it is awake and firing.
        var runnerWakesAt: Duration?
        /// The priority the runner runs at, and the highest priority of the tasks that armed
        /// timers since it started; a runner that finds the second above the first hands over
        /// to a runner of that priority.
        var runnerPriority: TaskPriority = .medium
        var wantedPriority: TaskPriority = .medium
        /// The timers out of the table because their callbacks are running, mapped to whether
        /// they were cancelled meanwhile.
        var firing: [UInt64: Bool] = [:]
    }

    private let state = Lock(State())
    private let now: @Sendable () -> Duration
    private let sleep: @Sendable (Duration) async throws -> Void

    /// Whether the current task is a timer runner.
    @TaskLocal static var isRunner = false

    init(
        now: @escaping @Sendable () -> Duration,
        sleep: @escaping @Sendable (Duration) async throws -> Void
    ) {
        self.now = now
        self.sleep = sleep
    }

    /// Arms a timer; returns its id for ``cancel(_:)``. `fire` gets the instant it fires at and
    /// returns the next deadline, or `nil` to end the timer; a deadline not later than that
    /// instant ends it too (a timer never fires twice at one instant).
    func schedule(at deadline: Duration, _ fire: @escaping @Sendable (Duration) -> Duration?)
        -> UInt64
    {
        // The higher of the two: on Linux a task-group child added at `.high` reports its
        // priority only as its base priority (`currentPriority` says `.medium`).
        var priority = Task.currentPriority
        if let base = Task.basePriority, base > priority { priority = base }
        return state.withLock { state in
            state.lastID &+= 1
            let id = state.lastID
            state.timers[id] = Timer(deadline: deadline, fire: fire)
            Self.push(Node(deadline: deadline, id: id), into: &state.heap)
            if priority > state.wantedPriority { state.wantedPriority = priority }
            wakeIfNeeded(&state, for: deadline)
            return id
        }
    }

    /// Starts a runner when none exists, or replaces a sleeping one that would wake after
    /// `deadline` or runs below the wanted priority. An awake runner looks at the heap and the
    /// priority again before it sleeps.
    private func wakeIfNeeded(_ state: inout State, for deadline: Duration) {
        if state.runner == nil {
            startRunner(&state)
        } else if let wake = state.runnerWakesAt,
            deadline < wake || state.wantedPriority > state.runnerPriority
        {
            state.runner?.cancel()
            startRunner(&state)
        }
    }

    /// Disarms a timer; does nothing when it already fired or was cancelled. A timer whose
    /// callback is running is not put back afterwards.
    func cancel(_ id: UInt64) {
        state.withLock { state in
            guard state.timers.removeValue(forKey: id) != nil else {
                if state.firing[id] != nil { state.firing[id] = true }
                return
            }
            if state.timers.isEmpty {
                // Nothing left: stop a sleeping runner now rather than at its old deadline,
                // which may be far away.
                state.heap = []
                if state.runnerWakesAt != nil {
                    state.runner?.cancel()
                    state.runner = nil
                    state.runnerGeneration &+= 1
                    state.wantedPriority = .medium
                }
            } else {
                Self.compactIfSparse(&state)
            }
        }
    }

    /// How many timers are armed.
    var count: Int { state.withLock { $0.timers.count } }

    /// How many heap nodes are held, stale ones included (for tests of compaction).
    var heapSize: Int { state.withLock { $0.heap.count } }

    /// How many timers the timer table has room for (for tests of compaction).
    var tableCapacity: Int { state.withLock { $0.timers.capacity } }

    /// Whether a runner task exists.
    var hasRunner: Bool { state.withLock { $0.runner != nil } }

    private func startRunner(_ state: inout State) {
        state.runnerGeneration &+= 1
        let generation = state.runnerGeneration
        state.runnerWakesAt = nil
        state.runnerPriority = state.wantedPriority
        state.runner = Task.detached(priority: state.runnerPriority) { [self] in
            await run(generation)
        }
    }

    /// The runner: fire what is due, sleep until the next deadline, repeat; end when no timer
    /// is left or a newer runner took over.
    private func run(_ generation: UInt64) async {
        while true {
            let current = now()
            let step = state.withLock { state -> (due: [(UInt64, Timer)], wake: Duration?)? in
                guard state.runnerGeneration == generation else { return nil }
                if state.wantedPriority > state.runnerPriority {
                    // A task of a higher priority armed a timer: hand over to a runner of that
                    // priority. No timer is out for firing here, so nothing is lost.
                    startRunner(&state)
                    return nil
                }
                var due: [(UInt64, Timer)] = []
                while let top = state.heap.first {
                    guard let timer = state.timers[top.id], timer.deadline == top.deadline else {
                        Self.popMin(&state.heap)  // stale node
                        continue
                    }
                    guard top.deadline <= current else { break }
                    Self.popMin(&state.heap)
                    state.timers.removeLive(top.id)
                    state.firing[top.id] = false
                    due.append((top.id, timer))
                }
                if due.isEmpty, state.heap.isEmpty {
                    // Idle: end the runner and give the storage of the busiest moment back.
                    state.runner = nil
                    state.runnerWakesAt = nil
                    state.heap = []
                    state.timers = [:]
                    state.firing = [:]
                    state.wantedPriority = .medium
                    return nil
                }
                state.runnerWakesAt = due.isEmpty ? state.heap.first?.deadline : nil
                return (due, state.runnerWakesAt)
            }
            guard let step else { return }
            if !step.due.isEmpty {
                var next: [(UInt64, Timer)] = []
                Self.$isRunner.withValue(true) {
                    for (id, timer) in step.due {
                        // Fired at `current`: a next deadline not later ends the timer, or at
                        // the clock's last instant it would fire again and again.
                        guard let deadline = timer.fire(current), deadline > current else {
                            continue
                        }
                        next.append((id, Timer(deadline: deadline, fire: timer.fire)))
                    }
                }
                rearm(step.due, next)
                continue
            }
            guard let wake = step.wake else { continue }
            do {
                try await sleep(min(wake, current.adding(EngineClock.maximumStep)))
            } catch {
                return  // cancelled: a runner for an earlier deadline took over
            }
        }
    }

    /// Ends the firing of `fired` and puts back the timers in `next` whose callbacks asked to
    /// fire again, unless they were cancelled meanwhile. The runner calling this is awake, so
    /// nothing needs waking.
    private func rearm(_ fired: [(UInt64, Timer)], _ next: [(UInt64, Timer)]) {
        state.withLock { state in
            for (id, timer) in next where state.firing[id] == false {
                state.timers[id] = timer
                Self.push(Node(deadline: timer.deadline, id: id), into: &state.heap)
            }
            for (id, _) in fired { state.firing.removeLive(id) }
        }
    }

    // MARK: Heap

    private static func less(_ a: Node, _ b: Node) -> Bool {
        (a.deadline, a.id) < (b.deadline, b.id)
    }

    private static func push(_ node: Node, into heap: inout [Node]) {
        heap.append(node)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func popMin(_ heap: inout [Node]) {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, less(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, less(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    /// Rebuilds the heap and the table when most of what they hold is gone, so memory follows
    /// the timers that are live, not the most there ever were.
    private static func compactIfSparse(_ state: inout State) {
        let live = state.timers.count
        guard state.heap.count > 1_024, state.heap.count > 4 * live else { return }
        var heap: [Node] = []
        heap.reserveCapacity(live)
        for (id, timer) in state.timers {
            push(Node(deadline: timer.deadline, id: id), into: &heap)
        }
        state.heap = heap
        state.timers = Dictionary(uniqueKeysWithValues: state.timers.map { ($0.key, $0.value) })
    }
}
