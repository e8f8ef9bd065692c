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
