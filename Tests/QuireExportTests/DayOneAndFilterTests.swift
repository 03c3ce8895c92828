import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireExport
import Testing
import QuireTestSupport

/// Lists and reads ZIP members with `unzip`; nil when it is missing.
func unzipList(_ path: String) throws -> [String]? {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unzip") else {
        print("SKIPPED archive listing: /usr/bin/unzip is missing")
        return nil
    }
    return String(decoding: try run("/usr/bin/unzip", ["-Z1", path]), as: UTF8.self).split(separator: "\n").map(String.init)
}

func unzipMember(_ path: String, _ member: String) throws -> Data {
    try run("/usr/bin/unzip", ["-p", path, member])
}

func run(_ tool: String, _ arguments: [String]) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return data
}

@Suite struct DayOneExportTests {
    @Test func archiveHasAJSONPerJournalAndPhotos() throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        let report = try exportJournal(vault, format: .dayOne, to: dir.file("out.zip"))
        #expect(report.entries == 5)
        #expect(report.attachments == 1)
        _ = try exportJournal(vault, format: .dayOne, to: dir.file("again.zip"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("out.zip"))) == (try Data(contentsOf: URL(fileURLWithPath: dir.file("again.zip")))))
        guard let names = try unzipList(dir.file("out.zip")) else { return }
        let md5 = photoPrefix(vault)
        // The file keeps the extension of its name ("cover <1>.jpg").
        #expect(names == ["Pepys Diary.json", "Tolstoy Diary.json", "J\"&<>'.json", "photos/\(md5).jpg"])
        let pepys = try JSONSerialization.jsonObject(with: try unzipMember(dir.file("out.zip"), "Pepys Diary.json")) as! [String: Any]
        #expect((pepys["metadata"] as? [String: String]) == ["version": "1.0"])
        let entries = pepys["entries"] as! [[String: Any]]
        #expect(entries.count == 3)
        #expect(entries[0]["creationDate"] as? String == "1660-01-11T22:01:15Z")
        #expect(entries[0]["timeZone"] as? String == "Europe/London")
        #expect((entries[0]["text"] as! String).contains("![The portrait](dayone-moment://01020304)"))
        let photos = entries[0]["photos"] as! [[String: Any]]
        #expect(photos[0]["identifier"] as? String == "01020304")
        #expect(photos[0]["md5"] as? String == md5)
        #expect(photos[0]["type"] as? String == "jpeg")
        #expect(entries[0]["tags"] as? [String] == ["1660", "church"])
        let photo = try unzipMember(dir.file("out.zip"), "photos/\(md5).jpg")
        #expect(photo == (try Data(contentsOf: URL(fileURLWithPath: fixtures + "/photo.jpg"))))
    }
}

@Suite(.tags(.slow), .skippedByMakeCheck) struct FilterTests {
    static let formats: [(ExportFormat, String)] = [(.markdown, "out"), (.json, "out.json"), (.html, "out.html"), (.epub, "out.epub"), (.dayOne, "out.zip")]

    @Test(arguments: [
        (ExportFilter(), 5),
        (ExportFilter(sinceMilliseconds: utcMilliseconds(2024, 1, 1)), 3),
        (ExportFilter(sinceMilliseconds: nil, untilMilliseconds: utcMilliseconds(2024, 3, 1, 9)), 3),
        (ExportFilter(sinceMilliseconds: utcMilliseconds(1852, 6, 1), untilMilliseconds: utcMilliseconds(2024, 3, 1)), 2),
        (ExportFilter(tags: ["work"]), 2),
        (ExportFilter(tags: ["church", "1852"]), 2),
        (ExportFilter(journals: ["Pepys Diary"]), 3),
        (ExportFilter(tags: ["work"], journals: ["Pepys Diary"]), 1),
        (ExportFilter(tags: ["nothing"]), 0),
    ])
    func everyFormatTakesTheSameEntries(_ filter: ExportFilter, _ expected: Int) throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        let selected = try selectEntries(vault, filter: filter)
        #expect(selected.count == expected)
        #expect(selected.map(\.body.createdMilliseconds) == selected.map(\.body.createdMilliseconds).sorted())
        for (format, name) in Self.formats {
            var last = ExportProgress(done: -1, total: -1)
            let report = try exportJournal(vault, format: format, to: dir.file(name), filter: filter) { last = $0 }
            #expect(report.entries == expected, "\(format)")
            #expect(last == ExportProgress(done: expected, total: expected), "\(format)")
        }
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("out.json")))) as! [String: Any]
        let ids = (json["entries"] as! [[String: Any]]).map { $0["id"] as! String }
        #expect(ids == selected.map { $0.id.description })
        // One filtered book through epubcheck (each run takes seconds).
        if filter.since != nil, filter.until != nil { try expectEPUBCheckClean(dir.file("out.epub")) }
    }
}

@Suite struct FailureTests {
    /// A vault whose photo chunk no longer authenticates after its index was loaded.
    func damagedVault(_ dir: TemporaryDirectory) throws -> Vault {
        let vault = try makeSampleVault(dir)
        _ = try vault.entries()
        let manifest = try vault.attachment(try vault.entries()[0].body.attachments[0].blob)
        // Find the photo's chunk: decrypting it still works now; flip bytes until it does not.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: dir.file("v.quire")))
        let photo = try Data(contentsOf: URL(fileURLWithPath: fixtures + "/photo.jpg"))
        #expect(manifest.byteCount == UInt64(photo.count))
        // The chunk is the only record larger than the photo: flip a byte in the middle of the file's largest gap-free span.
        let middle = bytes.count / 4
        for i in middle..<(middle + 600) { bytes[i] ^= 0xFF }
        try bytes.write(to: URL(fileURLWithPath: dir.file("v.quire")))
        return vault
    }

    @Test(arguments: [(ExportFormat.markdown, "out"), (.json, "out.json"), (.html, "out.html"), (.epub, "out.epub"), (.dayOne, "out.zip")])
    func aFailingExportLeavesNothing(_ format: ExportFormat, _ name: String) throws {
        let dir = TemporaryDirectory()
        let vault = try damagedVault(dir)
        var options = ExportOptions()
        options.jsonMedia = true
        do {
            _ = try exportJournal(vault, format: format, to: dir.file(name), options: options)
            Issue.record("\(format) did not fail")
        } catch {
            #expect(error.code == "authentication_failed" || error.description.contains("authenticat"), "\(format): \(error)")
        }
        #expect(dir.listing() == ["v.quire"])
    }

    @Test func anUnwritableDestinationIsATypedError() throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        for (format, name) in FilterTests.formats {
            do {
                _ = try exportJournal(vault, format: format, to: dir.file("missing/" + name))
                Issue.record("\(format) wrote into a missing folder")
            } catch {
                #expect(["export_cannot_write", "zip_cannot_open", "zip_io"].contains(error.code), "\(format): \(error.code) \(error)")
            }
        }
        #expect(dir.listing() == ["v.quire"])
    }
}
