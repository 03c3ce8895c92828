import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireExport
import Testing

@Suite struct MarkdownExportTests {
    @Test func writesOneFilePerEntryWithMediaAndGoldenFrontMatter() throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        var calls: [ExportProgress] = []
        let report = try exportJournal(vault, format: .markdown, to: dir.file("out")) { calls.append($0) }
        #expect(report.entries == 5)
        #expect(report.attachments == 1)
        #expect(calls.first == ExportProgress(done: 0, total: 5))
        #expect(calls.last == ExportProgress(done: 5, total: 5))
        #expect(dir.listing("out") == [
            "1660", "1660/01", "1660/01/1660-01-11-jan-1st-lords-day-this-morning.md",
            "1852", "1852/06", "1852/06/1852-06-01-iiunia-1-piatigorsk-utrom-pisal.md",
            "2024", "2024/02", "2024/02/2024-02-29-script-alert-x-y-script-b.md",
            "2024", "2024/03", "2024/03/2024-03-01-same-words-2.md", "2024/03/2024-03-01-same-words.md",
            "media", "media/\(photoPrefix(vault)).jpg",
        ].reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }.sorted())
        var combined = ""
        for name in dir.listing("out") where name.hasSuffix(".md") {
            combined += "==> " + name + "\n" + (try read(dir.file("out/" + name))) + "\n"
        }
        #expect(try matchesGolden(combined, "sample-markdown.txt"))
        let photo = try Data(contentsOf: URL(fileURLWithPath: dir.file("out/media/\(photoPrefix(vault)).jpg")))
        #expect(photo == (try Data(contentsOf: URL(fileURLWithPath: fixtures + "/photo.jpg"))))
        // Nothing but the output folder is left beside it.
        #expect(dir.listing().filter { !$0.contains("/") } == ["out", "v.quire"])
    }

    @Test func sameVaultGivesIdenticalFolders() throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        _ = try exportJournal(vault, format: .markdown, to: dir.file("a"))
        _ = try exportJournal(vault, format: .markdown, to: dir.file("b"))
        #expect(dir.listing("a") == dir.listing("b"))
        for name in dir.listing("a") where name.hasSuffix(".md") {
            #expect(try read(dir.file("a/" + name)) == (try read(dir.file("b/" + name))))
        }
    }

    @Test func refusesAnExistingFolderAndLeavesNothing() throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: false)
        #expect(throws: ExportError.self) { try exportJournal(vault, format: .markdown, to: dir.file("out")) }
        #expect(dir.listing() == ["out", "v.quire"])
    }

    @Test func slugsFoldToASCII() {
        #expect(Slug.make("Jan. 1st (Lord’s day). This morning") == "jan-1st-lords-day-this-morning")
        #expect(Slug.make("Café crème brûlée, Æsop") == "cafe-creme-brulee-aesop")
        #expect(Slug.make("廿二日 晴。") == "entry")
        #expect(Slug.make("") == "entry")
        #expect(Slug.make(String(repeating: "a", count: 100)) == String(repeating: "a", count: 48))
    }

    @Test func yamlScalarsAreFaithful() {
        #expect(YAMLWriter.quoted("a\"b\\c\nd\u{7}\u{85}\u{2028}é") == "\"a\\\"b\\\\c\\nd\\x07\\x85\\u2028é\"")
        #expect(YAMLWriter.flow(.double(2)) == "2.0")
        #expect(YAMLWriter.flow(.double(-0.0)) == "-0.0")
        #expect(YAMLWriter.flow(.double(1e-300)) == "1e-300")
        #expect(YAMLWriter.flow(.negative(UInt64.max)) == "-18446744073709551616")
        #expect(YAMLWriter.flow(.bytes([0, 255, 16])) == "!!binary \"AP8Q\"")
        #expect(YAMLWriter.flow(.map(CBORMap([(.unsigned(7), .null)]))) == "{7: null}")
    }
}

/// The media file prefix of the sample photo (its blob id's first 32 hex digits).
func photoPrefix(_ vault: Vault) -> String {
    let entry = try! vault.entries().first { !$0.body.attachments.isEmpty }!
    return entry.body.attachments[0].blob.bytes.prefix(16).map { String(format: "%02x", $0) }.joined()
}
