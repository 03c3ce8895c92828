import Foundation
@_spi(Testing) @_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// `Vault.refresh()` (issue 13, need 1): what another handle wrote, said
/// exactly as a change set, whether it appended or replaced the file.
@Suite struct RefreshTests {
    /// A vault with three entries, and a second handle on it.
    static func setUp(_ dir: TemporaryDirectory) throws -> (writer: Vault, recovery: RecoveryKey, ids: [EntryID], revisions: [RevisionID]) {
        let (vault, recovery) = try makeVault(dir)
        var ids: [EntryID] = [], revisions: [RevisionID] = []
        for i in 0..<3 {
            let r = try vault.add(EntryBody(created: 1_700_000_000_000 + Int64(i), text: "entry \(i)"))
            ids.append(r.entryID)
            revisions.append(r.revisionID)
        }
        return (vault, recovery, ids, revisions)
    }

    static func open(_ dir: TemporaryDirectory, _ recovery: RecoveryKey, name: String = "v.quire") throws -> Vault {
        try Vault.open(at: dir.file(name), credential: .recoveryKey(recovery), options: fast)
    }

    static func live(_ r: EntryRevision, conflicts: [RevisionID] = []) -> EntryChange.State {
        EntryChange.State(winner: r.revisionID, isDeleted: r.isDeleted, conflictingHeads: conflicts)
    }

    @Test func nothingChangedIsEmpty() throws {
        let dir = TemporaryDirectory()
        let (_, recovery, _, _) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        #expect(try reader.refresh().isEmpty)
        #expect(try reader.refresh().isEmpty)
    }

