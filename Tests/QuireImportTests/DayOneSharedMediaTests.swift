import Foundation
@_spi(Format) import Quire
import QuireDayOne
import QuireExport
@_spi(Format) import QuireImport
import QuireZip
import Testing

/// F1 — media referenced across entries (`Tests/Fixtures/import/dayone-families/F1-*.md`).
@Suite struct DayOneSharedMediaTests {

    static let f1Media = [
        "photos/\(md5(1, 1)).jpeg", "photos/\(md5(1, 2)).png", "videos/\(md5(1, 3)).mov",
    ]

    @Test func f1MediaReferencedAcrossEntriesResolveAgainstTheWholeExport() throws {
        let dir = TemporaryDirectory()
        let root = try makeExport(dir, jsons: [familiesFolder + "/F1-media-across-entries.json"], media: Self.f1Media)
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: root, into: vault)
        #expect(report.entriesAdded == 6)
        // Three files, each stored once, however many entries show them.
        #expect(report.attachmentsStored == 3)
        #expect(report.missingMedia == [])
        let b = try bodies(vault)
        let one = try #require(b[uuid(1, 1)]), two = try #require(b[uuid(1, 2)]), three = try #require(b[uuid(1, 3)])
        let four = try #require(b[uuid(1, 4)]), five = try #require(b[uuid(1, 5)]), six = try #require(b[uuid(1, 6)])
        #expect(one.text == "Beach day, the photo is in the other entry ![](quire-attachment://\(identifier(1, 2).lowercased()))\n\nAnd a photo no entry lists ![](dayone-moment://\(identifier(1, 255)))")
        #expect(one.attachments.count == 1)
        #expect(one.attachments.first?.blob == two.attachments.first?.blob)
        #expect(one.attachments.first?.mediaType == "image/jpeg")
        #expect(three.attachments.first?.blob == two.attachments.first?.blob)
        // An item without md5 finds its file through another entry's listing.
        #expect(four.text == "An older export: this item has no md5 ![](quire-attachment://\(identifier(1, 4).lowercased()))")
        #expect(four.attachments.map(\.mediaType) == ["image/png"])
        #expect(four.attachments.first?.blob == five.attachments.first?.blob)
        #expect(six.text == "The video, again: ![](quire-attachment://\(identifier(1, 5).lowercased()))")
        #expect(six.attachments.map(\.mediaType) == ["video/quicktime"])
        // No raw moment link and no placeholder is left where a file exists.
        for body in b.values {
            for link in ["dayone-moment://\(identifier(1, 2))", "dayone-moment://\(identifier(1, 4))", "dayone-moment:/video/\(identifier(1, 5))", "DAYONE_PHOTO"] {
                #expect(!body.text.contains(link))
            }
        }
        // The one link to media no entry lists is kept and reported.
        #expect(report.skipped.map(\.item) == ["F1-media-across-entries.json: entry \(uuid(1, 1)): link \(identifier(1, 255))"])
        // The round trip gives every object back (entry 1 again without photos).
        #expect(try roundTripDifferences(familiesFolder + "/F1-media-across-entries.json", vault: vault) == [])
        let back = DayOneMapping.dayOneEntry(id: DayOneMapping.entryID(forUUID: uuid(1, 1)), body: one)
        #expect(back["photos"] == nil)
        // Importing again writes nothing.
        let again = try importJournal(.dayOne, from: root, into: vault)
        #expect(again.entriesUnchanged == 6 && again.entriesAdded == 0 && again.entriesUpdated == 0)
    }
}
