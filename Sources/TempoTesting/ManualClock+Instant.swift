import Tempo

// The instants of a `ManualClock`.

extension ManualClock {
    /// An instant of a ``ManualClock``: the time since the clock's origin.
    ///
    /// ```swift
    /// let start = clock.now
    /// await clock.advance(by: .seconds(2))
    /// let elapsed = start.duration(to: clock.now)   // 2 seconds
    /// ```
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible
    {
        /// The time since the clock's origin.
        ///
        /// ```swift
        /// let sinceOrigin = clock.now.offset   // .zero until the clock is advanced
        /// ```
        public var offset: Duration

        /// An instant `offset` after the origin.
        ///
        /// ```swift
        /// await clock.advance(to: ManualClock.Instant(offset: .seconds(10)))
        /// ```
        ///
        /// - Parameter offset: The time since the clock's origin; negative is before it.
        public init(offset: Duration) { self.offset = offset }

        /// The instant `duration` later (earlier, for a negative one). Saturates instead of
        /// trapping on overflow.
        ///
        /// ```swift
        /// let deadline = clock.now.advanced(by: .seconds(5))
        /// ```
        ///
        /// - Parameter duration: How far to move.
        /// - Returns: The instant `offset + duration`, clamped to the range of `Duration`.
        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset.adding(duration))
        }

        /// The time from this instant to `other`: negative when `other` is earlier. Saturates
        /// instead of trapping on overflow.
        ///
        /// ```swift
        /// let left = clock.now.duration(to: ManualClock.Instant(offset: .seconds(10)))
        /// ```
        ///
        /// - Parameter other: The instant to measure to.
        /// - Returns: `other.offset - offset`, clamped to the range of `Duration`.
        public func duration(to other: Instant) -> Duration { other.offset.subtracting(offset) }

        /// Whether `lhs` comes before `rhs`: compares their offsets.
        ///
        /// ```swift
        /// let due = ManualClock.Instant(offset: .seconds(1)) < clock.now
        /// ```
        ///
        /// - Parameters:
        ///   - lhs: An instant.
        ///   - rhs: Another instant.
        /// - Returns: `lhs.offset < rhs.offset`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }

        /// `ManualClock.Instant(<offset>)`, the offset as `Duration` prints it.
        ///
        /// ```swift
        /// print(ManualClock.Instant(offset: .seconds(2)))
        /// // ManualClock.Instant(2.0 seconds)
        /// ```
        public var description: String { "ManualClock.Instant(\(offset))" }
    }
}
