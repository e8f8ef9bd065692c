#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The engine's view of a clock: time as a `Duration` since the clock's origin, sleeping in
/// bounded steps, and timers.
struct EngineClock: Sendable {
    /// The longest single sleep handed to the underlying clock. Longer waits are made of steps
    /// of this size, so no deadline passed to a clock can overflow its instant arithmetic.
    static let maximumStep: Duration = .seconds(3_600)

    let now: @Sendable () -> Duration
    private let sleepStep: @Sendable (Duration) async throws -> Void
    /// Who keeps this clock's timers.
    private let timers: Timers

    private enum Timers {
        /// A deterministic clock keeps them itself and fires them as it is advanced.
        case host(any DeterministicClock)
        /// An ordinary clock's timers sit in the registry's driver.
        case driver(TimerDriver)
        /// A wrapping helper's own clock: it only sleeps, and arms no timers.
        case none
    }

    /// The deterministic clock behind this one, if it is one. Stored apart from `timers`:
    /// reading it out of that enum copies the enum, which retains the timer driver of an
    /// ordinary clock (one object every caller of the registry shares) on every call that
    /// asks.
    let host: (any DeterministicClock)?

    /// The timer driver of an ordinary clock that keeps timers.
    var driver: TimerDriver? {
        if case .driver(let driver) = timers { return driver }
        return nil
    }

    /// The engine's view of `clock`. With `timers: false` (a helper that only sleeps on its
    /// clock) no timer driver is made.
    init<C: Clock>(_ clock: C, timers keepsTimers: Bool = true) where C.Duration == Duration {
        let origin = clock.now
        if let host = clock as? any DeterministicClock {
            // Deterministic clocks take timers at their own offsets, so the engine reads them.
            // The instant at offset zero, reached in two halves so that no step overflows even
            // when the clock starts at an extreme offset; an offset `d` is then `d` after it.
            let originOffset = host.offset
            let half = originOffset / 2
            let zero = origin.advanced(by: .zero.subtracting(half))
                .advanced(by: .zero.subtracting(originOffset.subtracting(half)))
            timers = .host(host)
            self.host = host
            work = keepsTimers ? LaunchedWork() : nil
            now = { host.offset }
            sleepStep = { try await clock.sleep(until: zero.advanced(by: $0), tolerance: nil) }
        } else {
            let now: @Sendable () -> Duration
            if let start = origin as? ContinuousClock.Instant {
                now = Self.continuousNow(from: start)
            } else {
                now = { origin.duration(to: clock.now) }
            }
            let sleepStep: @Sendable (Duration) async throws -> Void = {
                try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil)
            }
            self.now = now
            self.sleepStep = sleepStep
            host = nil
            timers = keepsTimers ? .driver(TimerDriver(now: now, sleep: sleepStep)) : .none
            work = keepsTimers ? LaunchedWork() : nil
        }
    }

    /// The offset from `origin` of the continuous clock's time, read as cheaply as the platform
    /// allows: `ContinuousClock.now` goes through the runtime and builds an `Instant`, whose
    /// distance from the origin is one more call. On Linux, where `ContinuousClock` reads
    /// `CLOCK_BOOTTIME`, the engine reads that clock itself, measuring from a reading taken just
    /// after `origin` was: its offsets then trail `origin.duration(to: .now)` by the gap
    /// between the two readings (tens of nanoseconds), never lead it, so work the engine finds
    /// due is due by `ContinuousClock` too. Elsewhere it reads `ContinuousClock`.
    private static func continuousNow(from origin: ContinuousClock.Instant)
        -> @Sendable () -> Duration
    {
        #if os(Linux) && (canImport(Glibc) || canImport(Musl)) && !TEMPO_PORTABLE
            let base = bootNanoseconds()
            return { Duration(attoseconds: Int128(bootNanoseconds() &- base) &* 1_000_000_000) }
        #else
            return { origin.duration(to: ContinuousClock.now) }
        #endif
    }

    /// Sleeps until `deadline` (an offset from the origin). Throws `CancellationError` when the
    /// task is cancelled. Any deadline is safe, `Duration`'s largest included.
    func sleep(until deadline: Duration) async throws {
        while true {
            let current = now()
            if current >= deadline { return }
            try await sleepStep(min(deadline, current.adding(Self.maximumStep)))
        }
    }

    /// Arms a timer at `deadline`. `fire` runs once the deadline has passed and returns the next
    /// deadline to wake for, or `nil` to end the timer; a deadline not later than the instant
    /// `fire` got ends it too. Re-arming to a later deadline through the return value costs no
    /// new task and no new timer.
    func startTimer(at deadline: Duration, _ fire: @escaping @Sendable (Duration) -> Duration?)
        -> TimerRef
    {
        switch timers {
        case .host(let host): return .manual(host, host.scheduleTimer(at: deadline, fire))
        case .driver(let driver): return .driver(driver, driver.schedule(at: deadline, fire))
        case .none: preconditionFailure("a wrapping helper's clock arms no timers")
        }
    }

    /// What the registry has launched and not seen finish; `nil` for a wrapping helper's own
    /// clock, which launches nothing.
    let work: LaunchedWork?

    /// Starts work a deterministic clock tracks (an advance waits for it); `nil` on an ordinary
    /// clock. For the helpers' own work: a hedge's attempts, a repeat's ticks, a limiter's
    /// waiters, a timeout's deadline.
    func settleToken() -> SettleToken? {
        host.map { SettleToken(host: $0) }
    }

    /// Starts an operation the engine launches: counted in ``work`` on every clock (what a
    /// drain waits for), and tracked by the clock when it is deterministic.
    func launchToken() -> SettleToken? {
        guard let work else { return settleToken() }
        return SettleToken(host: host, work: work)
    }
}

#if os(Linux) && (canImport(Glibc) || canImport(Musl)) && !TEMPO_PORTABLE
    /// `CLOCK_BOOTTIME`, the clock `ContinuousClock` reads on Linux, in nanoseconds (an `Int64`
    /// holds 292 years of them).
    @inline(__always)
    private func bootNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }
#endif
