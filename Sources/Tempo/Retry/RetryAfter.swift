// The value of HTTP's `Retry-After` header (RFC 9110 §10.2.3) as a wait, without Foundation:
// delay-seconds, or an HTTP-date in any of its three forms (§5.6.7), counted from a wall-clock
// time the caller passes or the system's.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads the value of an HTTP `Retry-After` header as the time to wait.
///
/// The header takes one of two forms (RFC 9110, section 10.2.3):
///
/// - **delay-seconds**, one or more ASCII digits: `120` is two minutes. A number too large for
///   an `Int64` of seconds saturates at `.seconds(Int64.max)` instead of trapping.
/// - **HTTP-date**, the instant to try again at, in any of the three forms a recipient must
///   accept (RFC 9110, section 5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate, the one
///   servers send), and the obsolete `Sunday, 06-Nov-94 08:49:37 GMT` (RFC 850) and
///   `Sun Nov  6 08:49:37 1994` (asctime). The wait is the time from `now` to that instant,
///   or zero when it is not in the future.
///
/// Spaces and tabs around the value are ignored. Anything else that is not exactly one of
/// those forms gives `nil`: an empty value, a sign, a fraction, a unit, a misspelt or
/// lowercase day or month name, a day the month does not have (`29 Feb 2023`), an hour, minute
/// or second out of range, or anything after the value. The day name is checked to be one,
/// but not against the date. A two-digit RFC 850 year is read as RFC 9110 says: a date that
/// would be more than 50 years after `now` is in the most recent past year with those digits.
///
/// ```swift
/// RetryAfter.parse("120")  // .seconds(120)
/// RetryAfter.parse(" 5\t")  // .seconds(5)
/// RetryAfter.parse("soon")  // nil
///
/// // 08:49:07 UTC on 6 November 1994, as seconds since 1970
/// let now = Duration.seconds(784_111_747)
/// RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: now)  // .seconds(30)
/// RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: now)  // .seconds(30)
/// RetryAfter.parse("Sun Nov  6 08:49:37 1994", now: now)  // .seconds(30)
/// RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", now: now)  // .zero: past
/// ```
///
/// Throwing ``HTTPStatusError`` parses the header for you.
public enum RetryAfter {
    /// The wait a `Retry-After` header value asks for, or `nil` when the value is not valid.
    ///
    /// ```swift
    /// let wait = RetryAfter.parse("Wed, 21 Oct 2026 07:28:00 GMT") ?? .seconds(1)
    /// ```
    ///
    /// With Foundation, pass `now: .seconds(Date().timeIntervalSince1970)` to read the same
    /// clock a `Date` does.
    ///
    /// - Parameters:
    ///   - value: The header's value, such as `"120"` or `"Sun, 06 Nov 1994 08:49:37 GMT"`.
    ///   - now: The current wall-clock time, as the time since 1970-01-01 00:00:00 UTC; a
    ///     date is counted from it. By default the system's real-time clock.
    /// - Returns: The time to wait: the seconds given, or the time from `now` until the date
    ///   given (zero when the date is not after `now`); `nil` when `value` is neither.
    public static func parse(
        _ value: some StringProtocol, now: Duration = RetryAfter.systemNow()
    ) -> Duration? {
        var bytes = Array(value.utf8)[...]
        while let first = bytes.first, isOptionalWhitespace(first) { bytes.removeFirst() }
        while let last = bytes.last, isOptionalWhitespace(last) { bytes.removeLast() }
        guard let first = bytes.first else { return nil }
        if isDigit(first) { return delaySeconds(bytes) }
        guard let date = httpDate(bytes, now: now) else { return nil }
        let wait = Duration.seconds(date).subtracting(now)
        return wait > .zero ? wait : .zero
    }

    /// The system's real-time clock, as the time since 1970-01-01 00:00:00 UTC.
    @usableFromInline
    static func systemNow() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
    }
}

// MARK: - delay-seconds

