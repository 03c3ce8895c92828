import Foundation
@_spi(Format) import Quire
import QuireDayOne
@_spi(Format) import QuireExport
@_spi(Format) import QuireImport
import QuireZip
import Testing

/// F6 — the dialect round trip (`Tests/Fixtures/import/dayone-families/F6-*.md`).
@Suite struct DayOneDialectRoundTripTests {

    /// The journal file of a Day One variant export, parsed.
    static func exportedJournal(_ vault: Vault, _ dir: TemporaryDirectory, _ name: String) throws -> JSONObject {
        let out = dir.file("out-\(UUID().uuidString).zip")
        _ = try exportJournal(vault, format: .dayOne, to: out)
        return try #require(try JSONValue.parse(try zipMember(out, name)).objectValue)
    }

    @Test(arguments: ["F6-android-round-trip", "F6-apple-order"])
    func f6MetadataAndOrderComeBack(_ name: String) throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = familiesFolder + "/\(name).json"
        _ = try importJournal(.dayOne, from: path, into: vault)
        let original = try #require(try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).objectValue)
        let back = try Self.exportedJournal(vault, dir, "\(name).json")
        #expect(back["metadata"]?.isSameValue(as: original["metadata"]!) == true, "\(String(describing: back["metadata"]))")
        let uuids = { (o: JSONObject) in o["entries"]?.arrayValue?.compactMap { $0.objectValue?["uuid"]?.stringValue } ?? [] }
        #expect(uuids(back) == uuids(original))
        let pairs = zip(original["entries"]?.arrayValue ?? [], back["entries"]?.arrayValue ?? [])
        #expect(pairs.allSatisfy { $0.isSameValue(as: $1) })
    }

    /// An Android export comes back as one, so re-importing it keeps the backslashes the author typed.
    @Test func f6AndroidStaysAndroid() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        _ = try importJournal(.dayOne, from: familiesFolder + "/F6-android-round-trip.json", into: vault)
        _ = try exportJournal(vault, format: .dayOne, to: dir.file("out.zip"))
        let copy = try makeVault(dir, name: "copy.quire")
        _ = try importJournal(.dayOne, from: dir.file("out.zip"), into: copy)
        #expect(try bodies(copy)[uuid(6, 2)]?.text == "Backslashes I typed: C:\\temp\\.cache, 1\\. kept, a\\-b and `x\\.y` > quoted\n")
        #expect(try copy.entries().map(\.body) == (try vault.entries()).map(\.body))
    }

    /// The real Android sample too: metadata and newest-first order come back.
    @Test func f6RealAndroidSample() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = samplesFolder + "/marph91__jimmy-test-data__Tagebuch.json"
        _ = try importJournal(.dayOne, from: path, into: vault)
        let original = try #require(try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).objectValue)
        let back = try Self.exportedJournal(vault, dir, "marph91__jimmy-test-data__Tagebuch.json")
        #expect(back["metadata"] == original["metadata"])
        #expect(back["entries"]?.arrayValue?.map { $0.objectValue?["uuid"] } == original["entries"]?.arrayValue?.map { $0.objectValue?["uuid"] })
    }
}
