import Quire
import QuireExport

/// What the book holds, decided before anything is laid out: the selected
/// entries in order, their local dates, and the months of the table of
/// contents. Memory: one date per entry and one row per month.
struct BookPlan {
    let entries: EntryCatalog
    let dates: [CivilDate]
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

    init(entries selected: EntryCatalog, title: String, profileClock: HybridLogicalClock?) {
        entries = selected
        dates = entries.map { CivilDate(of: $0.body) }
        months = Array(Set(dates.map { $0.year * 100 + $0.month })).sorted()
        entryIDs = Set(entries.map { hex($0.id.bytes) })
        self.title = title
        let latest = entries.map(\.revision.clock).max() ?? profileClock ?? HybridLogicalClock(rawValue: 0)
        documentDate = Int64(latest.milliseconds)
    }

    /// "11 January 1660 – 10 June 1669", or one date, or "" for no entries.
    var dateRange: String {
        guard let first = dates.min(), let last = dates.max() else { return "" }
        return first.year == last.year && first.month == last.month && first.day == last.day
            ? first.mediumDate : "\(first.mediumDate) – \(last.mediumDate)"
    }

    /// The rows of the table of contents, split into pages. The first page
    /// starts below the "Contents" title. A year row is never the last row
    /// of a page.
    enum ContentsRow: Equatable { case year(Int), month(Int) }
    static let contentsTitleHeight = 44.0
    static let yearRowHeight = 22.0
    static let monthRowHeight = 15.0

    var contentsPages: [[ContentsRow]] {
        var rows: [ContentsRow] = []
        var lastYear: Int?
        for key in months {
            if key / 100 != lastYear { rows.append(.year(key / 100)); lastYear = key / 100 }
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

