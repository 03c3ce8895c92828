import Foundation
import Quire
import QuireExport
import Testing

@Suite struct MarkdownDocumentTests {
    typealias B = MarkdownDocument.Block
    typealias I = MarkdownDocument.Inline

    @Test func readsBlocks() {
        let doc = MarkdownDocument(parsing: "# Title #\n\nOne\ntwo\n\n> quoted *it*\n> more\n\n- a\n- b\n1. c\n\n```\n<raw> *x*\n```\n\n---\n### ")
        #expect(doc.blocks == [
            .heading(level: 1, [.text("Title")]),
            .paragraph([.text("One"), .lineBreak, .text("two")]),
            .quote([.paragraph([.text("quoted "), .emphasis([.text("it")]), .lineBreak, .text("more")])]),
            .listItem(ordered: false, [.text("a")]), .listItem(ordered: false, [.text("b")]), .listItem(ordered: true, [.text("c")]),
            .code("<raw> *x*"), .rule, .heading(level: 3, []),
        ])
    }

    @Test func readsInlines() {
        let doc = MarkdownDocument(parsing: "a **b *c*** _d_ snake_case `*no*` \\*lit\\* [l *x*](https://e.org \"t\") ![alt](quire-attachment://0a) * spaced * 2*3")
        #expect(doc.blocks == [.paragraph([
            .text("a "), .strong([.text("b "), .emphasis([.text("c")])]), .text(" "), .emphasis([.text("d")]),
            .text(" snake_case "), .code("*no*"), .text(" *lit* "), .link([.text("l "), .emphasis([.text("x")])], url: "https://e.org"),
            .text(" "), .image(alt: "alt", url: "quire-attachment://0a"), .text(" * spaced * 2*3"),
        ])])
    }

    @Test func unmatchedDelimitersAreText() {
        let doc = MarkdownDocument(parsing: "<b>unbalanced **open [link](no close ![x]( `tick")
        #expect(MarkdownDocument.plainText(doc.blocks.compactMap { if case .paragraph(let i) = $0 { i } else { nil } }.first ?? [])
            == "<b>unbalanced **open [link](no close ![x]( `tick")
    }

    @Test func hostileInputStaysFast() {
        let start = Date()
        let stars = String(repeating: "*a ", count: 50_000) + String(repeating: "[", count: 50_000) + String(repeating: ">", count: 100)
        let quotes = String(repeating: "> ", count: 1000) + "deep"
        _ = MarkdownDocument(parsing: stars)
        let deep = MarkdownDocument(parsing: quotes)
        #expect(Date().timeIntervalSince(start) < 20)
        #expect(deep.blocks.count == 1)
    }
}

@Suite struct LocalTimeTests {
    @Test func usesTheEntrysZone() {
        let london = LocalTime(of: EntryBody(created: utcMilliseconds(1660, 1, 11, 22, 1, 15), timeZone: "Europe/London"))
        #expect(london.dateString == "1660-01-11")
        #expect((london.hour, london.minute, london.second) == (22, 0, 0))
        #expect(london.offsetSeconds == -75)
        // RFC 3339 cannot write −0:01:15: UTC, so the instant is exact (a
        // new-user trial found the offset cut to −00:01, 15 s off).
        #expect(london.iso8601 == "1660-01-11T22:01:15Z")
        let moscow = LocalTime(of: EntryBody(created: utcMilliseconds(1852, 6, 1, 9, 29, 43), timeZone: "Europe/Moscow"))
        #expect(moscow.offsetSeconds == 9017)
        #expect(moscow.iso8601 == "1852-06-01T09:29:43Z")
        let tokyo = LocalTime(of: EntryBody(created: utcMilliseconds(2024, 2, 29, 20), timeZone: "Asia/Tokyo"))
        #expect(tokyo.iso8601 == "2024-03-01T05:00:00+09:00")
        let given = LocalTime(of: EntryBody(created: utcMilliseconds(2024, 1, 1), timeZone: "Asia/Tokyo", utcOffsetSeconds: -3600))
        #expect(given.iso8601 == "2023-12-31T23:00:00-01:00")
        #expect(LocalTime.utcString(-1) == "1969-12-31T23:59:59Z")
        #expect(LocalTime(of: EntryBody(created: 0, timeZone: "Not/AZone")).iso8601 == "1970-01-01T00:00:00+00:00")
    }
}

@Suite struct LineEndingTests {
    @Test func crlfIsANewline() {
        let doc = MarkdownDocument(parsing: "a\r\nb\r\n\r\n- c\r\n---\r\n")
        #expect(doc.blocks == [.paragraph([.text("a"), .lineBreak, .text("b")]), .listItem(ordered: false, [.text("c")]), .rule])
    }
}