    @Test func anotherHandleAppendsOneEntry() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, _, _) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        #expect(try reader.entries().count == 3)
        let added = try writer.add(EntryBody(created: 1_800_000_000_000, text: "new"))
        let changes = try reader.refresh()
        #expect(changes == VaultChangeSet(entries: [EntryChange(id: added.entryID, before: nil, after: Self.live(added))]))
        #expect(changes.ids(.added) == [added.entryID])
        #expect(!changes.fileReplaced)
        #expect(try reader.entry(added.entryID)?.body.text == "new")
        #expect(try reader.entries().count == 4)
        // Said once.
        #expect(try reader.refresh().isEmpty)
    }

    /// The verdicts refresh appends for new commits are those a full
    /// verification of the file gives (`Spec/format.md §9.3`).
    @Test func appendedVerdictsMatchAFullVerification() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, ids, _) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        #expect(try reader.refresh().isEmpty)
        try writer.add(EntryBody(created: 1, text: "one"))
        try writer.commit { tx in
            try tx.add(EntryBody(created: 2, text: "two"))
            try tx.add(EntryBody(created: 3, text: "three"))
        }
        try writer.delete(ids[0])
        #expect(try reader.refresh().entries.count == 4)
        let fresh = try Self.open(dir, recovery)
        let (a, b) = (reader.file.commits, fresh.file.commits)
        #expect(a.statuses == b.statuses && a.statuses.allSatisfy { $0 == .verified })
        #expect(a.attestations == b.attestations)
        #expect(a.tipHead == b.tipHead && a.computedHeads == b.computedHeads && a.previousHeads == b.previousHeads)
        #expect(a.floors == b.floors && a.epochs == b.epochs && a.currentFloor == b.currentFloor)
        // The reader writes on the tip the others reached.
        let mine = try reader.add(EntryBody(created: 4, text: "mine"))
        #expect(try Self.open(dir, recovery).file.commits.allVerified)
        #expect(try fresh.refresh().ids(.added) == [mine.entryID])
    }

    @Test func theFirstRefreshReportsWhatChangedSinceOpening() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, _, _) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        let added = try writer.add(EntryBody(created: 1_800_000_000_000, text: "new"))
        #expect(try reader.refresh() == VaultChangeSet(entries: [EntryChange(id: added.entryID, before: nil, after: Self.live(added))]))
    }

    @Test func editAndDelete() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, ids, revisions) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        #expect(try reader.refresh().isEmpty)
        let edited = try writer.edit(ids[0], body: EntryBody(created: 1_700_000_000_000, text: "edited"))
        var changes = try reader.refresh()
        #expect(changes == VaultChangeSet(entries: [
            EntryChange(id: ids[0], before: EntryChange.State(winner: revisions[0], isDeleted: false), after: Self.live(edited)),
        ]))
        #expect(changes.entries.first?.kind == .changed)
        #expect(changes.entries.first?.conflict == nil)
        let tombstone = try writer.delete(ids[1])
        changes = try reader.refresh()
        #expect(changes == VaultChangeSet(entries: [
            EntryChange(id: ids[1], before: EntryChange.State(winner: revisions[1], isDeleted: false), after: Self.live(tombstone)),
        ]))
        #expect(changes.ids(.deleted) == [ids[1]])
        #expect(try reader.entries().count == 2)
    }

    @Test func aConflictAppearsThenIsResolved() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, ids, revisions) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        let second = try Self.open(dir, recovery)
        #expect(try reader.refresh().isEmpty)
        // Two handles edit the same entry from the same base.
        let a = try writer.edit(ids[2], body: EntryBody(created: 1, text: "mine"), replacing: [revisions[2]])
        let b = try second.edit(ids[2], body: EntryBody(created: 1, text: "theirs"), replacing: [revisions[2]])
        let ordered = [a, b].sorted { x, y in x.clock != y.clock ? x.clock > y.clock : y.revisionID < x.revisionID }
        var changes = try reader.refresh()
        let conflicted = Self.live(ordered[0], conflicts: [ordered[1].revisionID])
        #expect(changes == VaultChangeSet(entries: [
            EntryChange(id: ids[2], before: EntryChange.State(winner: revisions[2], isDeleted: false), after: conflicted),
        ]))
        #expect(changes.conflictsAppeared == [ids[2]])
        // The writer edits again, naming both heads: resolved.
        let merged = try writer.edit(ids[2], body: EntryBody(created: 1, text: "both"))
        #expect(Set(merged.parents) == Set([a.revisionID, b.revisionID]))
        changes = try reader.refresh()
        #expect(changes == VaultChangeSet(entries: [EntryChange(id: ids[2], before: conflicted, after: Self.live(merged))]))
        #expect(changes.conflictsResolved == [ids[2]])
        #expect(changes.entries.first?.kind == .changed)
    }

    /// A compaction by another handle renames a new file over the path: the
    /// change set is the one the appends themselves gave a reader.
    @Test func aCompactionGivesTheSameChangeSetAsTheAppends() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, ids, _) = try Self.setUp(dir)
        let appendReader = try Self.open(dir, recovery)
        let compactReader = try Self.open(dir, recovery)
        #expect(try appendReader.refresh().isEmpty)
        #expect(try compactReader.refresh().isEmpty)
        let catalog = try compactReader.entryCatalog { _ in true }
        try writer.add(EntryBody(created: 1_800_000_000_000, text: "new"))
        try writer.edit(ids[0], body: EntryBody(created: 1, text: "edited"))
        try writer.delete(ids[1])
        let appended = try appendReader.refresh()
        #expect(appended.entries.count == 3)
        #expect(!appended.fileReplaced)
        _ = try writer.compact(now: ProcessStats.wallClockMilliseconds())
        let compacted = try compactReader.refresh()
        #expect(compacted.fileReplaced)
        #expect(compacted.entries == appended.entries)
        #expect(compacted.keys == nil && compacted.unreadRecords.isEmpty && compacted.uncommittedTail == nil && !compacted.profileChanged)
        // Both readers agree, and a catalog made before still reads its rows.
        #expect(try compactReader.entries().map(\.revision.revisionID) == appendReader.entries().map(\.revision.revisionID))
        #expect(catalog.map(\.body.text) == ["entry 0", "entry 1", "entry 2"])
        #expect(catalog.readError == nil)
        // The appended reader sees the replacement, and nothing else changed.
        let after = try appendReader.refresh()
        #expect(after.entries.isEmpty && after.fileReplaced)
    }

    /// A catalog read on one thread while an observer's refresh extends
    /// the same file on another: every row is its entry (and, under
    /// ThreadSanitizer, no race on the file's structure).
    @Test func aCatalogReadsWhileAnotherThreadRefreshes() async throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, _, _) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        let catalog = try reader.entryCatalog { _ in true }
        let done = Flag()
        let refreshing = Task.detached {
            defer { done.set() }
            var added = 0
            for i in 0..<20 {
                try writer.add(EntryBody(created: 1_800_000_000_000 + Int64(i), text: "more \(i)"))
                added += try reader.refresh().ids(.added).count
            }
            return added
        }
        // Read rows for as long as the other task appends and refreshes.
        var rows = 0
        while !done.isSet || rows < 600 {
            for row in catalog { #expect(row.body.text.hasPrefix("entry ")); rows += 1 }
        }
        #expect(try await refreshing.value == 20)
        #expect(catalog.readError == nil)
    }

    /// A sync tool writes the other device's copy beside the vault and
    /// renames it over the path.
    @Test func aRenameReplaceAsASyncToolDoes() throws {
        let dir = TemporaryDirectory()
        let (_, recovery, ids, revisions) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        #expect(try reader.refresh().isEmpty)
        try FileManager.default.copyItem(atPath: dir.file("v.quire"), toPath: dir.file("incoming.quire"))
        let elsewhere = try Self.open(dir, recovery, name: "incoming.quire")
        let added = try elsewhere.add(EntryBody(created: 1_800_000_000_000, text: "from the phone"))
        let edited = try elsewhere.edit(ids[1], body: EntryBody(created: 1, text: "edited on the phone"))
        #expect(rename(dir.file("incoming.quire"), dir.file("v.quire")) == 0)
        let changes = try reader.refresh()
        #expect(changes.fileReplaced)
        #expect(changes.entries == VaultChangeSet(entries: [
            EntryChange(id: added.entryID, before: nil, after: Self.live(added)),
            EntryChange(id: ids[1], before: EntryChange.State(winner: revisions[1], isDeleted: false), after: Self.live(edited)),
        ]).entries)
        #expect(changes.keys == nil && changes.unreadRecords.isEmpty)
        #expect(try reader.entry(added.entryID)?.body.text == "from the phone")
        // The reader writes on the new file.
        let mine = try reader.add(EntryBody(created: 2, text: "mine"))
        #expect(try Self.open(dir, recovery).entry(mine.entryID) != nil)
        #expect(try reader.refresh().isEmpty)
    }

    /// A sync tool's rename of a copy that only grew: the reader switches
    /// to the new file and reads only its tail (the iOS review's finding:
    /// this is how another device's change usually arrives), and the change
    /// set is exactly the one reading the whole new file gives.
    @Test func aReplacementThatOnlyGrewIsReadFromItsTail() throws {
        let dir = TemporaryDirectory()
        let (_, recovery, ids, _) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        // Revisions this handle wrote are hashed only if needed (merge.md §5):
        // a full read of the file would hash them, a tail read does not.
        #expect(try reader.refresh().isEmpty)
        for i in 0..<5 { try reader.add(EntryBody(created: 1_750_000_000_000 + Int64(i), text: "own \(i)")) }
        #expect(try reader.refresh().isEmpty)
        #expect(reader.payloadHashCount == 3)
        let full = try Self.open(dir, recovery)
        #expect(try full.refresh().isEmpty)
        let hashed = reader.payloadHashCount
        try FileManager.default.copyItem(atPath: dir.file("v.quire"), toPath: dir.file("incoming.quire"))
        let elsewhere = try Self.open(dir, recovery, name: "incoming.quire")
        let added = try elsewhere.add(EntryBody(created: 1_800_000_000_000, text: "from the phone"))
        let edited = try elsewhere.edit(ids[1], body: EntryBody(created: 1, text: "edited on the phone"))
        let deleted = try elsewhere.delete(ids[2])
        #expect(rename(dir.file("incoming.quire"), dir.file("v.quire")) == 0)
        let changes = try reader.refresh()
        #expect(changes.fileReplaced)
        #expect(reader.payloadHashCount == hashed + 3)
        // The full path: open the new file whole and compare every entry.
        try full.reload()
        let expected = try full.refresh()
        #expect(expected.fileReplaced)
        func sorted(_ c: VaultChangeSet) -> [String] { c.entries.map { "\($0)" }.sorted() }
        #expect(sorted(changes) == sorted(expected))
        #expect(changes.entries.count == 3)
        #expect(changes.keys == expected.keys && changes.profileChanged == expected.profileChanged)
        #expect(changes.unreadRecords == expected.unreadRecords && changes.uncommittedTail == expected.uncommittedTail)
        #expect(try reader.entry(added.entryID)?.body.text == "from the phone")
        #expect(try reader.entry(ids[1])?.revision.revisionID == edited.revisionID)
        #expect(try reader.entry(ids[2])?.revision.revisionID == deleted.revisionID)
        #expect(try reader.entries().map(\.id) == (try full.entries().map(\.id)))
        // The reader writes on the new file, and another replacement that
        // does not extend it (another history) is read whole.
        let mine = try reader.add(EntryBody(created: 2, text: "mine"))
        #expect(try Self.open(dir, recovery).entry(mine.entryID) != nil)
        #expect(try reader.refresh().isEmpty)
    }

    /// An older copy put back over the vault: entries it lacks are removed.
    @Test func aFileCutBackSaysWhatIsGone() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, _, _) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        let old = dmgRead(dir.file("v.quire"))
        let added = try writer.add(EntryBody(created: 1_800_000_000_000, text: "new"))
        #expect(try reader.refresh().ids(.added) == [added.entryID])
        // Cut back in place (same inode): the file is shorter than the
        // committed end the reader knows.
        let handle = try #require(FileHandle(forWritingAtPath: dir.file("v.quire")))
        try handle.truncate(atOffset: UInt64(old.count))
        try handle.close()
        let changes = try reader.refresh()
        #expect(changes.fileReplaced)
        #expect(changes.entries == [EntryChange(id: added.entryID, before: Self.live(added), after: nil)])
        #expect(changes.entries.first?.kind == .removed)
    }

    /// A commit still being written (or torn) is said as an uncommitted
    /// tail, then read when its commit frame lands.
    @Test func aTruncatedTailIsSaidNotDropped() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, _, _) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        #expect(try reader.refresh().isEmpty)
        let path = dir.file("v.quire")
        let before = dmgRead(path)
        let added = try writer.add(EntryBody(created: 1_800_000_000_000, text: "half written"))
        let whole = dmgRead(path)
        // Only the record frame and part of the commit frame have landed.
        dmgWrite(path, whole[0..<(whole.count - 40)])
        var changes = try reader.refresh()
        #expect(changes.entries.isEmpty)
        #expect(changes.uncommittedTail == UncommittedTail(offset: UInt64(before.count), byteCount: UInt64(whole.count - 40 - before.count)))
        #expect(try reader.refresh().isEmpty)
        // The rest lands.
        dmgWrite(path, whole)
        changes = try reader.refresh()
        #expect(changes == VaultChangeSet(entries: [EntryChange(id: added.entryID, before: nil, after: Self.live(added))]))
    }

    /// A record damaged inside a commit that verifies: said as unread.
    @Test func aDamagedRecordIsSaidNotDropped() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, _, _) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        #expect(try reader.refresh().isEmpty)
        let path = dir.file("v.quire")
        let kept = try writer.add(EntryBody(created: 1_800_000_000_000, text: "fine"))
        try writer.add(EntryBody(created: 1_800_000_000_001, text: "to be damaged"))
        let frame = try #require(writer.file.structure.frames.last { $0.header.kind == .entryRevision })
        var bytes = dmgRead(path)
        bytes[Int(frame.bodyOffset) + 30] ^= 0x40
        dmgWrite(path, bytes)
        let changes = try reader.refresh()
        #expect(changes.entries == [EntryChange(id: kept.entryID, before: nil, after: Self.live(kept))])
        #expect(changes.unreadRecords.map(\.code) == ["authentication_failed"])
        #expect(changes.unreadRecords.first?.offset == frame.location.offset)
        #expect(!changes.fileReplaced)
        #expect(try reader.unreadRecords().count == 1)
        // Said once.
        #expect(try reader.refresh().isEmpty)
    }

    /// A commit whose attestation was damaged: the head covers it (sixth
    /// review R6-1), so the commit no longer verifies; its entry is shown,
    /// and the commit is said, as `unreadRecords()` says it.
    @Test func aDamagedAttestationIsSaid() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, _, _) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        #expect(try reader.refresh().isEmpty)
        let path = dir.file("v.quire")
        let added = try writer.add(EntryBody(created: 1_800_000_000_000, text: "attested?"))
        let structure = writer.file.structure
        let commit = structure.frames[try #require(structure.groups.last).commitFrame]
        let record = try #require(structure.frames.last { $0.header.kind == .entryRevision })
        var bytes = dmgRead(path)
        bytes[Int(commit.location.offset) + FrameHeader.byteCount + 2 * CommitChain.headByteCount + 24 + 10] ^= 0x01
        dmgWrite(path, bytes)
        let changes = try reader.refresh()
        #expect(changes.entries == [EntryChange(id: added.entryID, before: nil, after: Self.live(added))])
        #expect(changes.unreadRecords.map(\.code) == ["commit_mismatch"])
        #expect(changes.unreadRecords.first?.frameIndex == commit.location.index)
        #expect(record.location.index < commit.location.index)
        #expect(!changes.fileReplaced)
        #expect(try reader.unreadRecords().records == changes.unreadRecords)
        #expect(try reader.entry(added.entryID)?.isAttested == false)
    }

    @Test func aDeviceAddedThenRemoved() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("v.quire")
        let (laptop, phone) = try EntryLifecycleTests.laptopAndPhone(at: path, seed: "refresh keys")
        let onPhone = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        #expect(try onPhone.refresh().isEmpty)
        let before = try onPhone.keyState()
        let tablet = KeyScenarioTests.device("Tablet")
        let member = try laptop.enrollDevice(code: tablet.code, name: "Tablet", now: KeyTestSupport.t0 + 2)
        var changes = try onPhone.refresh()
        let added = try #require(changes.keys)
        #expect(added.membersAdded == [member])
        #expect(added.membersRemoved.isEmpty)
        #expect(added.headsBefore == before.heads.map(\.id).sorted())
        #expect(added.headsAfter == (try onPhone.keyState()).heads.map(\.id).sorted())
        #expect(added.headsAfter != added.headsBefore)
        #expect(!added.thisCredentialRemoved)
        #expect(changes.entries.isEmpty && changes.unreadRecords.isEmpty)
        // The laptop removes the tablet: a rotation the phone follows.
        _ = try laptop.removeDevice(publicKey: tablet.keyPair.publicKey, now: KeyTestSupport.t0 + 3)
        changes = try onPhone.refresh()
        let rotated = try #require(changes.keys)
        #expect(rotated.membersRemoved == [member])
        #expect(rotated.membersAdded.isEmpty)
        #expect(rotated.epochAfter == rotated.epochBefore + 1)
        #expect(!rotated.thisCredentialRemoved)
        // Then the phone itself: it is told, though it cannot read the new
        // keyring's members.
        _ = try laptop.removeDevice(publicKey: phone.keyPair.publicKey, now: KeyTestSupport.t0 + 4)
        let written = try laptop.add(EntryBody(created: KeyTestSupport.t0 + 5, text: "after the phone left"))
        changes = try onPhone.refresh()
        let removed = try #require(changes.keys)
        #expect(removed.thisCredentialRemoved)
        // What it can no longer read is said, not dropped.
        #expect(changes.entries.isEmpty)
        #expect(changes.unreadRecords.map(\.code) == ["unknown_key"])
        #expect(try onPhone.entry(written.entryID) == nil)
    }

    /// Other writers' records this handle read while committing are still
    /// reported; its own are not.
    @Test func recordsAbsorbedWhileCommittingAreReported() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, _, _) = try Self.setUp(dir)
        let reader = try Self.open(dir, recovery)
        #expect(try reader.refresh().isEmpty)
        let theirs = try writer.add(EntryBody(created: 1_800_000_000_000, text: "theirs"))
        try reader.add(EntryBody(created: 1_800_000_000_001, text: "mine"))
        #expect(try reader.refresh() == VaultChangeSet(entries: [EntryChange(id: theirs.entryID, before: nil, after: Self.live(theirs))]))
    }
}

/// A flag set by one task and read by another.
final class Flag: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
