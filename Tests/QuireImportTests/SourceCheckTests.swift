import Foundation
@_spi(Format) import Quire
import QuireDayOne
@_spi(Format) import QuireImport
import Testing

/// Sources that are broken or of another format are refused with a precise
/// reason and write nothing; a Day One folder is read at its top level only;
/// jrnl ids do not depend on where the file is; garbage Day One fields are
/// kept and noted (`Spec/import.md §1, §2, §9, §12`).
@Suite struct SourceCheckTests {
    /// Imports `text` as one Day One JSON file and returns the error's reason.
    func dayOneReason(_ bytes: [UInt8]) throws -> String? {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = dir.file("Journal.json")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try importJournal(.dayOne, from: path, into: vault)
            return nil
        } catch {
            #expect(try vault.entries().isEmpty)
            guard case .unreadableSource(let p, let reason) = error else { return "\(error)" }
            #expect(p == path)
            return reason
        }
    }

    @Test func malformedDayOneJSONIsRefused() throws {
        #expect(try dayOneReason(Array("[1, 2]".utf8)) == "not a Day One export: the JSON is not an object with an \"entries\" array")
        #expect(try dayOneReason(Array(#"{"metadata":{},"entries":null}"#.utf8)) == "not a Day One export: \"entries\" is not an array")
        #expect(try dayOneReason(Array(#"{"metadata":{}}"#.utf8)) == "not a Day One export: no \"entries\" array")
        #expect(try dayOneReason(Array("".utf8)) == "not a Day One export: the file is empty")
        #expect(try dayOneReason(Array(String(repeating: "[", count: 100_000).utf8)) == "invalid JSON at byte 65: nesting deeper than 64")
        let latin1: [UInt8] = Array(#"{"entries":[{"uuid":"A","creationDate":"2024-01-01T10:00:00Z","text":"caf"#.utf8) + [0xE9] + Array(#""}]}"#.utf8)
        #expect(try dayOneReason(latin1) == "invalid JSON at byte 75: string is not valid UTF-8")
        let surrogate = #"{"entries":[{"uuid":"A","creationDate":"2024-01-01T10:00:00Z","text":"\ud800"}]}"#
        #expect(try dayOneReason(Array(surrogate.utf8)) == "invalid JSON at byte 76: lone high surrogate")
        // Broken after a valid first entry: still nothing written (checked before any commit).
        let late = #"{"entries":[{"uuid":"00C0FFEE0000000000000000000000B1","creationDate":"2024-01-01T10:00:00Z","text":"one"}, x]}"#
        #expect(try dayOneReason(Array(late.utf8)) == "invalid JSON at byte 108: unexpected character 'x'")
    }

    @Test(arguments: ["small.zip", "bomb.zip", "lying-size.zip"])
    func aZipWithoutDayOneJSONIsRefused(_ name: String) throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = importFixtures + "/zip/" + name
        do {
            _ = try importJournal(.dayOne, from: path, into: vault)
            Issue.record("imported \(name)")
        } catch {
            guard case .unreadableSource(_, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.hasPrefix("no Day One journal JSON found in \(path)"))
        }
        #expect(try vault.entries().isEmpty)
    }

    func reason(_ format: ImportFormat, _ path: String) throws -> String? {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        do { _ = try importJournal(format, from: path, into: vault); return nil } catch {
            #expect(try vault.entries().isEmpty)
            guard case .unreadableSource(_, let reason) = error else { return "\(error)" }
            return reason
        }
    }

    @Test func otherFormatsAreRefusedWithWhatWasExpected() throws {
        let dir = TemporaryDirectory()
        let pepys = fixturesRoot + "/pepys-dayone.zip"
        let markdown = "not a Quire Markdown export (expected a folder of .md files with YAML front matter, as quire export markdown writes)"
        #expect(try reason(.markdown, casesFolder + "/01-escaped-punctuation.json") == markdown + ": no .md file in it")
        #expect(try reason(.markdown, pepys) == markdown + ": no .md file in it")
        #expect(try reason(.dayOneClassic, pepys) == "not a Day One Classic journal (expected a Journal.dayone folder whose entries/ hold .doentry property lists): no .doentry file in it")
        let empty = dir.file("empty-file")
        try Data().write(to: URL(fileURLWithPath: empty))
        #expect(try reason(.jrnl, empty) == "not a jrnl JSON export (expected the JSON file jrnl --export json writes, {\"tags\": {…}, \"entries\": […]}): the file is empty")
        #expect(try reason(.jrnl, casesFolder + "/01-escaped-punctuation.md")?.hasPrefix("not a jrnl JSON export (expected the JSON file jrnl --export json writes, {\"tags\": {…}, \"entries\": […]}): invalid JSON at byte 0") == true)
    }

    @Test func aDayOneFolderIsReadAtItsTopLevelOnly() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let root = dir.file("tmp")
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/project/deep", withIntermediateDirectories: true)
        try fm.copyItem(atPath: casesFolder + "/08-all-day-entries.json", toPath: root + "/Journal.json")
        try fm.copyItem(atPath: casesFolder + "/01-escaped-punctuation.json", toPath: root + "/project/deep/Other.json")
        try #"{"name":"package","version":"1.0"}"#.write(toFile: root + "/package.json", atomically: true, encoding: .utf8)
        let report = try importJournal(.dayOne, from: root, into: vault)
        #expect(report.journals == ["Journal"])
        #expect(report.entriesAdded == (try foundationEntries(root + "/Journal.json")).count)
        #expect(report.skipped == [SkippedItem(item: "package.json", reason: "not a Day One export: no \"entries\" array")])
        // No Day One file at the top: refused.
        try fm.removeItem(atPath: root + "/Journal.json")
        #expect(try reason(.dayOne, root)?.hasPrefix("no Day One journal JSON found in \(root)") == true)
        // One wrapping folder (as a zip may have) is looked into.
        let wrapped = dir.file("wrapped")
        try fm.createDirectory(atPath: wrapped + "/Export", withIntermediateDirectories: true)
        try fm.copyItem(atPath: casesFolder + "/08-all-day-entries.json", toPath: wrapped + "/Export/Journal.json")
        let other = try makeVault(dir, name: "w.quire")
        #expect(try importJournal(.dayOne, from: wrapped, into: other).journals == ["Journal"])
    }

    @Test func jrnlReimportedFromAnywhereAddsNothing() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let folder = importFixtures + "/jrnl"
        let file = folder + "/marph91__jimmy-test-data__myjournal.json"
        let renamed = dir.file("renamed.json")
        try FileManager.default.copyItem(atPath: file, toPath: renamed)
        let options = ImportOptions(timeZone: "Europe/Berlin")
        #expect(try importJournal(.jrnl, from: folder, into: vault, options: options).entriesAdded == 5)
        #expect(try importJournal(.jrnl, from: file, into: vault, options: options).entriesAdded == 0)
        #expect(try importJournal(.jrnl, from: renamed, into: vault, options: options).entriesAdded == 0)
        #expect(try vault.entries().count == 5)
    }

    @Test func garbageDayOneFieldsAreKeptAndNoted() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = dir.file("Garbage.json")
        let longTag = String(repeating: "x", count: 100_000)
        try """
            {"metadata":{"version":"1.0"},"entries":[
              {"uuid":"00C0FFEE0000000000000000000000C1","creationDate":"2024-01-01T10:00:00Z","timeZone":"Mars/Olympus","text":"a"},
              {"uuid":"00C0FFEE0000000000000000000000C2","creationDate":"2020-02-30T10:00:00Z","text":"b"},
              {"uuid":"00C0FFEE0000000000000000000000C3","creationDate":"2024-01-01T10:00:00Z","text":["array"]},
              {"uuid":"00C0FFEE0000000000000000000000C4","creationDate":"2024-01-01T10:00:00Z","text":"d","tags":["ok","\(longTag)"]}
            ]}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let report = try importJournal(.dayOne, from: path, into: vault, options: ImportOptions(timeZone: "Europe/Paris"))
        #expect(report.entriesAdded == 3)
        #expect(report.skipped.map(\.item) == [
            "Garbage.json: entry 00C0FFEE0000000000000000000000C1: timeZone",
            "Garbage.json: entry #2 00C0FFEE0000000000000000000000C2",
            "Garbage.json: entry 00C0FFEE0000000000000000000000C3: text",
            "Garbage.json: entry 00C0FFEE0000000000000000000000C4: tags",
        ])
        #expect(report.skipped[1].reason == "the entry's creationDate \"2020-02-30T10:00:00Z\" is not an ISO 8601 date-time")
        let byUUID = try entriesByUUID(vault)
        let mars = try #require(byUUID["00C0FFEE0000000000000000000000C1"]).body
        // An unknown zone is noted, kept, and the entry shown in the import's zone (issue 16, family 5).
        #expect(mars.timeZoneIdentifier == "Europe/Paris" && mars.extra[text: "inferredTimeZone"] == .text("import"))
        let kept = try #require(DayOneMapping.dayOneEntry(id: DayOneMapping.entryID(forUUID: "00C0FFEE0000000000000000000000C1"), body: mars)["timeZone"])
        #expect(kept == .string("Mars/Olympus"))
        let array = try #require(byUUID["00C0FFEE0000000000000000000000C3"]).body
        #expect(array.text == "")
        #expect(DayOneMapping.dayOneEntry(id: DayOneMapping.entryID(forUUID: "00C0FFEE0000000000000000000000C3"), body: array)["text"] == .array([.string("array")]))
        let tagged = try #require(byUUID["00C0FFEE0000000000000000000000C4"]).body
        #expect(tagged.tags == ["ok", String(repeating: "x", count: 256)])
        #expect(DayOneMapping.dayOneEntry(id: DayOneMapping.entryID(forUUID: "00C0FFEE0000000000000000000000C4"), body: tagged)["tags"] == .array([.string("ok"), .string(longTag)]))
    }
}
