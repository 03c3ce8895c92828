import Foundation
@_spi(Crypto) @_spi(Format) import Quire
import QuireSystem
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import Testing

/// Compaction and rekey (`Spec/merge.md §6`).
@Suite struct CompactionTests {
    /// A vault with an entry edited three times, a deleted entry, and an
    /// attachment replaced by another (the first no longer named).
    static func busyVault(_ c: TwoCopies) throws -> (Vault, EntryID) {
        let vault = try c.onLaptop(c.a)
        let edited = try vault.add(EntryBody(created: t0 + 10, text: "draft 1"))
        try vault.edit(edited.entryID, body: EntryBody(created: t0 + 10, text: "draft 2"))
        try vault.edit(edited.entryID, body: EntryBody(created: t0 + 10, text: "final"))
        let gone = try vault.add(EntryBody(created: t0 + 11, text: "to delete"))
        try vault.delete(gone.entryID)
        let photo = c.dir.file("photo.bin")
        try Data(SeededRandom(label: "photo").bytes(150_000)).write(to: URL(fileURLWithPath: photo))
        let other = c.dir.file("other.bin")
        try Data(SeededRandom(label: "other").bytes(70_000)).write(to: URL(fileURLWithPath: other))
        var entry = EntryID(using: SeededRandom(label: "x"))
        try vault.commit { tx in
            let blob = try tx.storeAttachment(fromFile: photo, mediaType: "image/jpeg")
            entry = try tx.add(EntryBody(created: t0 + 12, text: "with photo", attachments: [AttachmentReference(id: [1], blob: blob.blob)])).entryID
        }
        try vault.commit { tx in
            let blob = try tx.storeAttachment(fromFile: other, mediaType: "image/jpeg")
            // A revision's clock is past its parents' (the rule compaction's
            // "greatest clock stays" relies on).
            let parents = try vault.revisions(of: entry)
            let clock = HybridLogicalClock(milliseconds: parents.map(\.clock.milliseconds).max()! + 1, counter: 0)
            _ = try tx.append(EntryRevision(entryID: entry, revisionID: RevisionID(using: SystemRandom()), parents: parents.map(\.revisionID),
                                            clock: clock, device: vault.author,
                                            body: EntryBody(created: t0 + 12, text: "with another photo", attachments: [AttachmentReference(id: [2], blob: blob.blob)])))
        }
        return (vault, entry)
    }

