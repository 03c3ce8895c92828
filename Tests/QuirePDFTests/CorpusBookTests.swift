import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireExport
import Testing
import QuireTestSupport
@_spi(Format) @testable import QuirePDF

/// The three real journals as books: every glyph found, `qpdf --check`
/// clean, page 1 neither blank nor a wall of missing-glyph boxes.
@Suite(.tags(.slow), .skippedByMakeCheck) struct CorpusBookTests {
    struct Journal: Sendable, CustomStringConvertible {
        let file: String
        let name: String
        let zone: String
        let offset: Int64
        let limit: Int
        /// The book's locale: the journal's language.
        let locale: String
        /// The first entry's heading and the title page's entry count, in that language.
        let firstHeading: String
        let entryCount: String
        /// Characters no installed font has: Lu Xun's text holds 174
        /// private-use code points (from its Wikisource transcription) and
        /// one U+28C48, printed as 〓.
        var substituted = 0
        var description: String { name }
    }

    static let journals = [
        Journal(
            file: "pepys.jsonl", name: "The Diary of Samuel Pepys", zone: "Europe/London", offset: 0, limit: 200, locale: "en_GB",
            firstHeading: "Sunday, 11 January 1660", entryCount: "200 entries"),
        Journal(
            file: "luxun.jsonl", name: "鲁迅日记 Lu Xun’s Diary", zone: "Asia/Shanghai", offset: 28_800, limit: .max, locale: "zh-Hans",
            firstHeading: "1912年5月5日 星期日", entryCount: "7,461 篇", substituted: 175),
        Journal(
            file: "tolstoy.jsonl", name: "Дневники Льва Толстого", zone: "Europe/Moscow", offset: 10_800, limit: .max, locale: "ru",
            firstHeading: "Вторник, 1 июня 1852 г.", entryCount: "51 запись"),
    ]

    @Test(arguments: journals) func book(_ journal: Journal) throws {
        let dir = TemporaryDirectory()
        let entries = try Fixtures.journal(journal.file, limit: journal.limit)
        let vault = try makeVault(dir, name: journal.name, entries: entries, zone: journal.zone, offset: journal.offset, photoEvery: 20)
        let path = dir.file("book.pdf")
        let report = try writePDFBook(vault, to: path, locale: journal.locale)
        #expect(report.entries == entries.count)
        #expect(report.photos == (entries.count + 19) / 20)
        #expect(report.unknownGlyphs == 0)
        #expect(report.substitutedCharacters == journal.substituted)
        #expect(report.markupFallbacks == 0)
        #expect(try run("qpdf", ["--check", path]).status == 0)
        #expect(try run("qpdf", ["--show-npages", path]).output == "\(report.pages)\n")

        // Page 1, the title page: some ink, not much (a page of boxes is dark).
        let title = try darkPixelRatio(path, page: 1, in: dir)
        #expect(title > 0.002 && title < 0.05, "title page dark ratio \(title)")
        // The first page of entries: a page of text.
        let plan = BookPlan(
            entries: try selectEntries(vault, filter: ExportFilter()), title: journal.name, profileClock: nil,
            locale: BookLocale(identifier: journal.locale))
        let firstBody = 2 + plan.contentsPages.count
        let body = try darkPixelRatio(path, page: firstBody, in: dir)
        #expect(body > 0.01 && body < 0.25, "first body page dark ratio \(body)")
        let firstPage = try run("pdftotext", ["-f", "\(firstBody)", "-l", "\(firstBody)", path, "-"]).output
        let first = entries[0]
        // Headings speak the journal's language (the Lu Xun book once said "Sunday 5 May 1912" above Chinese).
        #expect(squeezed(firstPage).contains(squeezed(journal.firstHeading)), "missing \(journal.firstHeading)")
        let opening = squeezed(String(first.text.replacingOccurrences(of: "*", with: "").prefix(12)))
        #expect(squeezed(firstPage).contains(opening), "missing \(opening)")
        let titleText = squeezed(try run("pdftotext", ["-f", "1", "-l", "1", path, "-"]).output)
        #expect(titleText.contains(squeezed(journal.name)) && titleText.contains(squeezed(journal.entryCount)), "\(titleText)")
    }
}

/// Text without any whitespace (pdftotext breaks lines where the layout did).
func squeezed(_ s: String) -> String { String(s.unicodeScalars.filter { !$0.properties.isWhitespace }.map(Character.init)) }
