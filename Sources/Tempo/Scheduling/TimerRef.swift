/// A timer armed by the engine: an entry of the registry's ``TimerDriver`` on an ordinary clock,
/// or a callback held by a deterministic clock.
enum TimerRef: Sendable {
    case driver(TimerDriver, UInt64)
    case manual(any DeterministicClock, UInt64)

    func cancel() {
        switch self {
        case .driver(let driver, let id): driver.cancel(id)
        case .manual(let host, let id): host.cancelTimer(id)
        }
    }
}
