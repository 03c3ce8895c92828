import Foundation
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Format) import QuireExport
import Testing
@_spi(Format) @testable import QuirePDF

/// A photo several entries share is embedded once, and the report counts
/// distinct attachments as the other export formats do.
@Suite struct SharedPhotoTests {
    /// Five entries, each about a page of text, each showing the same
    /// JPEG blob; the first three also show the same PNG blob.
    static func vault(_ dir: TemporaryDirectory) throws -> Vault {
        let recovery = RecoveryKey(secret: try SymmetricKey(bytes: BLAKE2b.hash(Array("shared".utf8), byteCount: 32)))
        let vault = try Vault.create(
            at: dir.file("v.quire"), setup: VaultSetup(name: "shared", recoveryKey: recovery, now: 1_700_000_000_000),
            random: SeededRandom(label: "shared"), options: WriteOptions(synchronous: false))
        let jpeg = try Fixtures.bytes("photo.jpg")
        let filler = Array(repeating: "Up betimes and to the office, where all the morning busy.", count: 40).joined(separator: " ")
        try vault.commit { tx in
            let photo = try tx.storeAttachment(from: MemoryByteSource(jpeg), mediaType: "image/jpeg").blob
            let png = try tx.storeAttachment(from: MemoryByteSource(PNGFixture.bytes), mediaType: "image/png").blob
            for n in 0..<5 {
                var refs = [AttachmentReference(id: [UInt8(n), 1], blob: photo, mediaType: "image/jpeg", fileName: "photo\(n).jpg")]
                if n < 3 { refs.append(AttachmentReference(id: [UInt8(n), 2], blob: png, mediaType: "image/png", fileName: "red\(n).png")) }
                try tx.add(EntryBody(
                    created: instant("2024-01-1\(n)", offset: 0), timeZone: "Europe/London", utcOffsetSeconds: 0,
                    text: filler, attachments: refs))
            }
        }
        return vault
    }

    /// The distinct image objects (`object generation`) `pdfimages -list`
    /// shows placed, and how many placements it lists.
    static func images(_ path: String) throws -> (objects: Set<String>, placements: Int) {
        let r = try run("pdfimages", ["-list", path])
        #expect(r.status == 0)
        // Two header lines; then page num type width height color comp bpc enc interp object ID …
        let rows = r.output.split(separator: "\n").dropFirst(2).map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        let images = rows.filter { $0.count > 11 && $0[2] == "image" }
        return (Set(images.map { "\($0[10]) \($0[11])" }), images.count)
    }

    @Test func aSharedBlobIsOneImageObject() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.vault(dir)
        let path = dir.file("book.pdf")
        let report = try writePDFBook(vault, to: path)
        #expect(report.entries == 5)
        #expect(report.photos == 8)
        #expect(report.distinctPhotos == 2)
        #expect(report.attachmentsNotShown == 0)
        #expect(report.pages > 6)  // the entries are on different pages
        let images = try Self.images(path)
        #expect(images.placements == 8)
        #expect(images.objects.count == 2)
        #expect(try run("qpdf", ["--check", path]).status == 0)
    }

    @Test func exportReportCountsDistinctAttachments() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.vault(dir)
        let report = try exportPDFBook(vault, to: dir.file("book.pdf"))
        #expect(report.entries == 5)
        #expect(report.attachments == 2)
    }

    /// Thirty entries share one JPEG (the corpus test's pattern): one
    /// image object, and the file is far smaller than thirty copies.
    @Test func manyEntriesSharingOnePhoto() throws {
        let dir = TemporaryDirectory()
        let entries = try Fixtures.journal("pepys.jsonl", limit: 60)
        let vault = try makeVault(dir, name: "Pepys", entries: entries, zone: "Europe/London", offset: 0, photoEvery: 2)
        let path = dir.file("book.pdf")
        let report = try writePDFBook(vault, to: path)
        #expect(report.photos == 30)
        #expect(report.distinctPhotos == 1)
        let images = try Self.images(path)
        #expect(images.placements == 30)
        #expect(images.objects.count == 1)
    }

    /// The book holds decrypted text: only its owner may read it.
    @Test func outputIsReadableByItsOwnerOnly() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.vault(dir)
        let path = dir.file("book.pdf")
        _ = try writePDFBook(vault, to: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(dir.listing == ["book.pdf", "v.quire"])
    }
}
