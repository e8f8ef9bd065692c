/// Formats a duration the way Tempo reports it, without Foundation: `0.123 ms` below one
/// millisecond, `124.3 ms` below one second, `2.100 s` from one second on. Negative durations
/// get a leading `-`.
///
/// ```swift
/// formatDuration(.microseconds(123))    // "0.123 ms"
/// formatDuration(.milliseconds(2_100))  // "2.100 s"
/// ```
func formatDuration(_ duration: Duration) -> String {
    let attoseconds = duration.attoseconds
    let sign = attoseconds < 0 ? "-" : ""
    let magnitude = attoseconds.magnitude
    let perMicrosecond: UInt128 = 1_000_000_000_000
    let perMillisecond: UInt128 = 1_000_000_000_000_000
    let perSecond: UInt128 = 1_000_000_000_000_000_000
    if magnitude < perMillisecond {
        // thousandths of a millisecond = microseconds
        return sign + fixed(rounded(magnitude, perMicrosecond), decimals: 3) + " ms"
    } else if magnitude < perSecond {
        // tenths of a millisecond
        return sign + fixed(rounded(magnitude, perMillisecond / 10), decimals: 1) + " ms"
    } else {
        // thousandths of a second
        return sign + fixed(rounded(magnitude, perMillisecond), decimals: 3) + " s"
    }
}

/// `value / unit`, rounded half up.
private func rounded(_ value: UInt128, _ unit: UInt128) -> UInt128 {
    let (quotient, remainder) = value.quotientAndRemainder(dividingBy: unit)
    return remainder * 2 >= unit ? quotient + 1 : quotient
}

/// `units` as a decimal with `decimals` digits after the point: `fixed(2100, 3)` is `2.100`.
private func fixed(_ units: UInt128, decimals: Int) -> String {
    var scale: UInt128 = 1
    for _ in 0..<decimals { scale *= 10 }
    let (whole, fraction) = units.quotientAndRemainder(dividingBy: scale)
    var digits = String(fraction)
    while digits.count < decimals { digits = "0" + digits }
    return "\(whole).\(digits)"
}