extension RetryAfter {
    /// `1*DIGIT` as seconds, saturating at `Int64.max`; `nil` if any byte is not a digit.
    private static func delaySeconds(_ bytes: ArraySlice<UInt8>) -> Duration? {
        var seconds: Int64 = 0
        for byte in bytes {
            guard isDigit(byte) else { return nil }
            let (tens, tensOverflow) = seconds.multipliedReportingOverflow(by: 10)
            let (sum, sumOverflow) = tens.addingReportingOverflow(Int64(byte &- UInt8(ascii: "0")))
            seconds = tensOverflow || sumOverflow ? .max : sum
        }
        return .seconds(seconds)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// OWS: a space or a horizontal tab.
    private static func isOptionalWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }
}

// MARK: - HTTP-date

extension RetryAfter {
    /// The seconds since 1970 of an HTTP-date in any of its three forms, or `nil`.
    private static func httpDate(_ bytes: ArraySlice<UInt8>, now: Duration) -> Int64? {
        var text = DateText(bytes)
        let name = text.letters()
        if text.skip(",") {
            guard text.skip(" ") else { return nil }
            if dayNames.contains(name) {
                // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
                guard let day = text.number(digits: 2), text.skip(" "),
                    let month = text.month(), text.skip(" "),
                    let year = text.number(digits: 4), text.skip(" "),
                    let time = text.timeOfDay(), text.skip(" GMT"), text.isAtEnd
                else { return nil }
                return timestamp(year: year, month: month, day: day, time: time)
            }
            guard longDayNames.contains(name) else { return nil }
            // rfc850-date: Sunday, 06-Nov-94 08:49:37 GMT
            guard let day = text.number(digits: 2), text.skip("-"),
                let month = text.month(), text.skip("-"),
                let shortYear = text.number(digits: 2), text.skip(" "),
                let time = text.timeOfDay(), text.skip(" GMT"), text.isAtEnd
            else { return nil }
            return rfc850Timestamp(
                shortYear: shortYear, month: month, day: day, time: time, now: now)
        }
        // asctime-date: Sun Nov  6 08:49:37 1994
        guard dayNames.contains(name), text.skip(" "), let month = text.month(), text.skip(" "),
            let day = text.skip(" ") ? text.number(digits: 1) : text.number(digits: 2),
            text.skip(" "), let time = text.timeOfDay(), text.skip(" "),
            let year = text.number(digits: 4), text.isAtEnd
        else { return nil }
        return timestamp(year: year, month: month, day: day, time: time)
    }

    /// The seconds since 1970 of a date and time of day, or `nil` when the month has no such
    /// day or the time is out of range (a second of 60 is a leap second, only at 23:59).
    private static func timestamp(
        year: Int64, month: Int64, day: Int64, time: (hour: Int64, minute: Int64, second: Int64)
    ) -> Int64? {
        guard day >= 1, day <= daysIn(month: month, year: year), time.hour <= 23,
            time.minute <= 59,
            time.second <= 59 || (time.second == 60 && time.hour == 23 && time.minute == 59)
        else { return nil }
        var days = daysBefore(year: year) + day - 1
        for earlier in 1..<month { days += daysIn(month: earlier, year: year) }
        return days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
    }

    /// The days from 1970-01-01 to the first of January of `year` (negative before 1970), in
    /// the Gregorian calendar extended to every year.
    private static func daysBefore(year: Int64) -> Int64 {
        365 * (year - 1970) + leapYears(through: year - 1) - leapYears(through: 1969)
    }

    /// How many leap years there are from year 1 to `year`, counted back from year 0 (so
    /// negative for years before 1).
    private static func leapYears(through year: Int64) -> Int64 {
        floorDivide(year, 4) - floorDivide(year, 100) + floorDivide(year, 400)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }

