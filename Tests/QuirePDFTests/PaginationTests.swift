import Foundation
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Format) import QuireExport
import Testing
@_spi(Format) @testable import QuirePDF

@Suite struct PaginationTests {
    /// One paragraph of 1,500 words is split between lines over several
    /// pages: every word is printed once, in order.
    @Test func longParagraphSplitsBetweenLinesWithoutLoss() throws {
        let dir = TemporaryDirectory()
        let paragraph = (0..<1500).map { "word\($0)" }.joined(separator: " ")
        let vault = try makeVault(dir, name: "Long", entries: [("2024-05-01", paragraph), ("2024-05-02", "After.")], zone: "UTC", offset: 0)
        let path = dir.file("long.pdf")
        let report = try writePDFBook(vault, to: path, locale: "en_GB")
        #expect(report.pages == 12)
        #expect(try run("qpdf", ["--check", path]).status == 0)
        // The text area only (pdftotext crops in points): page numbers sit below it.
        let text = try run("pdftotext", ["-x", "0", "-y", "0", "-W", "420", "-H", "540", path, "-"]).output
        #expect(squeezed(text).contains(squeezed(paragraph)))
        // Each body page carries part of the paragraph; the last one the next entry.
        for page in 3...11 {
            let words = try run("pdftotext", ["-f", "\(page)", "-l", "\(page)", path, "-"]).output
                .split(whereSeparator: { $0 == " " || $0 == "\n" }).filter { $0.hasPrefix("word") }
            #expect(words.count > 100, "page \(page) has \(words.count) words")
        }
        let last = try run("pdftotext", ["-f", "12", "-l", "12", path, "-"]).output
        #expect(last.contains("word1499") && last.contains("Thursday, 2 May 2024") && last.contains("After."))
    }

    /// A heading, a tag list and a journal name each longer than a page
    /// flow over pages instead of running off the bottom.
    @Test func blocksTallerThanAPageFlow() throws {
        let dir = TemporaryDirectory()
        let words = (0..<900).map { "w\($0)" }.joined(separator: " ")
        let vault = try makeVault(dir, name: "Tall " + words, entries: [("2024-05-01", "# " + words + "\n\nBody.")], zone: "UTC", offset: 0) { _ in
            (0..<600).map { "tag\($0)" }
        }
        let path = dir.file("tall.pdf")
        let report = try writePDFBook(vault, to: path, locale: "en_GB")
        #expect(report.entries == 1 && report.markupFallbacks == 0)
        #expect(try run("qpdf", ["--check", path]).status == 0)
        let text = squeezed(try run("pdftotext", ["-x", "0", "-y", "0", "-W", "420", "-H", "540", path, "-"]).output)
        #expect(text.contains(squeezed(words)))
        #expect(text.contains(squeezed((0..<600).map { "#tag\($0)" }.joined(separator: " "))))
        #expect(text.hasSuffix("Body."))
        // The 3,500-character journal name is cut to 80 characters on the one title page.
        let title = try run("pdftotext", ["-f", "1", "-l", "1", path, "-"]).output
        #expect(squeezed(title).hasPrefix(squeezed("Tall w0 w1 w2") ) && title.contains("…") && !title.contains("w30 "))
        #expect(try run("pdftotext", ["-f", "2", "-l", "2", path, "-"]).output.contains("Contents"))
    }

    /// Attachments that claim to be images but are not, or are too large,
    /// print a line instead; nothing crashes and the PDF stays valid.
    @Test func badImagesPrintALineInstead() throws {
        let dir = TemporaryDirectory()
        let recovery = RecoveryKey(secret: try SymmetricKey(bytes: BLAKE2b.hash(Array("bad".utf8), byteCount: 32)))
        let vault = try Vault.create(
            at: dir.file("v.quire"), setup: VaultSetup(name: "Bad images", recoveryKey: recovery, now: 1_700_000_000_000),
            random: SeededRandom(label: "bad"), options: WriteOptions(synchronous: false))
        var huge = try Fixtures.bytes("photo.jpg")
        // Rewrite the SOF0 frame size to 60000 × 60000 pixels.
        let sof = huge.indices.first { huge[$0] == 0xFF && huge[$0 + 1] == 0xC0 }!
        huge[sof + 5] = 0xEA; huge[sof + 6] = 0x60; huge[sof + 7] = 0xEA; huge[sof + 8] = 0x60
        let cases: [(String, [UInt8], String)] = [
            ("huge.jpg", huge, "image/jpeg"),
            ("png-as-jpeg.jpg", PNGFixture.bytes, "image/jpeg"),
            ("text.png", Array("not a png at all, just text".utf8), "image/png"),
            ("cut.png", Array(PNGFixture.bytes.prefix(40)), "image/png"),
            ("empty.jpg", [], "image/jpeg"),
        ]
        try vault.commit { tx in
            var refs: [AttachmentReference] = []
            for (n, (name, bytes, type)) in cases.enumerated() {
                let blob = try tx.storeAttachment(from: MemoryByteSource(bytes), mediaType: type).blob
                refs.append(AttachmentReference(id: [UInt8(n)], blob: blob, mediaType: type, fileName: name))
            }
            try tx.add(EntryBody(created: instant("2024-06-01", offset: 0), text: "Five bad images.", attachments: refs))
        }
        let path = dir.file("bad.pdf")
        let report = try writePDFBook(vault, to: path, locale: "en_GB")
        #expect(report.photos == 0)
        #expect(report.attachmentsNotShown == 5)
        #expect(try run("qpdf", ["--check", path]).status == 0)
        let text = try pdfText(path)
        for name in ["huge.jpg", "png-as-jpeg.jpg", "text.png", "empty.jpg"] {
            #expect(text.contains("Attachment not shown: \(name)"), "\(name)")
        }
    }
}
