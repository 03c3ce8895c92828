import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireExport
import QuireDayOne
@_spi(Format) import QuireImport
import QuireZip
import Testing
import QuireTestSupport

/// Issue 6's lossless round trip, end to end through the files a person
/// holds: a Day One JSON export → `quire import dayone` → the Day One variant
/// of the export (a ZIP) → every entry object equal, as a JSON value, to the
/// one in the original export; every media file back with its name and bytes.
@Suite(.tags(.slow), .skippedByMakeCheck) struct DayOneRoundTripTests {
    static let samples = fixtures + "/import/dayone"

    /// Entry objects by uuid from the Day One JSON documents `documents`;
    /// of a uuid appearing twice, the one modified last (as the import keeps).
    static func entries(_ documents: [[UInt8]]) throws -> [String: JSONObject] {
        var out: [String: JSONObject] = [:]
        for bytes in documents {
            let root = try JSONValue.parse(bytes)
            for case .object(let o) in root.objectValue?["entries"]?.arrayValue ?? [] {
                let uuid = try #require(o["uuid"]?.stringValue)
                if let seen = out[uuid], (seen["modifiedDate"]?.stringValue ?? "") > (o["modifiedDate"]?.stringValue ?? "") { continue }
                out[uuid] = o
            }
        }
        return out
    }

    /// Every member of the ZIP at `path`, by name.
    static func members(_ path: String) throws -> [String: [UInt8]] {
        let zip = try ZipReader(path: path)
        var out: [String: [UInt8]] = [:]
        for m in zip.members where !m.isDirectory { out[m.name] = try zip.readAll(m, limit: 64 << 20) }
        return out
    }

    /// "uuid: key" for every field that differs between `original` and `back`.
    static func differences(_ original: [String: JSONObject], _ back: [String: JSONObject]) -> [String] {
        var out: [String] = []
        for (uuid, o) in original.sorted(by: { $0.key < $1.key }) {
            guard let b = back[uuid] else { out.append("\(uuid): missing"); continue }
            for key in Set(o.keys).union(b.keys).sorted() where !(o[key].map { v in b[key].map { v.isSameValue(as: $0) } ?? false } ?? false) {
                out.append("\(uuid): \(key)")
            }
        }
        for uuid in back.keys where original[uuid] == nil { out.append("\(uuid): not in the original") }
        return out
    }

    /// Imports `source`, exports the Day One variant, returns the exported members.
    static func importThenExport(_ source: String, _ dir: TemporaryDirectory) throws -> [String: [UInt8]] {
        let vault = try makeVault(dir)
        _ = try importJournal(.dayOne, from: source, into: vault)
        let out = dir.file("export.zip")
        _ = try exportJournal(vault, format: .dayOne, to: out)
        return try members(out)
    }

    @Test(arguments: try FileManager.default.contentsOfDirectory(atPath: samples).filter { $0.hasSuffix(".json") }.sorted())
    func everyRealSampleComesBackField(_ file: String) throws {
        let dir = TemporaryDirectory()
        let original = try Self.entries([Array(try Data(contentsOf: URL(fileURLWithPath: Self.samples + "/" + file)))])
        #expect(!original.isEmpty)
        let exported = try Self.importThenExport(Self.samples + "/" + file, dir)
        let journals = exported.filter { $0.key.hasSuffix(".json") }
        #expect(journals.keys.sorted() == [file])
        #expect(Self.differences(original, try Self.entries(Array(journals.values))) == [])
    }

    @Test func pepysComesBackWithItsPhotos() throws {
        let dir = TemporaryDirectory()
        let source = fixtures + "/pepys-dayone.zip"
        let originalMembers = try Self.members(source)
        let exported = try Self.importThenExport(source, dir)
        #expect(exported.keys.sorted() == originalMembers.keys.sorted())
        let original = try Self.entries([try #require(originalMembers["Pepys Diary.json"])])
        #expect(original.count == 3_413)
        #expect(Self.differences(original, try Self.entries([try #require(exported["Pepys Diary.json"])])) == [])
        // The file's metadata and its entries' order come back too (two of them are not in date order).
        func document(_ bytes: [UInt8]) throws -> JSONObject { try #require(try JSONValue.parse(bytes).objectValue) }
        let before = try document(try #require(originalMembers["Pepys Diary.json"]))
        let after = try document(try #require(exported["Pepys Diary.json"]))
        #expect(after["metadata"] == before["metadata"])
        #expect(after["entries"]?.arrayValue?.map { $0.objectValue?["uuid"] } == before["entries"]?.arrayValue?.map { $0.objectValue?["uuid"] })
        for (name, bytes) in originalMembers where !name.hasSuffix(".json") {
            #expect(exported[name] == bytes, "\(name)")
        }
    }
}

/// Decrypted output is its owner's alone: every format is written 0600
/// (a new-user trial found EPUB and the Day One ZIP written 0644).
@Suite struct ExportPermissionTests {
    @Test(arguments: ExportFormat.allCases)
    func everyFormatIsWrittenForItsOwnerOnly(_ format: ExportFormat) throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        let out = dir.file("out")
        _ = try exportJournal(vault, format: format, to: out)
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        #expect(mode == (format == .markdown ? 0o700 : 0o600), "\(format)")
    }
}
