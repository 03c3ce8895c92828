import Foundation
import Testing
import Quire  // alone, as the README says

/// The README's "library in ten lines", run as written (paths made temporary).
@Suite struct ReadmeExampleTests {
    @Test func libraryInTenLines() throws {
        let dir = TemporaryDirectory()
        let journal = dir.file("Journal.quire")
        let photoPath = dir.file("photo.jpg")
        let photoBytes = SeededRandom(label: "readme photo").bytes(1000)
        _ = FileManager.default.createFile(atPath: photoPath, contents: Data(photoBytes))

        let recovery = try RecoveryKey(using: SystemRandom())
        let vault = try Vault.create(at: journal, setup: VaultSetup(name: "Journal", recoveryKey: recovery))
        let now: Int64 = 1_767_225_600_000
        let first = try vault.add(EntryBody(created: now, timeZone: "Europe/London", text: "Up betimes."))
        try vault.commit { tx in
            let photo = try tx.storeAttachment(fromFile: photoPath, mediaType: "image/jpeg")
            try tx.append(EntryRevision(entryID: EntryID(using: SystemRandom()), revisionID: RevisionID(using: SystemRandom()),
                clock: HybridLogicalClock(rawValue: 0), body: EntryBody(created: now + 1, text: "A photo", attachments: [AttachmentReference(id: [1], blob: photo.blob)])))
        }
        let again = try Vault.open(at: journal, credential: .recoveryKey(recovery))
        var texts: [String] = []
        for entry in try again.entries() { texts.append(entry.body.text + (entry.isVerified ? "" : " (unverified)")) }
        let report = again.verify()

        #expect(texts == ["Up betimes.", "A photo"])
        #expect(try again.entry(first.entryID)?.body.timeZone == "Europe/London")
        let blob = try #require(try again.entries().last?.body.attachments.first?.blob)
        #expect(try again.openAttachment(blob).readAll() == photoBytes)
        #expect(report.issues.isEmpty)
        #expect(report.isIntact)
    }
}
