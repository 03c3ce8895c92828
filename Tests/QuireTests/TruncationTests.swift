import Foundation
import Testing
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireTestSupport

/// A vault whose last two commits are cut at every byte offset.
///
/// Layout (commit groups):
///   0. genesis: keyring, profile, commit
///   1. one entry ("First light.")
///   2. a 70 000-byte attachment (2 chunks) + manifest + an entry referencing it
///   3. three entries in one commit
/// Every cut from the first byte of group 2 up to and including the file end
/// is checked; the work is split over interleaved shards so that Swift Testing
/// runs them in parallel.
struct TruncationFixture {
    let dir = TemporaryDirectory()
    let path: String
    let recovery: RecoveryKey
    let bytes: [UInt8]
    let layout: DmgLayout
    let attachment: [UInt8]
    let blob: BlobID
    /// Texts committed by each group, in `entries()` order.
    let textsByGroup: [[String]]

    static let attachmentByteCount = 70_000

    init() throws {
        let (vault, recovery) = try makeVault(dir, seed: "truncation")
        self.recovery = recovery
        path = dir.file("v.quire")
        try vault.add(dmgBody("First light.", created: 1_700_000_100_000))

        let content = SeededRandom(label: "truncation-attachment").bytes(Self.attachmentByteCount)
        var stored: StoredBlob?
        let ids = SeededRandom(label: "truncation-ids")
        try vault.commit { (tx: VaultTransaction) throws(QuireError) in
            stored = try tx.storeAttachment(from: MemoryByteSource(content), mediaType: "image/png")
            let ref = AttachmentReference(id: [1, 2, 3, 4], blob: stored!.blob, mediaType: "image/png", fileName: "sunrise.png")
            try tx.append(EntryRevision(
                entryID: EntryID(using: ids), revisionID: RevisionID(using: ids), clock: HybridLogicalClock(milliseconds: 1_700_000_200_000, counter: 0),
                body: dmgBody("Sunrise over the bay ☀️", created: 1_700_000_200_000, attachments: [ref])))
        }
        try vault.commit { (tx: VaultTransaction) throws(QuireError) in
            for (i, text) in ["Вечер: чай и книга.", "午饭吃了饺子。", "Walked 12 km 🥾"].enumerated() {
                try tx.append(EntryRevision(
                    entryID: EntryID(using: ids), revisionID: RevisionID(using: ids),
                    clock: HybridLogicalClock(milliseconds: 1_700_000_300_000 + UInt64(i), counter: 0),
                    body: dmgBody(text, created: 1_700_000_300_000 + Int64(i))))
            }
        }
        attachment = content
        blob = stored!.blob
        layout = DmgLayout(vault)
        bytes = dmgRead(path)
        textsByGroup = [[], ["First light."], ["Sunrise over the bay ☀️"], ["Вечер: чай и книга.", "午饭吃了饺子。", "Walked 12 km 🥾"]]
    }
}

