// `RetryAfter.parse`: the `Retry-After` header's delay-seconds and its three HTTP-date forms,
// counted from a fixed `now` (seconds since 1970, as `calendar.timegm` gives them), and every
// kind of value that is not one of them.

import Foundation
import Testing

@testable import Tempo

@Suite struct RetryAfterTests {
    /// 08:49:07 UTC on Sunday, 6 November 1994: 30 s before RFC 9110's example date.
    static let beforeTheExample = Duration.seconds(784_111_747)
    /// RFC 9110's example date, in its three forms.
    static let example = [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
    ]

    static func parse(_ value: String, at seconds: Int64) -> Duration? {
        RetryAfter.parse(value, now: .seconds(seconds))
    }

    // MARK: delay-seconds

    @Test func delaySecondsAreTheWait() {
        #expect(RetryAfter.parse("0", now: .zero) == .zero)
        #expect(RetryAfter.parse("1", now: .zero) == .seconds(1))
        #expect(RetryAfter.parse("120", now: .zero) == .seconds(120))
        #expect(RetryAfter.parse("007", now: .zero) == .seconds(7))
        #expect(RetryAfter.parse("86400", now: .zero) == .seconds(86_400))
        #expect(RetryAfter.parse("1234567890", now: .zero) == .seconds(1_234_567_890))
    }

    @Test func delaySecondsDoNotDependOnNow() {
        #expect(RetryAfter.parse("120", now: Self.beforeTheExample) == .seconds(120))
        #expect(RetryAfter.parse("120", now: .seconds(-5)) == .seconds(120))
        #expect(RetryAfter.parse("120", now: .seconds(Int64.max)) == .seconds(120))
    }

    @Test func hugeDelaySecondsSaturateInsteadOfTrapping() {
        let most = Duration.seconds(Int64.max)
        #expect(RetryAfter.parse("9223372036854775806", now: .zero) == .seconds(Int64.max - 1))
        #expect(RetryAfter.parse("9223372036854775807", now: .zero) == most)
        // The last digit overflows the sum; then the product overflows as well.
        #expect(RetryAfter.parse("9223372036854775808", now: .zero) == most)
        #expect(RetryAfter.parse("92233720368547758070", now: .zero) == most)
        #expect(RetryAfter.parse(String(repeating: "9", count: 400), now: .zero) == most)
        // Leading zeros are only zeros.
        let padded = String(repeating: "0", count: 40) + "5"
        #expect(RetryAfter.parse(padded, now: .zero) == .seconds(5))
        // A saturated number followed by junk is still junk.
        #expect(RetryAfter.parse(String(repeating: "9", count: 30) + "x", now: .zero) == nil)
    }

    // MARK: HTTP-date

