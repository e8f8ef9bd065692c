import Tempo

/// A registry's events as the lines their `description` prints, in the order delivered.
final class EventLog: Sendable {
    let observer: TempoObserver
    private let events = Log<TempoEvent>()

    init(_ registry: TempoRegistry, bufferLimit: Int = 10_000) {
        observer = registry.observe(bufferLimit: bufferLimit) { [events] in events.append($0) }
    }

    /// Every event delivered so far, once those already reported have been.
    func all() async -> [TempoEvent] {
        await observer.waitUntilDelivered()
        return events.all
    }

    /// The lines of ``all()``.
    func lines() async -> [String] { await all().map(\.description) }

    /// The decisions of ``all()``, without the instant and key.
    func decisions() async -> [String] { await all().map { "\($0.decision)" } }
}

struct Refused: Error, CustomStringConvertible {
    var description: String { "refused" }
}
