/// The proleptic Gregorian calendar as arithmetic on day counts, with no
/// time-zone database: the one implementation every module uses to turn
/// milliseconds since 1970 (UTC) into calendar dates and back (entry dates
/// in `Spec/records.md §3.3`, the privacy statement's UTC dates, import and
/// export dates, the PDF book's headings). Valid for every `Int64` day count
/// a vault can hold, including years before 1583 and before 1 CE.
package enum CivilCalendar {
    /// `a` divided by `b` (b > 0) rounded towards −∞, and the remainder in
    /// `0..<b`, so instants before 1970 land on the right day.
    public static func floorDivide(_ a: Int64, _ b: Int64) -> (quotient: Int64, remainder: Int64) {
        var q = a / b
        var r = a % b
        if r < 0 {
            q -= 1
            r += b
        }
        return (q, r)
    }

    /// The date `days` days after 1970-01-01: year, month 1…12, day 1…31
    /// (H. Hinnant's `civil_from_days`).
    public static func date(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097).quotient
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (Int(yoe + era * 400 + (m <= 2 ? 1 : 0)), Int(m), Int(d))
    }

    /// Days from 1970-01-01 to `year`-`month`-`day` (month 1…12, day 1…31;
    /// out-of-range days roll over, as `days_from_civil` does).
    public static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDivide(y, 400).quotient
        let yoe = y - era * 400
        let mp = Int64((month + 9) % 12)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The weekday of a day count: 0 = Sunday … 6 = Saturday.
    public static func weekday(fromDays days: Int64) -> Int {
        Int(floorDivide(days + 4, 7).remainder)  // 1970-01-01 was a Thursday
    }
}