    private static func isLeap(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The seconds since 1970 of an RFC 850 date, whose year has two digits: RFC 9110 reads
    /// one that would be more than 50 years after `now` as the most recent year in the past
    /// with the same last two digits. So it is the latest date with those digits that is at
    /// most 50 years after `now` (the same instant of the year, 50 years later), to the second.
    private static func rfc850Timestamp(
        shortYear: Int64, month: Int64, day: Int64,
        time: (hour: Int64, minute: Int64, second: Int64), now: Duration
    ) -> Int64? {
        let current = year(of: now)
        let latest = fiftyYearsAfter(wholeSeconds(of: now), inYear: current)
        // From the first candidate past the limit down, a century at a time: the first that
        // is a real date and not past the limit (a 29 February only in a leap century).
        var year = floorDivide(current, 100) * 100 + 100 + shortYear
        for _ in 0..<3 {
            if let stamp = timestamp(year: year, month: month, day: day, time: time),
                stamp <= latest
            {
                return stamp
            }
            year -= 100
        }
        return nil
    }

    /// The same month, day and time of day as `seconds` (in `year`), 50 years later; a 29
    /// February whose year 50 years on has none becomes the 28th.
    private static func fiftyYearsAfter(_ seconds: Int64, inYear year: Int64) -> Int64 {
        let intoYear = seconds - daysBefore(year: year) * 86_400
        var day = floorDivide(intoYear, 86_400)
        var month: Int64 = 1
        while month < 12, day >= daysIn(month: month, year: year) {
            day -= daysIn(month: month, year: year)
            month += 1
        }
        let later = year + 50
        var days = daysBefore(year: later) + min(day, daysIn(month: month, year: later) - 1)
        for earlier in 1..<month { days += daysIn(month: earlier, year: later) }
        return days * 86_400 + (intoYear - floorDivide(intoYear, 86_400) * 86_400)
    }

    /// The whole seconds since 1970 of `instant` (rounded down), within about 35,000 years of
    /// 1970, where the calendar arithmetic here cannot overflow.
    private static func wholeSeconds(of instant: Duration) -> Int64 {
        let limit: Int128 = 1 << 40
        var (whole, fraction) = instant.attoseconds.quotientAndRemainder(
            dividingBy: 1_000_000_000_000_000_000)
        if fraction < 0 { whole -= 1 }  // -0.5 s is in the second that starts at -1 s
        return Int64(min(max(whole, -limit), limit))
    }

    /// The calendar year (UTC) in which `instant`, a time since 1970, falls.
    private static func year(of instant: Duration) -> Int64 {
        let days = floorDivide(wholeSeconds(of: instant), 86_400)
        var year = 1970 + floorDivide(days * 400, 146_097)
        while daysBefore(year: year) > days { year -= 1 }
        while daysBefore(year: year + 1) <= days { year += 1 }
        return year
    }
}

private let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
private let longDayNames = [
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
]
private let monthNames = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
]

/// Reads the fields of an HTTP-date, front to back.
private struct DateText {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var isAtEnd: Bool { bytes.isEmpty }

    /// Takes `literal` if the text goes on with it.
    mutating func skip(_ literal: String) -> Bool {
        guard bytes.starts(with: literal.utf8) else { return false }
        bytes.removeFirst(literal.utf8.count)
        return true
    }

    /// Takes the ASCII letters up to the first other byte.
    mutating func letters() -> String {
        let end = bytes.firstIndex { !(0x41...0x5A).contains($0) && !(0x61...0x7A).contains($0) }
        let word = bytes[..<(end ?? bytes.endIndex)]
        bytes.removeFirst(word.count)
        return String(decoding: word, as: UTF8.self)
    }

    /// Takes exactly `digits` ASCII digits, as a number.
    mutating func number(digits: Int) -> Int64? {
        guard bytes.count >= digits else { return nil }
        var value: Int64 = 0
        for byte in bytes.prefix(digits) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        bytes.removeFirst(digits)
        return value
    }

    /// Takes a month's three-letter name, as its number from 1.
    mutating func month() -> Int64? {
        let name = String(decoding: bytes.prefix(3), as: UTF8.self)
        guard let index = monthNames.firstIndex(of: name) else { return nil }
        bytes.removeFirst(3)
        return Int64(index) + 1
    }

    /// Takes `hour:minute:second`, two digits each.
    mutating func timeOfDay() -> (hour: Int64, minute: Int64, second: Int64)? {
        guard let hour = number(digits: 2), skip(":"), let minute = number(digits: 2),
            skip(":"), let second = number(digits: 2)
        else { return nil }
        return (hour, minute, second)
    }
}
