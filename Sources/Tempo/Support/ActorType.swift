/// Where a scheduled operation runs.
///
/// ```swift
/// debounce(.milliseconds(300), by: .ownedActor) { index.rebuild() }
/// ```
public enum ActorType: Sendable, Hashable {
    /// The main actor. The default of the scheduling helpers, since most callers update UI.
    case mainActor
    /// One serial actor owned by Tempo. Operations that share it never run at the same time,
    /// and none of them blocks the main actor.
    case ownedActor
    /// The task that carries the scheduled work, with no hop to another actor.
    case taskContext
}

/// The serial actor behind ``ActorType/ownedActor``.
@globalActor
public actor TempoActor {
    /// The one instance every `.ownedActor` operation runs on.
    public static let shared = TempoActor()
}

extension ActorType {
    /// Runs a synchronous operation on this actor, from an asynchronous context.
    func run(_ operation: @Sendable () -> Void) async {
        switch self {
        case .mainActor: await MainActor.run { operation() }
        case .ownedActor: await TempoActor.run(operation)
        case .taskContext: operation()
        }
    }

    /// Runs an asynchronous operation, starting on this actor.
    func run(_ operation: @Sendable () async throws -> Void) async throws {
        switch self {
        case .mainActor: try await MainActor.start(operation)
        case .ownedActor: try await TempoActor.start(operation)
        case .taskContext: try await operation()
        }
    }
}

extension TempoActor {
    static func run(_ operation: @Sendable () -> Void) async {
        await shared.perform(operation)
    }

    private func perform(_ operation: @Sendable () -> Void) {
        operation()
    }

    @TempoActor static func start(_ operation: @Sendable () async throws -> Void) async throws {
        try await operation()
    }
}

extension MainActor {
    @MainActor static func start(_ operation: @Sendable () async throws -> Void) async throws {
        try await operation()
    }
}