@Suite(.tags(.slow), .skippedByMakeCheck) struct TruncationTests {
    static let shardCount = 8

    @Test func fixtureLayoutIsAsDesigned() throws {
        let f = try TruncationFixture()
        #expect(f.layout.groups.count == 4)
        #expect(f.layout.fileSize == UInt64(f.bytes.count))
        // Group 2: two chunks, the manifest, the entry, the commit.
        let kinds2 = f.layout.frames.filter { $0.group == 2 }.map(\.kind)
        #expect(kinds2 == [.blobChunk, .blobChunk, .blobManifest, .entryRevision, .commit])
        let kinds3 = f.layout.frames.filter { $0.group == 3 }.map(\.kind)
        #expect(kinds3 == [.entryRevision, .entryRevision, .entryRevision, .commit])
        #expect(f.layout.groups[3].end == f.layout.fileSize)
        let vault = try dmgOpen(f.path, f.recovery)
        #expect(try dmgTexts(vault) == f.textsByGroup.flatMap { $0 })
        #expect(try vault.openAttachment(f.blob).readAll() == f.attachment)
        #expect(dmgIssues(vault) == [])
    }

    /// Offsets deep inside an attachment chunk's body (more than 64 bytes from
    /// either end of it) all look the same to a reader: a frame whose header
    /// claims more bytes than the file has. Reading is checked at every one of
    /// them; the append-and-reopen step (about 5 ms each in a debug build) only
    /// at every 61st, so that the whole test stays near a minute.
    static func appendIsSampledOut(_ cut: UInt64, _ layout: DmgLayout) -> Bool {
        guard let frame = layout.frame(containing: cut), frame.kind == .blobChunk else { return false }
        let bodyStart = frame.offset + UInt64(FrameHeader.byteCount)
        guard cut > bodyStart + 64 && cut + 64 < frame.end else { return false }
        return (cut - frame.offset) % 61 != 0
    }

    @Test(arguments: 0..<TruncationTests.shardCount)
    func truncationAtEveryOffsetOfTheLastTwoCommits(shard: Int) throws {
        let f = try TruncationFixture()
        let first = f.layout.groups[2].start
        let end = f.layout.fileSize
        let cutPath = f.dir.file("cut-\(shard).quire")
        var checked = 0
        var appended = 0
        // How many bytes of the fixture the file at cutPath holds, when it
        // holds an unmodified prefix: the next cut then only adds bytes.
        var prefix: UInt64? = nil
        var cut = first + UInt64(shard)
        while cut <= end {
            defer { cut += UInt64(Self.shardCount) }
            checked += 1
            if let have = prefix, have <= cut {
                let handle = try #require(FileHandle(forWritingAtPath: cutPath))
                handle.seekToEndOfFile()
                handle.write(f.bytes[Int(have)..<Int(cut)].withUnsafeBytes { Data($0) })
                handle.closeFile()
            } else {
                dmgWrite(cutPath, f.bytes[0..<Int(cut)])
            }
            prefix = cut
            let append = !Self.appendIsSampledOut(cut, f.layout)
            if append {
                appended += 1
                prefix = nil  // the append rewrites the tail
            }
            try check(f, cut: cut, at: cutPath, append: append)
        }
        let span = end - first
        #expect(checked == Int((span - UInt64(shard)) / UInt64(Self.shardCount)) + 1)
        #expect(appended > 250)
    }

    /// Cuts the fixture at `cut`, checks reading, then (when `append`) appends and rereads.
    func check(_ f: TruncationFixture, cut: UInt64, at path: String, append: Bool) throws {
        let complete = f.layout.groups.indices.filter { f.layout.groups[$0].end <= cut }
        let committedEnd = f.layout.groups[complete.last!].end
        let expectedTexts = complete.flatMap { f.textsByGroup[$0] }

        let vault = try dmgOpen(path, f.recovery)
        #expect(try dmgTexts(vault) == expectedTexts, "cut at \(cut)")
        if complete.contains(2) {
            #expect(try vault.openAttachment(f.blob).readAll() == f.attachment, "cut at \(cut)")
        } else {
            #expect(throws: QuireError.attachmentNotFound(f.blob), "cut at \(cut)") { try vault.openAttachment(f.blob) }
        }
        let report = vault.verify()
        let issues = report.issues.map(DmgIssue.init)
        if cut > committedEnd {
            #expect(issues == [DmgIssue("torn_tail", offset: committedEnd, frame: nil, damage: false)], "cut at \(cut)")
        } else {
            #expect(issues == [], "cut at \(cut)")
        }
        #expect(report.isIntact, "cut at \(cut)")
        #expect(report.commitCount == complete.count, "cut at \(cut)")
        #expect(report.fileByteCount == cut, "cut at \(cut)")
        guard append else { return }
        // Reading never writes.
        #expect(dmgRead(path) == Array(f.bytes[0..<Int(cut)]), "cut at \(cut)")

        // Appending cuts the torn tail off and commits after the last commit.
        let note = "Written after a cut at \(cut)"
        try vault.add(dmgBody(note, created: 1_700_000_900_000))
        let reopened = try dmgOpen(path, f.recovery)
        #expect(try dmgTexts(reopened) == expectedTexts + [note], "cut at \(cut)")
        #expect(dmgIssues(reopened) == [], "cut at \(cut)")
        let s = reopened.file.structure
        #expect(s.groups.count == complete.count + 1, "cut at \(cut)")
        // The new commit (one entry frame and the commit frame) starts exactly
        // where the last complete commit ended.
        #expect(s.frames.count >= 2 && s.frames[s.frames.count - 2].location.offset == committedEnd, "cut at \(cut)")
        #expect(s.fileSize == s.committedEnd, "cut at \(cut)")
        if complete.contains(2) {
            #expect(try reopened.openAttachment(f.blob).readAll() == f.attachment, "cut at \(cut)")
        }
    }
}
