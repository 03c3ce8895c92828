import Foundation
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Format) import QuireExport
import Testing
@_spi(Format) @testable import QuirePDF

/// A five-entry vault in English, Cyrillic and Chinese, with a JPEG, an
/// EXIF-rotated JPEG and a PNG, and an entry of hostile markup.
@Suite struct SmallBookTests {
    static let hostile = "<span foreground=\"red\">x</span> & &amp; </b> <b"

    static func vault(_ dir: TemporaryDirectory) throws -> Vault {
        let recovery = RecoveryKey(secret: try SymmetricKey(bytes: BLAKE2b.hash(Array("small".utf8), byteCount: 32)))
        let vault = try Vault.create(
            at: dir.file("v.quire"), setup: VaultSetup(name: "small", recoveryKey: recovery, now: 1_700_000_000_000),
            random: SeededRandom(label: "small"), options: WriteOptions(synchronous: false))
        let jpeg = try Fixtures.bytes("photo.jpg")
        let rotated = try ImageHeaderTests.oriented(6, littleEndian: true)
        try vault.commit { tx in
            let photo = try tx.storeAttachment(from: MemoryByteSource(jpeg), mediaType: "image/jpeg").blob
            let turned = try tx.storeAttachment(from: MemoryByteSource(rotated), mediaType: "image/jpeg").blob
            let png = try tx.storeAttachment(from: MemoryByteSource(PNGFixture.bytes), mediaType: "image/png").blob
            let audio = try tx.storeAttachment(from: MemoryByteSource([1, 2, 3]), mediaType: "audio/mp4").blob
            try tx.add(EntryBody(
                created: instant("2024-01-15", offset: 0), timeZone: "Europe/London", utcOffsetSeconds: 0,
                text: "# Morning\n\nI rose *early* and walked to **Whitehall**.\n\n![the river](quire-attachment://0a01)\n\nA second paragraph.",
                tags: ["walk"],
                attachments: [
                    AttachmentReference(id: [0x0A, 0x01], blob: photo, mediaType: "image/jpeg", fileName: "river.jpg"),
                    AttachmentReference(id: [0x0A, 0x02], blob: turned, mediaType: "image/jpeg", fileName: "turned.jpg"),
                ]))
            try tx.add(EntryBody(
                created: instant("2024-02-03", offset: 10_800), timeZone: "Europe/Moscow", utcOffsetSeconds: 10_800,
                text: "Всталъ въ 1/2 5, пилъ воду.", journal: "Diary"))
            try tx.add(EntryBody(
                created: instant("2024-02-04", offset: 28_800), timeZone: "Asia/Shanghai", utcOffsetSeconds: 28_800,
                text: "晴。上午往教育部。", journal: "Diary",
                attachments: [
                    AttachmentReference(id: [1], blob: png, mediaType: "image/png", fileName: "red.png"),
                    AttachmentReference(id: [2], blob: audio, mediaType: "audio/mp4", fileName: "voice.m4a"),
                ]))
            // 06:00 in Shanghai on the 5th is 22:00 UTC on the 4th: the heading says the 5th.
            try tx.add(EntryBody(
                created: instant("2024-02-05", hour: 6, offset: 28_800), timeZone: "Asia/Shanghai", utcOffsetSeconds: 28_800,
                text: "初五日 晴。"))
            try tx.add(EntryBody(created: instant("2024-03-01", offset: 0), text: hostile))
            // Last: a profile set before the index loads is lost from it (see the report).
            // The book's language is the profile's locale setting.
            try tx.setProfile(name: "A <Small> & Test Journal", settings: CBORMap(text: [("locale", .text("en_GB"))]))
        }
        return vault
    }

    @Test func goldenProperties() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.vault(dir)
        var seen: [ExportProgress] = []
        let report = try writePDFBook(vault, to: dir.file("book.pdf")) { seen.append($0) }
        #expect(report.entries == 5)
        #expect(report.photos == 3)
        #expect(report.attachmentsNotShown == 1)
        #expect(report.unknownGlyphs == 0)
        #expect(report.markupFallbacks == 0)
        #expect(report.substitutedCharacters == 0)
        #expect(report.pages == 4)
        #expect(report.bytes == UInt64(try fileBytes(dir.file("book.pdf")).count))
        #expect(seen == (0...5).map { ExportProgress(done: $0, total: 5) })
        #expect(try run("qpdf", ["--show-npages", dir.file("book.pdf")]).output == "4\n")
        #expect(try run("qpdf", ["--check", dir.file("book.pdf")]).status == 0)

