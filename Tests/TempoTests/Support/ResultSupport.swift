import Tempo
import TempoTesting
import Testing

/// Starts `body` in a main-actor task and returns it once the task has reached its first
/// suspension: an awaited `debounce` or `throttle` call in `body` has then been applied.
@MainActor
func started<T: Sendable>(
    _ body: @escaping @MainActor @Sendable () async throws -> T
) async -> Task<T, any Error> {
    var task: Task<T, any Error>?
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        task = Task { @MainActor in
            continuation.resume()
            return try await body()
        }
    }
    return task!
}

/// What an awaiting caller ended with, in a form `#expect` compares.
enum Outcome<T: Sendable & Equatable>: Equatable, Sendable {
    case value(T)
    case notRun
    case overtaken
    case cancelled
    case failed(String)

    init(_ task: Task<T, any Error>) async {
        do {
            self = .value(try await task.value)
        } catch DiscardedCall.notRun {
            self = .notRun
        } catch DiscardedCall.overtaken {
            self = .overtaken
        } catch is CancellationError {
            self = .cancelled
        } catch {
            self = .failed("\(error)")
        }
    }
}

/// The outcomes of `tasks`, in order.
func outcomes<T: Sendable & Equatable>(_ tasks: [Task<T, any Error>]) async -> [Outcome<T>] {
    var all: [Outcome<T>] = []
    for task in tasks { all.append(await Outcome(task)) }
    return all
}

/// A registry on a fresh manual clock, made current for `body`, which runs on the main actor.
@MainActor
func onMainManualClock(_ body: @MainActor (ManualClock, TempoRegistry) async throws -> Void)
    async rethrows
{
    let clock = ManualClock()
    let registry = TempoRegistry(clock: clock)
    try await registry.withCurrent { try await body(clock, registry) }
}
