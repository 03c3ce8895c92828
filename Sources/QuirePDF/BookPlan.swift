@_spi(Format) import Quire
import QuireExport

/// What the book holds, decided before anything is laid out: the selected
/// entries in order, their local dates, and the months of the table of
/// contents. Memory: one date per entry and one row per month.
struct BookPlan {
    let entries: EntryCatalog
    let dates: [LocalTime]
    /// The language the book is printed in (headings, contents, dates).
    let locale: BookLocale
    /// Year × 100 + month, ascending, one per month that has an entry.
    let months: [Int]
    let title: String
    /// The instant the PDF's creation and modification dates carry:
    /// milliseconds since 1970 UTC, when the latest of the selected entries'
    /// revisions was written (its hybrid logical clock), else when the
    /// profile was, so the same vault gives the same bytes.
    let documentDate: Int64
    /// The ids (lowercase hex) of the entries in the book, which links to
    /// entries may point at (32 bytes each).
    let entryIDs: Set<String>

    init(entries selected: EntryCatalog, title: String, profileClock: HybridLogicalClock?, locale: BookLocale) {
        entries = selected
        self.locale = locale
        dates = entries.map { LocalTime(of: $0.body) }
        months = Array(Set(dates.map { $0.year * 100 + $0.month })).sorted()
        entryIDs = Set(selected.ids.map { hex($0.bytes) })
        self.title = title
        let latest = entries.map(\.revision.clock).max() ?? profileClock ?? HybridLogicalClock(rawValue: 0)
        documentDate = Int64(latest.milliseconds)
    }

    /// "11 January 1660 – 10 June 1669" (in the book's locale), or one
    /// date, or "" for no entries.
    var dateRange: String {
        func key(_ t: LocalTime) -> (Int, Int, Int, Int, Int) { (t.year, t.month, t.day, t.hour, t.minute) }
        guard let first = dates.min(by: { key($0) < key($1) }), let last = dates.max(by: { key($0) < key($1) }) else { return "" }
        return first.dateString == last.dateString ? locale.date(first) : "\(locale.date(first)) – \(locale.date(last))"
    }

    /// The rows of the table of contents, split into pages. The first page
    /// starts below the "Contents" title. A year row is never the last row
    /// of a page.
    enum ContentsRow: Equatable {
        case year(Int)
        case month(Int)
    }
    static let contentsTitleHeight = 44.0
    static let yearRowHeight = 22.0
    static let monthRowHeight = 15.0

    var contentsPages: [[ContentsRow]] {
        var rows: [ContentsRow] = []
        var lastYear: Int?
        for key in months {
            if key / 100 != lastYear {
                rows.append(.year(key / 100))
                lastYear = key / 100
            }
            rows.append(.month(key))
        }
        var pages: [[ContentsRow]] = [[]]
        var y = Page.marginTop + Self.contentsTitleHeight
        for (i, row) in rows.enumerated() {
            var need = Self.rowHeight(row)
            if case .year = row, i + 1 < rows.count { need += Self.monthRowHeight }
            if y + need > Page.textBottom, !pages[pages.count - 1].isEmpty {
                pages.append([])
                y = Page.marginTop
            }
            pages[pages.count - 1].append(row)
            y += Self.rowHeight(row)
        }
        return pages
    }

    static func rowHeight(_ row: ContentsRow) -> Double {
        if case .year = row { yearRowHeight } else { monthRowHeight }
    }
}

/// Formats milliseconds since 1970 UTC as a PDF metadata date, `YYYY-MM-DDThh:mm:ssZ`.
func pdfMetadataDate(milliseconds: Int64) -> String {
    let d = LocalTime(milliseconds: milliseconds, offsetSeconds: 0)
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    var year = String(max(0, min(9999, d.year)))
    while year.count < 4 { year = "0" + year }
    return "\(year)-\(two(d.month))-\(two(d.day))T\(two(d.hour)):\(two(d.minute)):00Z"
}
