import Foundation
import Testing
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireTestSupport

/// Single-bit flips in a commit holding a two-chunk attachment, its manifest
/// and the entry that references it (`Spec/format.md` §7.4, §10.2). Stream
/// structure problems are reported at the manifest, the first failing check
/// of §7.4 only; a chunk that fails to authenticate at its own offset.
///
/// The attachment commit is about 70 KB, so not every bit is flipped: every
/// bit of every frame header, of both chunks' public chunk headers, of every
/// trailer, of the manifest and entry bodies and of the commit MAC, and every
/// 331st bit of the chunks' nonces and ciphertexts (whose bytes all take the
/// same path: the AEAD fails).
@Suite(.tags(.slow), .skippedByMakeCheck) struct DamageAttachmentTests {
    struct Fixture {
        let dir = TemporaryDirectory()
        let path: String
        let recovery: RecoveryKey
        let bytes: [UInt8]
        let layout: DmgLayout
        let content: [UInt8]
        let blob: BlobID
        let texts = ["Photo of the harbour 📷", "Later that day."]

        init() throws {
            let (vault, recovery) = try makeVault(dir, seed: "attachment-damage")
            self.recovery = recovery
            path = dir.file("v.quire")
            content = SeededRandom(label: "attachment-damage-content").bytes(70_000)
            var stored: StoredBlob?
            let ids = SeededRandom(label: "attachment-damage-ids")
            let (content, texts) = (content, texts)
            try vault.commit { (tx: VaultTransaction) throws(QuireError) in
                stored = try tx.storeAttachment(from: MemoryByteSource(content), mediaType: "image/jpeg")
                let ref = AttachmentReference(id: [9], blob: stored!.blob, mediaType: "image/jpeg", fileName: "harbour.jpg")
                try tx.append(EntryRevision(
                    entryID: EntryID(using: ids), revisionID: RevisionID(using: ids), clock: HybridLogicalClock(milliseconds: 1_700_000_100_000, counter: 0),
                    body: dmgBody(texts[0], created: 1_700_000_100_000, attachments: [ref])))
            }
            try vault.add(dmgBody(texts[1], created: 1_700_000_200_000))
            blob = stored!.blob
            layout = DmgLayout(vault)
            bytes = dmgRead(path)
        }

        var attachmentCommit: [DmgLayout.Frame] { layout.frames.filter { $0.group == 1 } }
    }

    @Test func fixtureLayoutIsAsDesigned() throws {
        let f = try Fixture()
        #expect(f.attachmentCommit.map(\.kind) == [.blobChunk, .blobChunk, .blobManifest, .entryRevision, .commit])
        #expect(f.attachmentCommit[0].end - f.attachmentCommit[0].offset == 16 + 65_597)
        // 70,000 bytes pad to Padmé(70,001) = 71,680: chunks of 65,536 and 6,144.
        #expect(f.attachmentCommit[1].end - f.attachmentCommit[1].offset == 16 + 24 + 21 + 6_144 + 16)
        let vault = try dmgOpen(f.path, f.recovery)
        #expect(try dmgTexts(vault) == f.texts)
        #expect(try vault.openAttachment(f.blob).readAll() == f.content)
        #expect(dmgIssues(vault) == [])
    }

    /// Which bits of a frame are flipped (offsets relative to the frame start).
    static func flippedBits(of frame: DmgLayout.Frame) -> [(Int, Int)] {
        let length = Int(frame.end - frame.offset)
        var out: [(Int, Int)] = []
        for rel in 0..<length {
            let all = rel < 16 || rel >= length - 16 || frame.kind != .blobChunk || (40..<61).contains(rel)
            for bit in 0..<8 where all || (rel * 8 + bit) % 331 == 0 { out.append((rel, bit)) }
        }
        return out
    }

    @Test(arguments: 0..<5)
    func singleBitFlipsInTheAttachmentCommit(frameNumber: Int) throws {
        let f = try Fixture()
        let frames = f.attachmentCommit
        let frame = frames[frameNumber]
        let manifest = frames[2]
        let commit = frames[4]
        let flipPath = f.dir.file("flip-\(frameNumber).quire")
        var flips = 0
        for (rel, bit) in Self.flippedBits(of: frame) {
            let at = "frame \(frame.index) (\(frame.kind)) byte +\(rel) bit \(bit)"
            var damaged = f.bytes
            damaged[Int(frame.offset) + rel] ^= UInt8(1 << bit)
            dmgWrite(flipPath, damaged)
            flips += 1
            let vault = try dmgOpen(flipPath, f.recovery)
            let length = Int(frame.end - frame.offset)
            // The trailer stands for the body in the chain: a chunk's tag, or
            // another frame's 32-byte body hash.
            let inTrailer = rel >= length - (frame.kind == .blobChunk ? 16 : 32)
            let mismatch = DmgIssue("commit_mismatch", offset: commit.offset, frame: commit.index, damage: true)
            var issues: [DmgIssue]
            var texts = f.texts
            // nil: the attachment reads back whole; otherwise the error reading it.
            var attachmentError: QuireError? = nil
            if rel < 16 {
                issues = [DmgIssue("frame_repaired", offset: frame.offset, frame: frame.index, damage: false)]
            } else if frame.kind == .commit {
                // The head breaks the chain; the stored previous head is
                // repaired from the commit before it (§9.3 step 2); the
                // stored attestation after it is covered by the head (sixth
                // review R6-1): the commit no longer verifies — a mismatch,
                // tampered when a later commit chains from it (the records
                // stay, unverified).
                let chainedFrom = f.layout.frames.contains { $0.kind == .commit && $0.offset > commit.offset }
                issues = rel < 16 + 32 ? [mismatch]
                    : rel < 16 + 64 ? [DmgIssue("frame_repaired", offset: commit.offset, frame: commit.index, damage: false)]
                    : [chainedFrom ? DmgIssue("commit_tampered", offset: commit.offset, frame: commit.index, damage: true) : mismatch]
            } else if frame.kind == .blobChunk && (40..<61).contains(rel) {
                // The public chunk header: the stream's structure breaks
                // (reported at the manifest) and the attachment is not indexed.
                let k = frameNumber
                let field = rel - 40
                let atManifest = { (code: String) in DmgIssue(code, offset: manifest.offset, frame: manifest.index, damage: true) }
                let malformed = DmgIssue("malformed_frame", offset: frame.offset, frame: frame.index, damage: true)
                attachmentError = .attachmentNotFound(f.blob)
                switch field {
                case 0..<16:  // stream id: the chunk leaves the stream
                    issues = [atManifest(k == 0 ? "chunk_missing" : "chunk_final_missing")]
                case 16..<20:  // chunk index (u32, little-endian)
                    let flipped = UInt32(k) ^ (UInt32(1) << UInt32((field - 16) * 8 + bit))
                    // Flipped to the other chunk's index, it shares that index
                    // but does not open (the header is authenticated), so it is
                    // passed over (§7.4) and its own index is missing.
                    issues = [atManifest(flipped == UInt32(1 - k) && k == 1 ? "chunk_final_missing" : "chunk_missing")]
                default:  // the final flag: 0 or 1, anything else is a malformed frame
                    if bit == 0 {
                        // Chunk 1 no longer final: its short body breaks the
                        // canonical sizes, checked before the final flags (§7.4 rule 4).
                        issues = [atManifest(k == 0 ? "chunk_final_repeated" : "chunk_noncanonical")]
                    } else {
                        issues = [malformed, atManifest(k == 0 ? "chunk_missing" : "chunk_final_missing")]
                    }
                }
            } else if frame.kind == .blobChunk {
                issues = [DmgIssue("authentication_failed", offset: frame.offset, frame: frame.index, damage: true)]
                attachmentError = .format(.authenticationFailed(FrameLocation(offset: frame.offset, index: frame.index)))
            } else {
                // A sealed record: the manifest or the entry.
                issues = [DmgIssue("authentication_failed", offset: frame.offset, frame: frame.index, damage: true)]
                if frame.kind == .blobManifest { attachmentError = .attachmentNotFound(f.blob) } else { texts.removeFirst() }
            }
            if inTrailer && frame.kind != .commit { issues.append(mismatch) }
            // A chunk's tag cannot be recomputed from its body, so nothing
            // bridges the damaged commit; the commit before it stays on the
            // chain all the same, since a current member attested it: only
            // unattested commits after the last attested one are passed by
            // (Spec/format.md §9.3).

            #expect(try dmgTexts(vault) == texts, "\(at)")
            #expect(dmgIssues(vault) == issues, "\(at)")
            do {
                let data = try vault.openAttachment(f.blob).readAll()
                #expect(attachmentError == nil, "\(at): read the attachment")
                #expect(data == f.content, "\(at)")
            } catch {
                #expect(error == attachmentError, "\(at)")
            }
        }
        #expect(flips == Self.flippedBits(of: frame).count)
    }
}
