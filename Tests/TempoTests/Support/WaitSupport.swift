import TempoTesting
/// How long a test waits for something that a working build does in milliseconds: about 2 s
/// of polls (see `eventually`). A broken build fails the test after this, with a clear
/// expectation failure, instead of stalling the suite.
let failFastLimit: Duration = .seconds(2)

/// Runs `body` in a task and waits for it to finish, at most `limit` of polls (see
/// `eventually`); returns whether it did. A body that hangs (an `advance` waiting for work that never ends, a
/// task whose call was lost) then fails the test in seconds; its task is left behind.
func finishes(
    within limit: Duration = failFastLimit, _ body: @escaping @Sendable () async -> Void
) async -> Bool {
    let done = Flag()
    Task {
        await body()
        done.set()
    }
    return await eventually(within: limit) { done.isSet }
}

extension ManualClock.Started {
    /// The started task's value, for a task that waits on work off the clock (a run on the main
    /// actor, a task of the pool, a drain waiting for them): a minute of real time in which the
    /// clock stands still, where `value()` gives five seconds. The parallel suite, under
    /// ThreadSanitizer above all, can keep the pool and the actors busy for longer than five
    /// seconds on two cores.
    func outcome() async throws -> Success {
        try await value(timeLimit: .seconds(60))
    }
}
