import Foundation
import Testing
@_spi(Format) import Quire
@_spi(Format) import QuireFormat

/// An attachment whose second chunk does not authenticate
/// (`Spec/format.md §7.4`), read through the async forms: the stream hands
/// out the first chunk, then throws `.damaged`; a write to a file leaves
/// neither the file nor its temporary.
@Suite struct AttachmentStreamDamageTests {
    /// The damage fixture's vault with one bit of chunk 1's ciphertext
    /// flipped, opened; and the fixture.
    static func damaged() async throws -> (Vault, DamageAttachmentTests.Fixture) {
        let f = try DamageAttachmentTests.Fixture()
        let chunk = f.attachmentCommit[1]
        #expect(chunk.kind == .blobChunk)
        var bytes = f.bytes
        bytes[Int(chunk.offset) + 100] ^= 0x04  // past the public chunk header, before the tag
        let path = f.dir.file("damaged.quire")
        dmgWrite(path, bytes)
        return (try await Vault.open(at: path, credential: .recoveryKey(f.recovery)), f)
    }

    @Test func theStreamHandsOutTheGoodChunkThenThrowsDamaged() async throws {
        let (vault, f) = try await Self.damaged()
        var iterator = vault.attachmentChunks(f.blob).makeAsyncIterator()
        #expect(try await iterator.next() == Array(f.content[0..<65_536]))
        do {
            let more = try await iterator.next()
            Issue.record("read \(more?.count ?? 0) bytes past a damaged chunk")
        } catch {
            #expect(error.category == .damaged)
            #expect(error.code == "authentication_failed")
        }
        #expect(!iterator.isReading)
        #expect(try await iterator.next() == nil)
    }

    @Test func aWriteOfADamagedAttachmentLeavesNoFile() async throws {
        let (vault, f) = try await Self.damaged()
        let shown = f.dir.file("shown")
        try FileManager.default.createDirectory(atPath: shown, withIntermediateDirectories: false)
        let url = URL(fileURLWithPath: shown + "/photo.jpg")
        do {
            try await vault.writeAttachment(f.blob, to: url)
            Issue.record("wrote a damaged attachment")
        } catch {
            #expect(error.category == .damaged)
            #expect(error.code == "authentication_failed")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: shown).isEmpty, "neither the file nor a temporary")
    }
}