        let text = try pdfText(dir.file("book.pdf"))
        for expected in [
            "A <Small> & Test Journal", "15 January 2024 – 1 March 2024", "5 entries", "Contents",
            "Monday, 15 January 2024", "22:00 · Europe/London · #walk", "Morning", "I rose early and walked to Whitehall.",
            "A second paragraph.", "Saturday, 3 February 2024", "Всталъ въ 1/2 5, пилъ воду.", "Sunday, 4 February 2024",
            "晴。上午往教育部。", "Attachment not shown: voice.m4a (audio/mp4)", "Monday, 5 February 2024", "06:00 · Asia/Shanghai",
            // The text is Markdown: the entity `&amp;` reads as `&` (CommonMark), tags stay text.
            "Friday, 1 March 2024", "22:00 · UTC", "<span foreground=\"red\">x</span> & & </b> <b",
        ] {
            #expect(squeezed(text).contains(squeezed(expected)), "missing \(expected)")
        }
        // The contents page lists the months with the page of their first entry.
        let contents = try run("pdftotext", ["-f", "2", "-l", "2", "-layout", dir.file("book.pdf"), "-"]).output
        let rows = contents.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(rows.contains("January 3") && rows.contains("February 3") && rows.contains("March 4"), "\(rows)")
        #expect(try run("pdftotext", ["-f", "4", "-l", "4", dir.file("book.pdf"), "-"]).output.contains("Friday, 1 March 2024"))

        // The JPEG is embedded byte for byte (DCTDecode), the rotated one too.
        let pdf = try fileBytes(dir.file("book.pdf"))
        let jpeg = try Fixtures.bytes("photo.jpg")
        #expect(pdf.firstRange(of: jpeg) != nil)
        #expect(pdf.firstRange(of: try ImageHeaderTests.oriented(6, littleEndian: true)) != nil)
        #expect(pdf.firstRange(of: Array("/DCTDecode".utf8)) != nil)
        // The creation date is when the latest entry was written, not now.
        #expect(pdf.firstRange(of: Array("/CreationDate (".utf8)) != nil)

        // Byte-identical on a second run; nothing else left in the directory.
        _ = try writePDFBook(vault, to: dir.file("again.pdf"))
        #expect(try fileBytes(dir.file("again.pdf")) == pdf)
        #expect(dir.listing.filter { $0.contains("quire-export") }.isEmpty)
    }

    @Test func exportPDFBookReportsTheSameCounts() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.vault(dir)
        let report = try exportPDFBook(vault, to: dir.file("book.pdf"))
        #expect(report.entries == 5 && report.attachments == 3)
        #expect(report.bytes == UInt64(try fileBytes(dir.file("book.pdf")).count))
    }

    @Test func filtersSelectEntries() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.vault(dir)
        let byJournal = try writePDFBook(vault, to: dir.file("a.pdf"), filter: ExportFilter(journals: ["Diary"]))
        #expect(byJournal.entries == 2)
        let text = try pdfText(dir.file("a.pdf"))
        #expect(text.contains("Всталъ") && text.contains("晴。上午往教育部。") && !text.contains("Whitehall"))
        #expect(try writePDFBook(vault, to: dir.file("b.pdf"), filter: ExportFilter(tags: ["walk"])).entries == 1)
        let february = ExportFilter(sinceMilliseconds: instant("2024-02-01", hour: 0, offset: 0), untilMilliseconds: instant("2024-03-01", hour: 0, offset: 0))
        #expect(try writePDFBook(vault, to: dir.file("c.pdf"), filter: february).entries == 3)
        let none = try writePDFBook(vault, to: dir.file("d.pdf"), filter: ExportFilter(tags: ["absent"]))
        #expect(none.entries == 0 && none.pages == 2)
        #expect(try run("qpdf", ["--check", dir.file("d.pdf")]).status == 0)
        #expect(try pdfText(dir.file("d.pdf")).contains("0 entries"))
    }

    @Test func unwritablePathLeavesNothing() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.vault(dir)
        let before = dir.listing
        let missing = #expect(throws: ExportError.self) { try writePDFBook(vault, to: dir.file("missing/book.pdf")) }
        // Third iOS trial, session 42: the message named the temporary file
        // (`…/.book.pdf.quire-export-PID.tmp: No such file…`) and the
        // sentence held it too; the sentence now names the book only.
        #expect(missing?.description == "cannot write \(dir.file("missing/book.pdf")): No such file or directory (errno 2)")
        #expect(
            missing?.localizedDescription
                == "Nothing was saved: the folder chosen for \u{201C}book.pdf\u{201D} is not there. Choose a folder that exists.")
        // The output path is a directory: the rename fails and the temporary file goes.
        try FileManager.default.createDirectory(atPath: dir.file("taken"), withIntermediateDirectories: false)
        do {
            _ = try writePDFBook(vault, to: dir.file("taken"))
            Issue.record("expected an error")
        } catch {
            guard case .cannotWrite(let path, _) = error else { Issue.record("wrong error \(error)"); return }
            #expect(path == dir.file("taken"))
        }
        #expect(dir.listing == (before + ["taken"]).sorted())
    }
}
