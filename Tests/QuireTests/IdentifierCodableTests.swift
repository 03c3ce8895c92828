import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireFormat
import Testing

/// Ids encode as the hex string they print, so that an app can keep them in
/// state restoration, navigation paths and deep links.
@Suite struct IdentifierCodableTests {
    @Test func idsEncodeAsTheirHexString() throws {
        let entry = EntryID(unchecked: Array(0..<16))
        let json = try JSONEncoder().encode([entry])
        #expect(String(decoding: json, as: UTF8.self) == #"["000102030405060708090a0b0c0d0e0f"]"#)
        #expect(try JSONDecoder().decode([EntryID].self, from: json) == [entry])

        let blob = BlobID(unchecked: Array(repeating: 0xab, count: 32))
        let blobJSON = try JSONEncoder().encode(blob)
        #expect(String(decoding: blobJSON, as: UTF8.self) == "\"" + String(repeating: "ab", count: 32) + "\"")
        #expect(try JSONDecoder().decode(BlobID.self, from: blobJSON) == blob)

        let revision = RevisionID(unchecked: Array(repeating: 0xff, count: 16))
        let device = DeviceID(unchecked: Array(repeating: 0x01, count: 16))
        #expect(try JSONDecoder().decode(RevisionID.self, from: JSONEncoder().encode(revision)) == revision)
        #expect(try JSONDecoder().decode(DeviceID.self, from: JSONEncoder().encode(device)) == device)
        // Uppercase hex, as init?(hex:) takes, decodes too.
        let upper = Data("\"000102030405060708090A0B0C0D0E0F\"".utf8)
        #expect(try JSONDecoder().decode(EntryID.self, from: upper) == entry)
    }

    @Test func aWrongIdStringDoesNotDecode() {
        for text in ["\"00\"", "\"zz0102030405060708090a0b0c0d0e0f\"", "[1,2]", "\"\(String(repeating: "00", count: 32))\""] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(EntryID.self, from: Data(text.utf8)) }
        }
    }

    @Test func snapshotsAreIdentifiableByEntryID() throws {
        func identity<T: Identifiable>(_ value: T) -> T.ID { value.id }
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let added = try vault.add(EntryBody(created: 1, text: "a"))
        let snapshot = try #require(try vault.entry(added.entryID))
        #expect(identity(snapshot) == added.entryID)
    }
}
