import Quire
import QuireExport

/// A calendar date and time of day in an entry's own time zone (proleptic
/// Gregorian calendar), computed from milliseconds since 1970 UTC and an
/// offset in seconds east of UTC.
struct CivilDate: Sendable, Equatable, Comparable {
    var year: Int
    /// 1…12.
    var month: Int
    /// 1…31.
    var day: Int
    /// 0…23.
    var hour: Int
    /// 0…59.
    var minute: Int
    /// 0 = Sunday … 6 = Saturday.
    var weekday: Int

    static let monthNames = [
        "January", "February", "March", "April", "May", "June",
        "July", "August", "September", "October", "November", "December",
    ]
    static let weekdayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

    /// The local date of `milliseconds` (since 1970, UTC) at `offsetSeconds` east of UTC.
    init(milliseconds: Int64, offsetSeconds: Int64) {
        let local = CivilCalendar.floorDivide(milliseconds, 1000).quotient &+ offsetSeconds
        let (days, secondOfDay) = CivilCalendar.floorDivide(local, 86_400)
        hour = Int(secondOfDay / 3600)
        minute = Int(secondOfDay % 3600 / 60)
        weekday = CivilCalendar.weekday(fromDays: days)
        (year, month, day) = CivilCalendar.date(fromDays: days)
    }

    /// The date of `body.created` in the entry's own zone, by the export's
    /// one rule (``LocalTime/offset(of:)``, `Spec/export-json.md §1`).
    init(of body: EntryBody) {
        self.init(milliseconds: body.created, offsetSeconds: Int64(LocalTime.offset(of: body)))
    }

    /// "Wednesday 11 January 1660".
    var longDate: String { "\(Self.weekdayNames[weekday]) \(day) \(Self.monthNames[month - 1]) \(year)" }
    /// "11 January 1660".
    var mediumDate: String { "\(day) \(Self.monthNames[month - 1]) \(year)" }
    /// "22:05".
    var timeOfDay: String { (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)" }
    /// "January 1660".
    var monthAndYear: String { "\(Self.monthNames[month - 1]) \(year)" }

    static func < (a: CivilDate, b: CivilDate) -> Bool {
        (a.year, a.month, a.day, a.hour, a.minute) < (b.year, b.month, b.day, b.hour, b.minute)
    }
}

/// Formats milliseconds since 1970 UTC as a PDF metadata date, `YYYY-MM-DDThh:mm:ssZ`.
func pdfMetadataDate(milliseconds: Int64) -> String {
    let d = CivilDate(milliseconds: milliseconds, offsetSeconds: 0)
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    var year = String(max(0, min(9999, d.year)))
    while year.count < 4 { year = "0" + year }
    return "\(year)-\(two(d.month))-\(two(d.day))T\(two(d.hour)):\(two(d.minute)):00Z"
}
