/// Waits for `duration` on the current registry's clock.
///
/// Returns early, without throwing, when the task is cancelled; zero or less returns at once.
/// Any duration is safe: `.seconds(Int64.max)` waits until the task is cancelled.
///
/// ```swift
/// await sleep(.milliseconds(500))
/// ```
///
/// - Parameter duration: How long to wait. Defaults to 1 second.
public func sleep(_ duration: Duration = .seconds(1)) async {
    guard duration > .zero else { return }
    let clock = TempoRegistry.current.clock
    try? await clock.sleep(until: clock.now().adding(duration))
}
