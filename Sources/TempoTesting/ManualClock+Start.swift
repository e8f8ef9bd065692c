import Synchronization
import Tempo

extension ManualClock {
    /// Starts `operation` in a task of its own, as a keystroke or a tap starts an `async` entry
    /// point of your code, and returns once the task has made its calls: when it has finished,
    /// or when it waits on Tempo work of this clock that only an advance can bring.
    ///
    /// This is the way to drive an `async` method from a test. A bare `Task { }` may not have
    /// made its call yet when the next line advances the clock, so its call is stamped after the
    /// advance; a task started here has.
    ///
    /// ```swift
    /// @Test @MainActor func typingSearchesOnce() async throws {
    ///     let clock = ManualClock()
    ///     try await TempoRegistry(clock: clock).withCurrent {
    ///         // Made in the scope: its Debouncer is timed by `clock`
    ///         let model = SearchViewModel { query in [query + "!"] }
    ///         var keystrokes: [ManualClock.Started<Void>] = []
    ///         for query in ["s", "sw", "swi"] {
    ///             keystrokes.append(await clock.start { await model.queryChanged(query) })
    ///         }
    ///         await clock.advance(by: .milliseconds(300))
    ///         for keystroke in keystrokes { try await keystroke.value() }
    ///         #expect(model.results == ["swi!"])
    ///     }
    /// }
    /// ```
    ///
    /// What counts as waiting on the clock: an awaited `debounceResult`, `throttleResult` or
    /// `result` call that has been applied, a sleep on this clock (`sleep`, `retry`'s wait), a
    /// rate-limit or concurrency-limit wait, a hedge waiting for its attempts, the `value` of a
    /// `delay`, `execute` or `repeat` task it started. (A task-returning call counts from the
    /// call until its task has run, awaited or not.)
    ///
    /// The task is work of this clock from then on, as an operation a timer started is: each
    /// ``advance(by:)`` waits until it has finished or waits on the clock again, so the lines
    /// after an advance see what it did next. Its registry is the one current where you call
    /// `start` (tasks inherit the scope of ``Tempo/TempoRegistry/withCurrent(isolation:_:)``).
    ///
    /// - Parameters:
    ///   - fileID: Where `start` was called, filled in for you: named when its task is stuck.
    ///   - line: The line of that call, filled in for you.
    ///   - operation: What the task does: typically one call of your code's `async` method.
    /// - Returns: The started task, to await its outcome with ``Started/value(timeLimit:)``
    ///   once the clock has moved, or to cancel it.
    @discardableResult
    public func start<Success: Sendable>(
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ operation: @escaping @Sendable () async throws -> Success
    ) async -> Started<Success> {
        let work = SettleToken(host: self)
        let done = StartedFlag()
        let task = Task {
            defer {
                done.set()
                work.finish()
            }
            return try await SettleToken.$current.withValue(work) { try await operation() }
        }
        await waitUntilSettled(work.id)
        return Started(task: task, done: done, clock: self, origin: "\(fileID):\(line)")
    }

    /// A task started with ``ManualClock/start(fileID:line:_:)``: await its outcome once the
    /// clock has moved, with a time limit, or cancel it.
    ///
    /// ```swift
    /// let model = SearchViewModel { query in [query] }
    /// let keystroke = await clock.start { await model.queryChanged("swift") }
    /// await clock.advance(by: .milliseconds(300))
    /// try await keystroke.value()
    /// ```
    public struct Started<Success: Sendable>: Sendable {
        /// The task itself.
        ///
        /// ```swift
        /// let reload = await clock.start { try await clock.sleep(for: .seconds(1)) }
        /// await clock.advance(by: .seconds(1))
        /// let finished = await reload.task.result
        /// ```
        public let task: Task<Success, any Error>
        fileprivate let done: StartedFlag
        fileprivate let clock: ManualClock
        fileprivate let origin: String

        /// Waits for the task's value, and fails fast instead of hanging when it can never come:
        /// when the task has not finished after `timeLimit` of real time in which this clock
        /// has not moved, it throws ``ManualClock/Stuck``, whose description says what is
        /// pending on the clock. The task is then left as it is (cancel it if you need to).
        ///
        /// ```swift
        /// let model = SearchViewModel { query in [query] }
        /// let keystroke = await clock.start { await model.queryChanged("swift") }
        /// await clock.advance(by: .milliseconds(300))   // forget this, and value() throws
        /// try await keystroke.value()
        /// ```
        ///
        /// - Parameter timeLimit: How long to wait, in real time, while the clock stands still.
        ///   Defaults to 5 seconds.
        /// - Returns: The task's value.
        /// - Throws: The task's error; ``ManualClock/Stuck`` when it is stuck;
        ///   `CancellationError` when the waiting task is cancelled (the started task is
        ///   cancelled with it).
        public func value(timeLimit: Duration = .seconds(5)) async throws -> Success {
            let wall = ContinuousClock()
            var moves = clock.moveCount
            var stillSince = wall.now
            while !done.isSet {
                if Task.isCancelled {
                    task.cancel()
                    throw CancellationError()
                }
                try? await wall.sleep(for: .milliseconds(5))
                let now = clock.moveCount
                if now != moves {
                    moves = now
                    stillSince = wall.now
                } else if !done.isSet, wall.now - stillSince >= timeLimit {
                    throw Stuck(
                        description: """
                            ManualClock: the task started at \(origin) has not finished after \
                            \(timeLimit) of real time, and the clock has not moved meanwhile. \
                            It waits on work that comes due only when the clock moves: advance \
                            the clock (advance(by:), runUntilIdle()) before awaiting its value.
                            \(clock.pendingReport)
                            """)
                }
            }
            return try await task.value
        }

        /// Cancels the task.
        ///
        /// ```swift
        /// let poll = await clock.start { try await clock.sleep(for: .seconds(30)) }
        /// poll.cancel()
        /// ```
        public func cancel() { task.cancel() }
    }

    /// A started task that cannot finish while the clock stands still, and what was pending on
    /// the clock when ``Started/value(timeLimit:)`` gave up.
    ///
    /// ```swift
    /// let model = SearchViewModel { query in [query] }
    /// let keystroke = await clock.start { await model.queryChanged("swift") }
    /// do {
    ///     try await keystroke.value(timeLimit: .seconds(2))   // no advance: it is stuck
    /// } catch let stuck as ManualClock.Stuck {
    ///     print(stuck)   // the clock's time, its timers, and the registries' live entries
    /// }
    /// ```
    public struct Stuck: Error, CustomStringConvertible, Sendable {
        /// A report that says `description`.
        ///
        /// ```swift
        /// let stuck = ManualClock.Stuck(description: "the clock reads 0.0 seconds")
        /// ```
        ///
        /// - Parameter description: What the report says.
        public init(description: String) { self.description = description }

        /// Which task, how long it waited, and what is pending on the clock.
        ///
        /// ```swift
        /// let stuck = ManualClock.Stuck(description: "the clock reads 0.0 seconds")
        /// let report = stuck.description
        /// ```
        public let description: String
    }
}

/// Set once a started task has finished.
final class StartedFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
