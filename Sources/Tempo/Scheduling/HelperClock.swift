/// The clock a wrapping helper (`repeat`, `retry`, `timeout`, `time`) runs on, and the registry
/// it shows itself in.
///
/// Without an explicit clock the helper uses the registry's own clock, so a test that makes a
/// `ManualClock` registry current drives code that calls the plain free functions. With an
/// explicit clock, instants are translated to the registry's clock for the snapshot.
struct HelperClock: Sendable {
    let engine: EngineClock
    let registry: TempoRegistry
    private let sharesRegistryClock: Bool

    /// `clock`, shown in the current registry; `nil` is the registry's own clock.
    init(_ clock: (any Clock<Duration>)? = nil, registry: TempoRegistry = .current) {
        self.registry = registry
        guard let clock else {
            engine = registry.clock
            sharesRegistryClock = true
            return
        }
        // A helper sleeps on its clock in its own task: it arms no timer, so it needs no driver.
        engine = EngineClock(clock, timers: false)
        sharesRegistryClock = false
    }

    /// The time since this clock's origin.
    func now() -> Duration { engine.now() }

    /// `instant` of this clock as an instant of the registry's clock, for the snapshot.
    func registryInstant(_ instant: Duration) -> Duration {
        if sharesRegistryClock { return instant }
        return registry.now.adding(instant.subtracting(engine.now()))
    }

    /// Sleeps until `deadline` in bounded steps; throws `CancellationError` when cancelled.
    func sleep(until deadline: Duration) async throws {
        try await engine.sleep(until: deadline)
    }
}

/// Where a helper was called: the key it is shown under in the snapshot.
struct HelperSite: Sendable {
    let identifier: String?
    let fileID: StaticString
    let line: UInt
    let column: UInt

    init(identifier: String? = nil, _ fileID: StaticString, _ line: UInt, _ column: UInt) {
        self.identifier = identifier
        self.fileID = fileID
        self.line = line
        self.column = column
    }

    /// The key the work is listed, and its events reported, under.
    var key: GroupKey { GroupKey(identifier, fileID, line, column) }

    /// Reports a decision of the work's helper to `registry`'s observers, if it has any.
    @inline(__always)
    func report(
        _ helper: TempoSnapshot.Kind, _ decision: @autoclosure () -> TempoEvent.Decision,
        in registry: TempoRegistry
    ) {
        guard registry.events.isObserved else { return }
        registry.events.report(helper, key, decision())
    }

    /// Registers work of `kind` in `registry`: a lock, no await, no task.
    func begin(
        _ kind: TempoSnapshot.Kind, in registry: TempoRegistry, state: TempoSnapshot.State
    ) -> UInt64 {
        registry.beginRunningWork(
            kind, identifier: identifier, fileID: fileID, line: line, column: column, state: state)
    }
}
