// `Duration`'s comparison and arithmetic operators, and its `zero`, are not inlinable in the
// standard library: each use is a call into the runtime, through the dynamic linker's table,
// for what is one compare or one add of the attosecond count. The engine compares deadlines on
// every call, so inside this module these declarations, which shadow the standard library's,
// do the same operation on the same attosecond count inline. The results are the same:
// comparisons and equality of the attosecond count are how `Duration` orders itself, and `+`
// and `-` trap on overflow exactly as the standard library's do (`Int128` arithmetic traps;
// the engine's own arithmetic saturates instead, see `SaturatingArithmetic.swift`).
// They are `@usableFromInline` because public default arguments and the inlinable front doors
// reach them too, which only such declarations may be; other modules' own code never sees them.
// `DurationOperatorTests` checks them against the standard library's; only the benchmarks'
// cost rows show them gone (ArchitectureHotPath.md names the rows).

extension Duration {
    @inline(__always) @usableFromInline
    static func < (lhs: Duration, rhs: Duration) -> Bool { lhs.attoseconds < rhs.attoseconds }

    @inline(__always) @usableFromInline
    static func <= (lhs: Duration, rhs: Duration) -> Bool { lhs.attoseconds <= rhs.attoseconds }

    @inline(__always) @usableFromInline
    static func > (lhs: Duration, rhs: Duration) -> Bool { lhs.attoseconds > rhs.attoseconds }

    @inline(__always) @usableFromInline
    static func >= (lhs: Duration, rhs: Duration) -> Bool { lhs.attoseconds >= rhs.attoseconds }

    @inline(__always) @usableFromInline
    static func == (lhs: Duration, rhs: Duration) -> Bool { lhs.attoseconds == rhs.attoseconds }

    @inline(__always) @usableFromInline
    static func != (lhs: Duration, rhs: Duration) -> Bool { lhs.attoseconds != rhs.attoseconds }

    @inline(__always) @usableFromInline
    static func + (lhs: Duration, rhs: Duration) -> Duration {
        Duration(attoseconds: lhs.attoseconds + rhs.attoseconds)
    }

    @inline(__always) @usableFromInline
    static func - (lhs: Duration, rhs: Duration) -> Duration {
        Duration(attoseconds: lhs.attoseconds - rhs.attoseconds)
    }

    @inline(__always) @usableFromInline
    static var zero: Duration { Duration(attoseconds: 0) }
}

/// The earlier of two durations, inline (the generic `min` goes through `Comparable`, to the
/// standard library's `<`).
@inline(__always) @usableFromInline
func min(_ a: Duration, _ b: Duration) -> Duration { b < a ? b : a }

/// The later of two durations, inline.
@inline(__always) @usableFromInline
func max(_ a: Duration, _ b: Duration) -> Duration { b >= a ? b : a }