    /// Fourth review, Part 3: compaction wrote keyrings in file order of
    /// first intact copies. A keyless writer that puts a copy of a child
    /// (here the rotation's keyring, child of the enrollment's) in a junk
    /// commit before its parent made compaction write the child first in
    /// commit 1, where merge's readiness ("a parent earlier in the same
    /// block") never holds. Now compaction writes keyrings in topological
    /// order, file order among those ready (`Spec/merge.md §6`).
    @Test func attackEarlyChildCopyPutsAKeyringBeforeItsParent() throws {
        let c = try TwoCopies("keyring order")
        let vault = try c.onLaptop(c.a)
        try vault.rotateKeys(now: t0 + 3)
        var s = try VaultFile(path: c.a).structure
        let rings = s.frames[0..<s.committedFrameCount].filter { $0.header.kind == .keyring }
        let child = try #require(rings.last)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: c.a)))
        let childFrame = Array(bytes[Int(child.location.offset)..<Int(child.end)])
        let junk = FrameHeader(kind: .commit, flags: 0, keyID: child.header.keyID, bodyLength: UInt32(CommitChain.bodyByteCount)).encoded()
            + [UInt8](repeating: 0x33, count: CommitChain.bodyByteCount)
        let afterRoot = Int(s.frames[s.groups[0].commitFrame].end)
        bytes.insert(contentsOf: childFrame + junk, at: afterRoot)
        try Data(bytes).write(to: URL(fileURLWithPath: c.a))

        _ = try Compaction.compact(
            vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(dropUnverified: true), now: t0 + 100, writeOptions: fast)
        s = try VaultFile(path: c.a).structure
        var seen = Set<KeyringID>()
        var order: [KeyringID] = []
        for f in s.frames[0..<s.committedFrameCount] where f.header.kind == .keyring {
            let record = try KeyringRecord(body: try #require(f.plaintextBody), location: f.location)
            let id = KeyringID(unchecked: f.trailer)
            guard seen.insert(id).inserted else { continue }
            #expect(record.publicPart.parents.allSatisfy { order.contains($0) }, "a keyring before its parent at \(f.location)")
            order.append(id)
        }
        #expect(order.count == 3)
        #expect(try c.onLaptop(c.a).verify().issues.isEmpty)
    }

    @Test func keepsHeadsAndLiveAttachments() throws {
        let c = try TwoCopies("compact")
        let (vault, photoEntry) = try Self.busyVault(c)
        let before = try vault.entries().map { "\($0.body.text)\($0.isDeleted ? " (deleted)" : "")" }.sorted()
        let phoneBefore = try texts(c.a, .device(c.phone.keyPair))
        let report = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), now: t0 + 100, writeOptions: fast)
        #expect(report.revisionsBefore == 8 && report.revisionsAfter == 4)
        #expect(report.attachmentsKept == 1 && report.attachmentsDropped == 1)
        #expect(report.bytesAfter < report.bytesBefore)
        #expect(report.rekeyedEpoch == nil)
        let after = try c.onLaptop(c.a)
        #expect(try after.entries().map { "\($0.body.text)\($0.isDeleted ? " (deleted)" : "")" }.sorted() == before)
        #expect(try after.revisions(of: photoEntry).count == 1)
        let blob = try #require(try after.entry(photoEntry)?.body.attachments.first?.blob)
        #expect(try after.openAttachment(blob).readAll() == SeededRandom(label: "other").bytes(70_000))
        #expect(after.verify().issues.isEmpty)
        #expect(try texts(c.a, .device(c.phone.keyPair)) == phoneBefore)
        // Compacting again keeps the same content.
        let again = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), now: t0 + 100, writeOptions: fast)
        #expect(again.revisionsBefore == 4 && again.revisionsAfter == 4)
    }

    @Test func historyAndTombstoneHorizon() throws {
        let c = try TwoCopies("history")
        _ = try Self.busyVault(c)
        let report = try Compaction.compact(
            vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(keepHistory: 1, tombstoneHorizonMilliseconds: 50),
            now: ProcessStats.wallClockMilliseconds() + 10_000, writeOptions: fast)
        // "final" keeps "draft 2"; the photo entry keeps its first revision; the
        // tombstone (its clock is the wall clock when it was written) is older
        // than the horizon: that entry keeps its tombstone and no history.
        #expect(report.revisionsAfter == 6)
        let vault = try c.onLaptop(c.a)
        #expect(try vault.entries().map(\.body.text).sorted() == ["final", "shared", "with another photo"])
    }

    /// The lost-phone scenario finished: after a rekey, the removed phone
    /// opens its old keyrings but reads nothing; every enrolled key reads all.
    @Test func rekeyLocksOutARemovedDevice() throws {
        let c = try TwoCopies("rekey")
        let vault = try c.onLaptop(c.a)
        try c.onPhone(c.a).add(EntryBody(created: t0 + 5, text: "from the phone"))
        try vault.reload()
        try vault.removeDevice(named: "Phone", now: t0 + 10)
        try vault.add(EntryBody(created: t0 + 11, text: "after"))
        #expect(try texts(c.a, .device(c.phone.keyPair)) == ["from the phone", "shared"])
        let report = try Compaction.compact(
            vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(rekey: true), now: t0 + 20, writeOptions: fast)
        #expect(report.rekeyedEpoch == 3)
        #expect(try texts(c.a, .device(c.phone.keyPair)).isEmpty)
        for credential: Credential in [.device(c.laptop.keyPair), .recoveryKey(c.recovery)] {
            #expect(try texts(c.a, credential) == ["after", "from the phone", "shared"])
        }
        let after = try c.onLaptop(c.a)
        #expect(after.verify().issues.isEmpty)
        let statement = try after.privacyStatement().text
        #expect(statement.contains("Records already in the file:\n  - 3 entry revisions in epoch 3: the same keys as new records.\n"))
        #expect(!statement.contains("Phone"))
    }

    /// An old copy (before a rekey, with an entry and a photo of its own)
    /// merged into the rekeyed vault is sealed again under the new key; merging
    /// the same copy again finds its replacements and writes nothing, and
    /// folding keeps no copy whose content is held re-sealed
    /// (`Spec/merge.md §3.4, §4`).
    @Test func mergingAnOldCopyAgainAfterARekeyWritesNothing() throws {
        let c = try TwoCopies("reseal twice")
        let phone = try c.onPhone(c.b)
        try phone.add(EntryBody(created: t0 + 5, text: "on the old copy"))
        let photo = c.dir.file("p.bin")
        try Data(SeededRandom(label: "old photo").bytes(90_000)).write(to: URL(fileURLWithPath: photo))
        try phone.commit { tx in
            let blob = try tx.storeAttachment(fromFile: photo, mediaType: "image/jpeg")
            _ = try tx.add(EntryBody(created: t0 + 6, text: "old photo", attachments: [AttachmentReference(id: [1], blob: blob.blob)]))
        }
        let old = bytes(c.b)
        _ = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(rekey: true), now: t0 + 20, writeOptions: fast)
        let first = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(first.changed && first.framesResealed == 3)
        let merged = bytes(c.a)
        let second = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(!second.changed && second.framesAdded == 0)
        #expect(bytes(c.a) == merged)
        let vault = try c.onLaptop(c.a)
        #expect(try vault.entries().map(\.body.text).sorted() == ["old photo", "on the old copy", "shared"])
        let entry = try #require(try vault.entries().first { $0.body.text == "old photo" })
        #expect(try vault.openAttachment(entry.body.attachments[0].blob).readAll() == SeededRandom(label: "old photo").bytes(90_000))
        // No frame of the result is sealed under the old epoch's key.
        let file = try VaultFile(path: c.a)
        let keyIDs = Set(file.structure.frames.filter { $0.header.isSealed && $0.header.kind != .keyring }.map(\.header.keyID))
        #expect(keyIDs.count == 1)
        // Folding: the copy's content is all held, re-sealed; the copy goes.
        #expect(bytes(c.b) == old)
        let fold = try ConflictCopies.fold(into: c.a, credential: .device(c.laptop.keyPair), options: fast)
        #expect(fold.copies.map(\.deleted) == [true])
        #expect(bytes(c.a) == merged)
    }

    /// Two devices rekey concurrently and each attaches the same photo
    /// again, which deduplicates to its own new blob id; after a merge and a
    /// rekey the vault holds two manifests with one blob id and different
    /// aliases. Compaction keeps what every kept reference resolves to
    /// (`Spec/merge.md §6`, `records.md §4`), so both photos still open.
    @Test func keepsEveryManifestAReferenceResolvesTo() throws {
        let c = try TwoCopies("aliases")
        let photo = c.dir.file("p.bin")
        let content = SeededRandom(label: "alias photo").bytes(5_000)
        try Data(content).write(to: URL(fileURLWithPath: photo))
        func attach(_ v: Vault, _ text: String) throws {
            try v.commit { tx in
                let blob = try tx.storeAttachment(fromFile: photo, mediaType: "image/jpeg")
                _ = try tx.add(EntryBody(created: t0 + 5, text: text, attachments: [AttachmentReference(id: [1], blob: blob.blob)]))
            }
        }
        try attach(try c.onLaptop(c.a), "first")
        try FileManager.default.removeItem(atPath: c.b)
        copy(c.a, c.b)
        _ = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(rekey: true), now: t0 + 10, writeOptions: fast)
        _ = try Compaction.compact(vaultAt: c.b, credential: .device(c.phone.keyPair), options: CompactionOptions(rekey: true), now: t0 + 10, writeOptions: fast)
        try attach(try c.onLaptop(c.a), "again on the laptop")
        try attach(try c.onPhone(c.b), "again on the phone")
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        _ = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(rekey: true), now: t0 + 20, writeOptions: fast)
        for rekey in [false, true] {
            _ = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(rekey: rekey), now: t0 + 30, writeOptions: fast)
            let v = try c.onLaptop(c.a)
            let photos = try v.entries().filter { !$0.body.attachments.isEmpty }
            #expect(photos.map(\.body.text).sorted() == ["again on the laptop", "again on the phone", "first"])
            for e in photos {
                #expect((try? v.openAttachment(e.body.attachments[0].blob).readAll()) == content, "\(e.body.text), rekey \(rekey)")
            }
            #expect(v.verify().issues.isEmpty)
        }
    }

    /// A manifest below the rekey whose blob id the other side's re-stored
    /// manifest answers to, but not its alias, is not yet held re-sealed:
    /// superseding it would leave a revision naming that alias without its
    /// attachment (`Spec/merge.md §3.4`: a replacement holds what re-sealing
    /// would write — the old blob id and the old aliases).
    @Test func aReplacementMustAnswerEveryIdOfTheManifest() throws {
        let c = try TwoCopies("replacement aliases")
        let photo = c.dir.file("p.bin")
        let content = SeededRandom(label: "replacement photo").bytes(3_000)
        try Data(content).write(to: URL(fileURLWithPath: photo))
        let laptop = try c.onLaptop(c.a)
        var entry: EntryID?
        var first: BlobID?
        try laptop.commit { tx in
            let blob = try tx.storeAttachment(fromFile: photo, mediaType: "image/jpeg")
            first = blob.blob
            entry = try tx.add(EntryBody(created: t0 + 5, text: "photo", attachments: [AttachmentReference(id: [1], blob: blob.blob)])).entryID
        }
        try FileManager.default.removeItem(atPath: c.b)
        copy(c.a, c.b)
        // The laptop drops the photo and rekeys (its old manifest goes), then
        // attaches the same photo again: a new manifest, no alias.
        try laptop.edit(entry!, body: EntryBody(created: t0 + 5, text: "no photo"))
        _ = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(rekey: true), now: t0 + 10, writeOptions: fast)
        try c.onLaptop(c.a).commit { tx in
            let blob = try tx.storeAttachment(fromFile: photo, mediaType: "image/jpeg")
            _ = try tx.add(EntryBody(created: t0 + 11, text: "photo again", attachments: [AttachmentReference(id: [1], blob: blob.blob)]))
        }
        // The phone takes that in: its old manifest is sealed again under the
        // rekey, with the first blob id as an alias; it names the photo by it.
        _ = try VaultMerge.merge(vaultAt: c.b, copyAt: c.a, credential: .device(c.phone.keyPair), options: fast)
        try c.onPhone(c.b).edit(entry!, body: EntryBody(created: t0 + 5, text: "photo back", attachments: [AttachmentReference(id: [1], blob: first!)]))
        // The laptop rekeys again, and the phone takes that in.
        _ = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(rekey: true), now: t0 + 20, writeOptions: fast)
        _ = try VaultMerge.merge(vaultAt: c.b, copyAt: c.a, credential: .device(c.phone.keyPair), options: fast)
        let v = try c.onPhone(c.b)
        #expect(try v.entries().map(\.body.text).sorted() == ["photo again", "photo back", "shared"])
        for e in try v.entries() where !e.body.attachments.isEmpty {
            #expect((try? v.openAttachment(e.body.attachments[0].blob).readAll()) == content, "\(e.body.text)")
        }
        #expect(v.verify().issues.isEmpty)
        let again = try VaultMerge.merge(vaultAt: c.b, copyAt: c.a, credential: .device(c.phone.keyPair), options: fast)
        #expect(!again.changed)
    }

    @Test func aDamagedVaultIsNotCompacted() throws {
        let c = try TwoCopies("damaged")
        let vault = try c.onLaptop(c.a)
        try vault.add(EntryBody(created: t0 + 10, text: "one"))
        try vault.add(EntryBody(created: t0 + 11, text: "two"))
        let file = try VaultFile(path: c.a)
        let target = try #require(file.structure.frames.last { $0.header.kind == .entryRevision })
        var raw = bytes(c.a)
        raw[Int(target.bodyOffset) + 30] ^= 0x01
        try Data(raw).write(to: URL(fileURLWithPath: c.a))
        #expect(throws: SyncError.self) {
            try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), now: t0 + 20, writeOptions: fast)
        }
        #expect(bytes(c.a) == raw)
    }

    /// Trial 28: one flipped bit in a commit's stored previous head is
    /// repaired by every reader (`Spec/format.md §9.3` step 2: the head
    /// verifies from the commit before it, `frame_repaired`, nothing is
    /// lost), and `verify` calls the vault intact; compaction took the
    /// warning for a commit that does not verify and refused, for ever
    /// (a rekey after a removal too). It compacts now, losing nothing.
    @Test func aRepairedPreviousHeadDoesNotStopCompaction() throws {
        let c = try TwoCopies("previous head")
        let vault = try c.onLaptop(c.a)
        try vault.add(EntryBody(created: t0 + 10, text: "one"))
        try vault.add(EntryBody(created: t0 + 11, text: "two"))
        let commits = try VaultFile(path: c.a).structure.frames.filter { $0.header.kind == .commit }
        let target = commits[commits.count - 2]
        var raw = bytes(c.a)
        raw[Int(target.bodyOffset) + 40] ^= 0x01  // the stored previous head: body[32..<64]
        try Data(raw).write(to: URL(fileURLWithPath: c.a))
        #expect(try c.onLaptop(c.a).verify().issues.map(\.code) == ["frame_repaired"])
        let report = try Compaction.compact(
            vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(rekey: true), now: t0 + 20, writeOptions: fast)
        #expect(report.dropped.isEmpty)
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["one", "shared", "two"])
        #expect(try c.onLaptop(c.a).verify().issues.isEmpty)
    }

    /// Trial 28: a frame whose header had one flipped bit is read with the
    /// header corrected (`Spec/format.md §10.2`, `frame_repaired`), but
    /// compaction and merge carried its bytes as stored: the damaged
    /// header did not pass the writer's check, so the compaction failed
    /// ("the merged file did not verify"), and so did every merge that
    /// carried the frame, in both directions. They carry it with its
    /// corrected header now (`Spec/merge.md §1`: a frame's identity is its
    /// header as corrected), and the result needs no repair.
    @Test func aFrameWithARepairedHeaderIsCarriedCorrected() throws {
        let c = try TwoCopies("repaired header")
        try c.onPhone(c.b).add(EntryBody(created: t0 + 10, text: "from the phone"))
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 11, text: "from the laptop"))
        let target = try #require(try VaultFile(path: c.b).structure.frames.last { $0.header.kind == .entryRevision })
        var raw = bytes(c.b)
        raw[Int(target.location.offset) + 4] ^= 0x01  // a bit of the key id
        try Data(raw).write(to: URL(fileURLWithPath: c.b))
        #expect(try c.onPhone(c.b).verify().issues.map(\.code) == ["frame_repaired"])

        let merged = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(merged.changed)
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["from the laptop", "from the phone", "shared"])
        #expect(try c.onLaptop(c.a).verify().issues.isEmpty)

        _ = try Compaction.compact(vaultAt: c.b, credential: .device(c.phone.keyPair), now: t0 + 20, writeOptions: fast)
        #expect(try texts(c.b, .device(c.phone.keyPair)) == ["from the phone", "shared"])
        #expect(try c.onPhone(c.b).verify().issues.isEmpty)
    }

    /// Trial 28: when the vault's committed bytes are the common prefix, a
    /// merge writes the copy's bytes (`Spec/merge.md §3.3`), and copied the
    /// copy's damaged (repaired) frame header into the vault as stored. It
    /// writes the header as corrected, as every other result does: the
    /// vault then needs no repair, and is otherwise the copy's bytes.
    @Test func aMergeThatWritesTheCopysBytesCorrectsARepairedHeader() throws {
        let c = try TwoCopies("repaired header, prefix")
        try c.onPhone(c.b).add(EntryBody(created: t0 + 10, text: "from the phone"))
        let target = try #require(try VaultFile(path: c.b).structure.frames.last { $0.header.kind == .entryRevision })
        var raw = bytes(c.b)
        raw[Int(target.location.offset) + 4] ^= 0x01  // a bit of the key id
        try Data(raw).write(to: URL(fileURLWithPath: c.b))
        #expect(try c.onPhone(c.b).verify().issues.map(\.code) == ["frame_repaired"])
        let vaultLength = UInt64(bytes(c.a).count)

        let merged = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(merged.changed)
        #expect(merged.commonPrefixByteCount == vaultLength)  // the copy's bytes path
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["from the phone", "shared"])
        #expect(try c.onLaptop(c.a).verify().issues.isEmpty)
        var corrected = raw
        corrected[Int(target.location.offset) + 4] ^= 0x01
        #expect(bytes(c.a) == corrected)
    }
}

/// A record that authenticates but breaks its kind's schema is not carried
/// by a merge (`Spec/merge.md §3.2`): readers do not release it, so the
/// result must not commit it again; it is reported as left out.
@Suite struct MergeSchemaTests {
    @Test func aRecordThatBreaksItsSchemaIsLeftOut() throws {
        let c = try TwoCopies("schema")
        let phone = try c.onPhone(c.b)
        try phone.add(EntryBody(created: t0 + 5, text: "good"))
        let file = try VaultFile(path: c.b, writable: true)
        let unlocked = try KeyringEvaluator.unlock(file, with: .device(c.phone.keyPair))
        file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
        try file.commit(options: fast, attestWith: c.phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
            // A map with one key and no value: not CBOR.
            _ = try tx.appendSealed(kind: .entryRevision, payload: [0xa1, 0x61, 0x78], compress: false)
        }
        let report = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(report.leftOut.map(\.code) == ["malformed_record"])
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["good", "shared"])
        #expect(try c.onLaptop(c.a).verify().issues.isEmpty)
    }
}