    @Test func theThreeFormsOfTheRFCsExampleDateAreTheSameInstant() {
        for value in Self.example {
            #expect(RetryAfter.parse(value, now: Self.beforeTheExample) == .seconds(30), "\(value)")
        }
        // asctime's day may also be two digits.
        #expect(
            RetryAfter.parse("Sun Nov 06 08:49:37 1994", now: Self.beforeTheExample)
                == .seconds(30))
    }

    @Test func theRFCsRetryAfterExamples() {
        // RFC 9110 §10.2.3: "Retry-After: Fri, 31 Dec 1999 23:59:59 GMT", "Retry-After: 120".
        #expect(Self.parse("Fri, 31 Dec 1999 23:59:59 GMT", at: 946_684_799 - 120) == .seconds(120))
        #expect(Self.parse("120", at: 946_684_799) == .seconds(120))
    }

    @Test func everyMonthInALeapYear() {
        let names = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ]
        let days = [
            "Mon", "Thu", "Fri", "Mon", "Wed", "Sat", "Mon", "Thu", "Sun", "Tue", "Fri", "Sun",
        ]
        // The first of each month of 2024, 00:00:00 UTC.
        let firsts: [Int64] = [
            1_704_067_200, 1_706_745_600, 1_709_251_200, 1_711_929_600, 1_714_521_600,
            1_717_200_000, 1_719_792_000, 1_722_470_400, 1_725_148_800, 1_727_740_800,
            1_730_419_200, 1_733_011_200,
        ]
        for month in 0..<12 {
            let now = firsts[month] - 10
            let value = "\(days[month]), 01 \(names[month]) 2024 00:00:00 GMT"
            #expect(Self.parse(value, at: now) == .seconds(10), "\(value)")
        }
    }

    @Test func everyMonthInACommonYearInAsctimeForm() {
        let names = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ]
        // The first of each month of 2030, 00:00:00 UTC.
        let firsts: [Int64] = [
            1_893_456_000, 1_896_134_400, 1_898_553_600, 1_901_232_000, 1_903_824_000,
            1_906_502_400, 1_909_094_400, 1_911_772_800, 1_914_451_200, 1_917_043_200,
            1_919_721_600, 1_922_313_600,
        ]
        for month in 0..<12 {
            let value = "Mon \(names[month])  1 00:00:00 2030"
            #expect(Self.parse(value, at: firsts[month] - 7) == .seconds(7), "\(value)")
        }
    }

    @Test func february29thOnlyInLeapYears() {
        // Divisible by 4: a leap year.
        #expect(Self.parse("Thu, 29 Feb 2024 12:00:00 GMT", at: 1_709_208_000 - 1) == .seconds(1))
        // Divisible by 400: a leap year.
        #expect(Self.parse("Tue, 29 Feb 2000 00:00:00 GMT", at: 951_782_400 - 2) == .seconds(2))
        // 1 March follows 29 February in a leap year, 28 February in a common one.
        #expect(Self.parse("Fri, 01 Mar 2024 00:00:00 GMT", at: 1_709_251_200 - 3) == .seconds(3))
        #expect(Self.parse("Mon, 01 Mar 2100 00:00:00 GMT", at: 4_107_542_400 - 4) == .seconds(4))
        // Divisible by 100 but not 400, or not by 4: no 29 February.
        #expect(Self.parse("Mon, 29 Feb 2100 00:00:00 GMT", at: 0) == nil)
        #expect(Self.parse("Wed, 29 Feb 2023 00:00:00 GMT", at: 0) == nil)
        #expect(Self.parse("Wed Feb 29 00:00:00 2023", at: 0) == nil)
        #expect(Self.parse("Wednesday, 29-Feb-23 00:00:00 GMT", at: 0) == nil)
        #expect(Self.parse("Thu, 30 Feb 2024 00:00:00 GMT", at: 0) == nil)
    }

    @Test func theLastDayOfEachMonthAndNoMore() {
        let lengths = [
            "Jan": 31, "Feb": 28, "Mar": 31, "Apr": 30, "May": 31, "Jun": 30,
            "Jul": 31, "Aug": 31, "Sep": 30, "Oct": 31, "Nov": 30, "Dec": 31,
        ]
        for (month, length) in lengths {
            #expect(
                Self.parse("Mon, \(length) \(month) 2030 00:00:00 GMT", at: 0) != nil, "\(month)")
            #expect(
                Self.parse("Mon, \(length + 1) \(month) 2030 00:00:00 GMT", at: 0) == nil,
                "\(month)")
        }
    }

    @Test func aDateNotAfterNowIsZero() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        #expect(Self.parse(date, at: 784_111_777) == .zero)
        #expect(Self.parse(date, at: 784_111_778) == .zero)
        #expect(Self.parse(date, at: 1_796_256_000) == .zero)
        #expect(Self.parse(date, at: 784_111_776) == .seconds(1))
        #expect(Self.parse("Thu, 01 Jan 1970 00:00:00 GMT", at: 0) == .zero)
        #expect(RetryAfter.parse(date, now: .seconds(Int64.max)) == .zero)
    }

    @Test func aFractionOfASecondInNowIsCounted() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        let justBefore = Duration.seconds(784_111_777) - .milliseconds(250)
        #expect(RetryAfter.parse(date, now: justBefore) == .milliseconds(250))
        #expect(RetryAfter.parse(date, now: justBefore + .milliseconds(500)) == .zero)
    }

    @Test func aLeapSecondOnlyAtTheEndOfADay() {
        // 23:59:60 on 31 December 2016 is the instant of 00:00:00 on 1 January 2017.
        #expect(Self.parse("Sat, 31 Dec 2016 23:59:60 GMT", at: 1_483_228_799) == .seconds(1))
        #expect(Self.parse("Sat, 31 Dec 2016 23:59:59 GMT", at: 1_483_228_798) == .seconds(1))
        #expect(Self.parse("Sat, 31 Dec 2016 23:58:60 GMT", at: 0) == nil)
        #expect(Self.parse("Sat, 31 Dec 2016 22:59:60 GMT", at: 0) == nil)
        #expect(Self.parse("Sat, 31 Dec 2016 23:59:61 GMT", at: 0) == nil)
    }

    @Test func datesFarFrom1970() {
        #expect(
            Self.parse("Mon, 01 Jan 1900 00:00:00 GMT", at: -2_208_988_800 - 10) == .seconds(10))
        #expect(
            Self.parse("Mon, 01 Jan 0001 00:00:00 GMT", at: -62_135_596_800 - 5) == .seconds(5))
        // Year 0 is a leap year in the Gregorian calendar extended backwards.
        #expect(
            Self.parse("Tue, 29 Feb 0000 00:00:00 GMT", at: -62_162_121_600 - 6) == .seconds(6))
        #expect(
            Self.parse("Fri, 31 Dec 9999 23:59:59 GMT", at: 253_402_300_799 - 8) == .seconds(8))
        // From the earliest `now` there is, the latest date is far but not out of range.
        #expect(
            RetryAfter.parse("Fri, 31 Dec 9999 23:59:59 GMT", now: Duration(attoseconds: .min))
                == Duration(attoseconds: .max))
    }

    // MARK: RFC 850's two-digit year

    @Test func aTwoDigitYearIsTheOneWithin50YearsOfNow() {
        // In 1994, 94 is 1994.
        #expect(
            RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: Self.beforeTheExample)
                == .seconds(30))
        // In 2026 (3 December), 94 is 1994, in the past: not 2094.
        #expect(Self.parse("Saturday, 06-Nov-94 08:49:37 GMT", at: 1_796_256_000) == .zero)
        // 76 is 2076, 50 years ahead; 77 would be 51 years ahead, so it is 1977.
        #expect(
            Self.parse("Wednesday, 01-Jan-76 00:00:00 GMT", at: 1_796_256_000)
                == .seconds(3_345_062_400 - 1_796_256_000))
        #expect(Self.parse("Friday, 01-Jan-77 00:00:00 GMT", at: 1_796_256_000) == .zero)
        // In the last second of 2099, 00 is 2100, not 2000.
        #expect(Self.parse("Friday, 01-Jan-00 00:00:00 GMT", at: 4_102_444_799) == .seconds(1))
        // One second before 1970 is in 1969, whose window ends in 2019: 20 is 1920.
        #expect(Self.parse("Wednesday, 01-Jan-20 00:00:00 GMT", at: -1) == .zero)
        #expect(Self.parse("Tuesday, 01-Jan-19 00:00:00 GMT", at: -1) != .zero)
        // In 1970, whose window ends in 2020, 20 is 2020.
        #expect(Self.parse("Wednesday, 01-Jan-20 00:00:00 GMT", at: 0) != .zero)
        // Half a second before 1970 is in 1969 too.
        let halfASecondBefore = Duration.zero - .milliseconds(500)
        #expect(
            RetryAfter.parse("Wednesday, 01-Jan-20 00:00:00 GMT", now: halfASecondBefore)
                == .zero)
    }

    /// RFC 9110 compares the date, not its year's number: with `now` at 1994-11-06 08:49:07,
    /// 06-Nov-44 08:49:07 is 50 years ahead, so 2044; a second later, and the last day of
    /// 2044, are more than 50 years ahead, so 1944 (in the past: no wait).
    @Test func aTwoDigitYearIsReadByHowFarAheadTheDateIs() {
        let now = Duration.seconds(784_111_747)
        let fifty: Int64 = 2_362_034_947  // 2044-11-06 08:49:07 UTC
        #expect(
            RetryAfter.parse("Sunday, 06-Nov-44 08:49:07 GMT", now: now)
                == .seconds(fifty - 784_111_747))
        #expect(RetryAfter.parse("Sunday, 06-Nov-44 08:49:08 GMT", now: now) == .zero)
        #expect(RetryAfter.parse("Saturday, 31-Dec-44 00:00:00 GMT", now: now) == .zero)
        // 29 February 2000 read in 2051 (2100 has no 29 February): 2000.
        #expect(
            RetryAfter.parse("Tuesday, 29-Feb-00 00:00:00 GMT", now: .seconds(2_556_144_000))
                == .zero)
    }

    // MARK: Whitespace and garbage

    @Test func spacesAndTabsAroundTheValueAreIgnored() {
        #expect(RetryAfter.parse(" 120", now: .zero) == .seconds(120))
        #expect(RetryAfter.parse("120 ", now: .zero) == .seconds(120))
        #expect(RetryAfter.parse("\t 120 \t", now: .zero) == .seconds(120))
        for value in Self.example {
            #expect(
                RetryAfter.parse("  \(value)\t", now: Self.beforeTheExample) == .seconds(30),
                "\(value)")
        }
        // A substring works as well as a string.
        let header = "Retry-After: 45"
        let value = header[header.index(after: header.firstIndex(of: ":")!)...]
        #expect(RetryAfter.parse(value, now: .zero) == .seconds(45))
    }

    @Test(arguments: [
        // Empty, or only whitespace.
        "", " ", "\t", "  \t ",
        // Not delay-seconds.
        "-1", "+1", "1.5", "1,5", "1e3", "12s", "12 s", "1 2", "0x10", "12\n", "\n12", "12\r\n",
        "١٢", "１２", "½", "seconds", "soon", "NaN",
        // IMF-fixdate, wrong.
        "Sun, 06 Nov 1994 08:49:37 GMT junk",
        "Sun, 06 Nov 1994 08:49:37 GMT,",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 gmt",
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 06 Nov 1994 08:49:37  GMT",
        "Sun, 06 Nov 1994 08:49:37 +0000",
        "sun, 06 Nov 1994 08:49:37 GMT",
        "SUN, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06 nov 1994 08:49:37 GMT",
        "Sun, 06 NOV 1994 08:49:37 GMT",
        "Sun, 06 Nox 1994 08:49:37 GMT",
        "Sun, 06 November 1994 08:49:37 GMT",
        "Sun, 06 No",
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT",
        "Sun, 32 Oct 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 006 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Nov 19940 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 99:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:60 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Nov 1994 08:49 GMT",
        "Sun, 06 Nov 1994 08-49-37 GMT",
        "Sun, 06 Nov 1994 0a:49:37 GMT",
        "Sun 06 Nov 1994 08:49:37 GMT",
        "Sun,06 Nov 1994 08:49:37 GMT",
        "Sun,  06 Nov 1994 08:49:37 GMT",
        "Sun, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 06 Nov 1994 08:49:37 GMT",
        "Snu, 06 Nov 1994 08:49:37 GMT",
        ", 06 Nov 1994 08:49:37 GMT",
        "06 Nov 1994 08:49:37 GMT",
        "Sun", "Sun,", "Sun, ",
        // rfc850-date, wrong.
        "Sunday, 06-Nov-94 08:49:37",
        "Sunday, 06-Nov-94 08:49:37 UTC",
        "Sunday, 06-Nov-94 08:49:37 GMT ok",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 06 Nov 94 08:49:37 GMT",
        "Sunday, 6-Nov-94 08:49:37 GMT",
        "Sunday, 31-Nov-94 08:49:37 GMT",
        "Sunday, 06-Nox-94 08:49:37 GMT",
        "Sunday, 06-Nov-9x 08:49:37 GMT",
        "Sunday, 06-Nov-94 25:49:37 GMT",
        "sunday, 06-Nov-94 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT",
        "Sundays, 06-Nov-94 08:49:37 GMT",
        "Funday, 06-Nov-94 08:49:37 GMT",
        "Sunday 06-Nov-94 08:49:37 GMT",
        // asctime-date, wrong.
        "Sun Nov 6 08:49:37 1994",
        "Sun Nov   6 08:49:37 1994",
        "Sun Nov  6 08:49:37 94",
        "Sun Nov  6 08:49:37 1994 GMT",
        "Sun Nov  6 08:49:37 1994x",
        "Sun Nov  6 08:49:37",
        "Sun Nov  0 08:49:37 1994",
        "Sun Nov 31 08:49:37 1994",
        "Sun Nov  6 08:49:61 1994",
        "Sun nov  6 08:49:37 1994",
        "Sunday Nov  6 08:49:37 1994",
        "Sun  Nov  6 08:49:37 1994",
        "Sun Nov  6  08:49:37 1994",
        "Sun 06 Nov 1994 08:49:37",
    ])
    func aValueThatIsNeitherFormIsNil(_ value: String) {
        #expect(RetryAfter.parse(value, now: Self.beforeTheExample) == nil)
    }

    // MARK: The system clock

    @Test func realClockTheDefaultNowIsTheSystemsWallClock() {
        let before = Date().timeIntervalSince1970
        let now = RetryAfter.systemNow()
        let after = Date().timeIntervalSince1970
        #expect(now >= .seconds(before) - .milliseconds(1))
        #expect(now <= .seconds(after) + .milliseconds(1))
        // 1 January 2100, 00:00:00 UTC.
        let wait = RetryAfter.parse("Fri, 01 Jan 2100 00:00:00 GMT")
        let expected = Duration.seconds(4_102_444_800) - .seconds(Date().timeIntervalSince1970)
        #expect(wait.map { abs(($0 - expected) / .seconds(1)) < 5 } == true)
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT") == .zero)
    }
}
