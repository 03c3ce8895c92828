import Foundation
@_spi(Testing) @_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// Issue 13, iOS trial of session 41 (HIGH, data loss): an open handle whose
/// path a sync tool replaced by an older copy must say so as an open does
/// (`Spec/keys.md §7`, "On refresh"), not adopt it as an ordinary change set
/// and let its next write erase the evidence.
@Suite struct RefreshRollbackTests {
    /// A vault of 30 entries written through a device whose memory `store`
    /// keeps, and a copy of it (`older`) taken after the first 20.
    struct Fixture {
        let dir: TemporaryDirectory
        let store: any DeviceKeyStore
        let device: DeviceIdentity
        let path: String
        let older: String
        /// The 10 entries the older copy lacks.
        let later: [EntryRevision]

        /// A handle through the store, with its refresh baseline set; with
        /// `cache`, it answers from the index cache.
        func handle(cache: Bool) throws -> Vault {
            let vault = try Vault.open(at: path, store: store, options: fast)
            #expect(try vault.entries(matching: EntryQuery(limit: 100)).entries.count == 30)
            #expect(vault.answersFromIndexCache == cache)
            #expect(try vault.refresh().isEmpty)
            return vault
        }

        /// What a sync tool does: writes `source` beside the vault and
        /// renames it over the path.
        func renameOver(from source: String) throws {
            try FileManager.default.copyItem(atPath: source, toPath: dir.file("incoming.quire"))
            #expect(rename(dir.file("incoming.quire"), path) == 0)
        }

        /// A fresh open through the store: its warnings' codes and how
        /// many entries it holds, as "codes:count".
        func freshOpen() throws -> String {
            let fresh = try Vault.open(at: path, store: store, options: fast)
            let count = try fresh.entries(matching: EntryQuery(limit: 100)).entries.count
            return fresh.keyWarnings.map(\.code).joined(separator: ",") + ":\(count)"
        }
    }

    /// With `cache`, the store keeps an index cache, written here so that
    /// the next handle answers from it.
    static func fixture(_ label: String, cache: Bool) throws -> Fixture {
        let dir = TemporaryDirectory()
        let device = try DeviceIdentity.generate(name: "phone", now: KeyTestSupport.t0, using: SeededRandom(label: "refresh rollback " + label))
        let store: any DeviceKeyStore = cache ? FileDeviceKeyStore(directory: dir.file("home")) : InMemoryDeviceKeyStore()
        try store.create(device)
        let path = dir.file("j.quire")
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "J", recoveryKey: testRecoveryKey(label), device: device, now: KeyTestSupport.t0),
            random: SeededRandom(label: label), options: fast)
        try vault.remember(in: store)
        for i in 0..<20 { try vault.add(EntryBody(created: KeyTestSupport.t0 + Int64(i), text: "first \(i)")) }
        let older = dir.file("older.quire")
        try FileManager.default.copyItem(atPath: path, toPath: older)
        var later: [EntryRevision] = []
        for i in 0..<10 { later.append(try vault.add(EntryBody(created: KeyTestSupport.t0 + 100 + Int64(i), text: "second \(i)"))) }
        // Writes the index cache (a store with a cache folder).
        _ = try Vault.open(at: path, store: store, options: fast).entries(matching: EntryQuery(limit: 100))
        return Fixture(dir: dir, store: store, device: device, path: path, older: older, later: later)
    }

    /// The code of the error `body` throws; nil when it throws none.
    static func errorCode<T>(_ body: () throws(QuireError) -> T) -> (code: String, category: QuireError.Category)? {
        do throws(QuireError) {
            _ = try body()
            return nil
        } catch {
            return (error.code, error.category)
        }
    }

    /// The trial's case: the refresh throws `rolled_back` (each time),
    /// the handle warns as an open does, its write is refused, and a fresh
    /// open afterwards still suspects the rollback.
    @Test(arguments: [false, true]) func anOlderCopyRenamedOverThePathIsARollback(cache: Bool) throws {
        let f = try Self.fixture("older copy \(cache)", cache: cache)
        let vault = try f.handle(cache: cache)
        try f.renameOver(from: f.older)
        let refused = Self.errorCode { () throws(QuireError) in try vault.refresh() }
        #expect(refused?.code == "rolled_back")
        #expect(refused?.category == .needsMerge)
        #expect(vault.keyWarnings.map(\.code) == ["rollback_suspected"])
        // Said again, never turned into an ordinary change set.
        #expect(Self.errorCode { () throws(QuireError) in try vault.refresh() }?.code == "rolled_back")
        // Reading is never refused: the handle reads the file at the path.
        #expect(try vault.entries(matching: EntryQuery(limit: 100)).entries.count == 20)
        let write = Self.errorCode { () throws(QuireError) in try vault.add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after")) }
        #expect(write?.code == "rolled_back")
        #expect(write?.category == .needsMerge)
        #expect(try f.freshOpen() == "rollback_suspected:20")
    }

    /// A write with no refresh before it meets the replaced file as it
    /// commits: refused as a fresh open's would be, and the file is left
    /// as the sync tool put it.
    @Test(arguments: [false, true]) func aWriteAfterAnOlderCopyIsRefused(cache: Bool) throws {
        let f = try Self.fixture("write after \(cache)", cache: cache)
        let vault = try f.handle(cache: cache)
        try f.renameOver(from: f.older)
        let olderBytes = try Data(contentsOf: URL(fileURLWithPath: f.older))
        let write = Self.errorCode { () throws(QuireError) in try vault.add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after")) }
        #expect(write?.code == "rolled_back")
        #expect(vault.keyWarnings.map(\.code) == ["rollback_suspected"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.path)) == olderBytes)
        #expect(try f.freshOpen() == "rollback_suspected:20")
    }

    /// `reload()` says it as an open does (no throw: an open does not
    /// throw either), and refuses the write.
    @Test func aReloadOntoAnOlderCopyWarnsAndRefusesWrites() throws {
        let f = try Self.fixture("reload", cache: false)
        let vault = try f.handle(cache: false)
        try f.renameOver(from: f.older)
        try vault.reload()
        #expect(vault.keyWarnings.map(\.code) == ["rollback_suspected"])
        #expect(Self.errorCode { () throws(QuireError) in try vault.add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after")) }?.code == "rolled_back")
        #expect(try f.freshOpen() == "rollback_suspected:20")
    }

    /// The user accepts the older file: the next refresh reports what it
    /// lost, as an ordinary change set, and the handle writes again.
    @Test func acceptingTheOlderCopyReportsWhatItLacks() throws {
        let f = try Self.fixture("accept", cache: false)
        let vault = try f.handle(cache: false)
        try f.renameOver(from: f.older)
        #expect(Self.errorCode { () throws(QuireError) in try vault.refresh() }?.code == "rolled_back")
        try vault.acceptRollback()
        #expect(vault.keyWarnings.isEmpty)
        let changes = try vault.refresh()
        #expect(changes.fileReplaced)
        #expect(Set(changes.ids(.removed)) == Set(f.later.map(\.entryID)))
        #expect(changes.entries.count == 10)
        try vault.add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after"))
        #expect(try f.freshOpen() == ":21")
    }

    /// The newer copy put back (a merge elsewhere, the sync tool again):
    /// it extends what the handle had read, so the refusal is lifted.
    @Test func theNewerCopyBackLiftsTheRefusal() throws {
        let f = try Self.fixture("newer back", cache: false)
        let vault = try f.handle(cache: false)
        let newer = f.dir.file("newer.quire")
        try FileManager.default.copyItem(atPath: f.path, toPath: newer)
        try f.renameOver(from: f.older)
        #expect(Self.errorCode { () throws(QuireError) in try vault.refresh() }?.code == "rolled_back")
        try f.renameOver(from: newer)
        let changes = try vault.refresh()
        #expect(changes.entries.isEmpty)
        #expect(vault.keyWarnings.isEmpty)
        try vault.add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after"))
        #expect(try f.freshOpen() == ":31")
    }

    /// Another device's copy that only grew still refreshes normally, with
    /// the exact change set, and the handle writes on it.
    @Test(arguments: [false, true]) func aNewerCopyStillRefreshesNormally(cache: Bool) throws {
        let f = try Self.fixture("newer copy \(cache)", cache: cache)
        let vault = try f.handle(cache: cache)
        let elsewherePath = f.dir.file("elsewhere.quire")
        try FileManager.default.copyItem(atPath: f.path, toPath: elsewherePath)
        let elsewhere = try Vault.open(at: elsewherePath, credential: .device(f.device.keyPair), options: fast)
        let added = try elsewhere.add(EntryBody(created: KeyTestSupport.t0 + 900, text: "from the other device"))
        let edited = try elsewhere.edit(f.later[0].entryID, body: EntryBody(created: KeyTestSupport.t0 + 100, text: "edited there"))
        try f.renameOver(from: elsewherePath)
        let changes = try vault.refresh()
        #expect(changes.fileReplaced)
        #expect(Set(changes.entries.map { "\($0)" }) == Set([
            EntryChange(id: added.entryID, before: nil, after: RefreshTests.live(added)),
            EntryChange(id: f.later[0].entryID, before: RefreshTests.live(f.later[0]), after: RefreshTests.live(edited)),
        ].map { "\($0)" }))
        #expect(vault.keyWarnings.isEmpty)
        try vault.add(EntryBody(created: KeyTestSupport.t0 + 1000, text: "mine"))
        #expect(try f.freshOpen() == ":32")
    }

    /// Another history: the older copy, opened by the same device elsewhere
    /// (no device memory there) and written to once, so that its greatest
    /// clock passes §7's clock test; it holds no revision of the handle's
    /// 10 later entries. Returns its path and the entry it added.
    static func fork(_ f: Fixture) throws -> (path: String, added: EntryRevision) {
        let path = f.dir.file("fork.quire")
        try FileManager.default.copyItem(atPath: f.older, toPath: path)
        let other = try Vault.open(at: path, credential: .device(f.device.keyPair), options: fast)
        let added = try other.add(EntryBody(created: KeyTestSupport.t0 + 900, text: "on the other history"))
        return (path, added)
    }

    /// Issue 13, re-trial: a copy from another history renamed over the
    /// path is refused as an older copy is (each refresh throws, the
    /// handle warns with how many entries the file lacks, a write is
    /// refused, nothing is reported as a change); accepting it then
    /// reports the 10 entries as removed and the fork's entry as added.
    @Test(arguments: [false, true]) func anotherHistoryRenamedOverThePathIsARollback(cache: Bool) throws {
        let f = try Self.fixture("fork \(cache)", cache: cache)
        let vault = try f.handle(cache: cache)
        let fork = try Self.fork(f)
        try f.renameOver(from: fork.path)
        let refused = Self.errorCode { () throws(QuireError) in try vault.refresh() }
        #expect(refused?.code == "rolled_back")
        #expect(refused?.category == .needsMerge)
        #expect(vault.keyWarnings.map(\.code) == ["rollback_suspected"])
        #expect(vault.keyWarnings.first?.message.contains("of 10 of the 16 newest entries") == true)
        #expect(Self.errorCode { () throws(QuireError) in try vault.refresh() }?.code == "rolled_back")
        #expect(try vault.entries(matching: EntryQuery(limit: 100)).entries.count == 21)
        let write = Self.errorCode { () throws(QuireError) in try vault.add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after")) }
        #expect(write?.code == "rolled_back")
        #expect(write?.category == .needsMerge)
        try vault.acceptRollback()
        #expect(vault.keyWarnings.isEmpty)
        let changes = try vault.refresh()
        #expect(changes.fileReplaced)
        #expect(Set(changes.ids(.removed)) == Set(f.later.map(\.entryID)))
        #expect(changes.ids(.added) == [fork.added.entryID])
        #expect(changes.entries.count == 11)
        try vault.add(EntryBody(created: KeyTestSupport.t0 + 1000, text: "after"))
        #expect(try f.freshOpen() == ":22")
    }

    /// Another history that holds every entry but reverts one this handle
    /// edited (forked before the edit, written to since, so its newest
    /// clock passes the clock test): the handle judges it by the newest
    /// entries it read, as a fresh open does (`Spec/keys.md §7`, test 3),
    /// and refuses it; it took it as an ordinary change before, and its
    /// next commit made the loss final (cryptographer's review of stop
    /// 42, H1).
    @Test(arguments: [false, true]) func anotherHistoryRevertingAnEditIsARollback(cache: Bool) throws {
        let f = try Self.fixture("fork revert \(cache)", cache: cache)
        let vault = try f.handle(cache: cache)
        let before = f.dir.file("before.quire")
        try FileManager.default.copyItem(atPath: f.path, toPath: before)
        let edited = f.later[0].entryID
        _ = try vault.edit(edited, body: EntryBody(created: KeyTestSupport.t0 + 100, text: "second 0, edited"))
        let other = try Vault.open(at: before, credential: .device(f.device.keyPair), options: fast)
        _ = try other.add(EntryBody(created: KeyTestSupport.t0 + 900, text: "on the other history"))
        try f.renameOver(from: before)
        let refused = Self.errorCode { () throws(QuireError) in try vault.refresh() }
        #expect(refused?.code == "rolled_back")
        #expect(vault.keyWarnings.map(\.code) == ["rollback_suspected"])
        let write = Self.errorCode { () throws(QuireError) in try vault.add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after")) }
        #expect(write?.code == "rolled_back")
        #expect(try f.freshOpen().hasPrefix("rollback_suspected:"))
    }

    /// A write with no refresh before it meets the other history as it
    /// commits (the commit's retry reloads): refused, and the file is left
    /// as the sync tool put it.
    @Test func aWriteAfterAnotherHistoryIsRefused() throws {
        let f = try Self.fixture("fork write", cache: false)
        let vault = try f.handle(cache: false)
        let fork = try Self.fork(f)
        try f.renameOver(from: fork.path)
        let forkBytes = try Data(contentsOf: URL(fileURLWithPath: fork.path))
        let write = Self.errorCode { () throws(QuireError) in try vault.add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after")) }
        #expect(write?.code == "rolled_back")
        #expect(vault.keyWarnings.map(\.code) == ["rollback_suspected"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.path)) == forkBytes)
    }

    /// The other history merged with the copy that has the 10 entries (on
    /// another device) and renamed over the path: it holds them again, so
    /// the refusal is lifted and the refresh reports only the fork's entry.
    @Test func aMergeThatHoldsTheEntriesAgainLiftsTheRefusal() throws {
        let f = try Self.fixture("fork merged", cache: false)
        let vault = try f.handle(cache: false)
        let newer = f.dir.file("newer.quire")
        try FileManager.default.copyItem(atPath: f.path, toPath: newer)
        let fork = try Self.fork(f)
        try f.renameOver(from: fork.path)
        #expect(Self.errorCode { () throws(QuireError) in try vault.refresh() }?.code == "rolled_back")
        let other = try Vault.open(at: fork.path, credential: .device(f.device.keyPair), options: fast)
        _ = try other.merge(copyAt: newer)
        try f.renameOver(from: fork.path)
        let changes = try vault.refresh()
        #expect(changes.ids(.added) == [fork.added.entryID])
        #expect(changes.entries.count == 1)
        #expect(vault.keyWarnings.isEmpty)
        try vault.add(EntryBody(created: KeyTestSupport.t0 + 1000, text: "after"))
        #expect(try f.freshOpen() == ":32")
    }

    /// A legitimate rewrite: another handle of this device compacts the
    /// vault, dropping the older revisions of an edited entry (the head and
    /// a deleted entry's tombstone stay). The handle refreshes normally.
    @Test(arguments: [false, true]) func aCompactionByAnotherHandleStillRefreshes(cache: Bool) throws {
        let f = try Self.fixture("compaction \(cache)", cache: cache)
        let vault = try f.handle(cache: cache)
        let other = try Vault.open(at: f.path, store: f.store, options: fast)
        _ = try other.edit(f.later[0].entryID, body: EntryBody(created: KeyTestSupport.t0 + 100, text: "edited once"))
        let edited = try other.edit(f.later[0].entryID, body: EntryBody(created: KeyTestSupport.t0 + 100, text: "edited twice"))
        _ = try other.delete(f.later[1].entryID)
        _ = try other.compact(CompactionOptions(keepHistory: 0))
        let changes = try vault.refresh()
        #expect(changes.fileReplaced)
        #expect(Set(changes.entries.map(\.id)) == [f.later[0].entryID, f.later[1].entryID])
        #expect(changes.ids(.removed).isEmpty)
        #expect(vault.keyWarnings.isEmpty)
        #expect(try vault.entry(f.later[0].entryID)?.revision.revisionID == edited.revisionID)
        try vault.add(EntryBody(created: KeyTestSupport.t0 + 1000, text: "mine"))
        #expect(try f.freshOpen() == ":30")
    }

    /// A handle that has read no entries judges the file its retry meets
    /// by what it read, whose clock is its own: the clock of the entry
    /// `add` writes is drawn in the commit, so it is no part of that
    /// reading. Drawn before, a compaction by another handle made the add
    /// look like a write onto a file cut back ("records committed there
    /// were cut off") and refused it.
    @Test(arguments: [false, true]) func anAddThatMeetsACompactionByAnotherHandleGoesOn(cache: Bool) throws {
        let f = try Self.fixture("add after compaction \(cache)", cache: cache)
        let vault = try Vault.open(at: f.path, store: f.store, options: fast)
        _ = try Vault.open(at: f.path, store: f.store, options: fast).compact(CompactionOptions(keepHistory: 0))
        let mine = try vault.add(EntryBody(created: KeyTestSupport.t0 + 1000, text: "mine"))
        #expect(vault.keyWarnings.isEmpty, "\(vault.keyWarnings.map(\.message))")
        #expect(try vault.entry(mine.entryID)?.revision.revisionID == mine.revisionID)
        #expect(try f.freshOpen() == ":31")
    }

    struct Abandoned: Error {}

    /// The memory is never ahead of the file (`Spec/keys.md §7`): the
    /// clock of a revision whose commit was abandoned is no clock the
    /// device saw. Remembered, every rewrite that did not go through this
    /// device's memory (a compaction made elsewhere, synced back) failed
    /// test 3 at the next open, a false rollback (records).
    @Test(arguments: [false, true]) func anAbandonedCommitsClockIsNotRemembered(readEntries: Bool) throws {
        let f = try Self.fixture("abandoned clock \(readEntries)", cache: false)
        let vault = try Vault.open(at: f.path, store: f.store, options: fast)
        if readEntries { #expect(try vault.entries(matching: EntryQuery(limit: 100)).entries.count == 30) }
        #expect(throws: QuireError.self) {
            try vault.commit { tx in
                _ = try tx.add(EntryBody(created: KeyTestSupport.t0 + 5000, text: "abandoned"))
                throw Abandoned()
            }
        }
        try vault.remember(in: f.store)
        let location = FileSystem.canonicalPath(f.path) ?? f.path
        #expect(try f.store.memory(of: vault.vaultID, path: location)?.newestClock == f.later.last?.clock.rawValue)
        // The vault compacted elsewhere, and renamed over the path.
        let elsewhere = f.dir.file("elsewhere.quire")
        try FileManager.default.copyItem(atPath: f.path, toPath: elsewhere)
        _ = try Vault.open(at: elsewhere, store: InMemoryDeviceKeyStore(identity: f.device), options: fast).compact(
            CompactionOptions(keepHistory: 0))
        try f.renameOver(from: elsewhere)
        #expect(try f.freshOpen() == ":30")
    }

    /// A store that lets another writer of the same device commit, and save
    /// its memory, at the moment a handle reads the memory: the race of two
    /// processes sharing one key store.
    final class RacingStore: DeviceKeyStore, @unchecked Sendable {
        let inner: any DeviceKeyStore
        /// Run once, at the next read of the memory, before it is read.
        var race: (() throws -> Void)?
        /// What `race` threw, if anything.
        var raceError: (any Error)?

        init(_ inner: any DeviceKeyStore) { self.inner = inner }

        var indexCacheFolder: String? { inner.indexCacheFolder }
        var keepsMemoryPerPath: Bool { inner.keepsMemoryPerPath }
        func load() throws(QuireError) -> DeviceIdentity? { try inner.load() }
        func create(_ identity: DeviceIdentity) throws(QuireError) { try inner.create(identity) }
        func memory(of vaultID: VaultID, path: String) throws(QuireError) -> VaultMemory? {
            if let race {
                self.race = nil
                do { try race() } catch { raceError = error }
            }
            return try inner.memory(of: vaultID, path: path)
        }
        func remember(_ memory: VaultMemory) throws(QuireError) { try inner.remember(memory) }
    }

    /// Torture, 4 writers beside a merge, a compaction or a key rotation:
    /// a writer whose commit met a rewrite reads the new file, and another
    /// writer of the same device may commit to that very file and save its
    /// memory before this one reads the memory. That memory is newer than
    /// what this writer read (a longer file, a newer clock), not newer
    /// than the disk, so the write goes on (`Spec/keys.md §7`, "On
    /// refresh"); judged against that memory, it was refused as records
    /// cut off.
    @Test func aRetryThatMeetsAMemoryNewerThanItsReadingStillWrites() throws {
        let f = try Self.fixture("retry memory race", cache: false)
        let racing = RacingStore(f.store)
        let writer = try Vault.open(at: f.path, store: racing, options: fast)
        #expect(try writer.entries(matching: EntryQuery(limit: 100)).entries.count == 30)
        let other = try Vault.open(at: f.path, store: f.store, options: fast)
        #expect(try other.entries(matching: EntryQuery(limit: 100)).entries.count == 30)
        _ = try Vault.open(at: f.path, store: f.store, options: fast).compact(CompactionOptions(keepHistory: 0))
        var raced: EntryRevision?
        racing.race = { raced = try other.add(EntryBody(created: KeyTestSupport.t0 + 2000, text: "the other writer")) }
        let mine = try writer.add(EntryBody(created: KeyTestSupport.t0 + 1000, text: "mine"))
        #expect(racing.race == nil && racing.raceError == nil, "\(String(describing: racing.raceError))")
        #expect(raced != nil)
        #expect(writer.keyWarnings.isEmpty, "\(writer.keyWarnings.map(\.message))")
        let fresh = try Vault.open(at: f.path, store: f.store, options: fast)
        #expect(fresh.keyWarnings.isEmpty, "\(fresh.keyWarnings.map(\.message))")
        #expect(try fresh.entry(mine.entryID) != nil)
        #expect(try raced.flatMap { try fresh.entry($0.entryID) } != nil)
        #expect(try fresh.entries(matching: EntryQuery(limit: 100)).entries.count == 32)
    }

    /// A compaction asked to drop what does not verify drops every
    /// revision of an entry whose only commit was tampered with: not
    /// another history, so the handle that read it refreshes normally.
    @Test func aCompactionDroppingUnverifiedRecordsStillRefreshes() throws {
        let f = try Self.fixture("drop unverified", cache: false)
        // Two entries in one commit; the first one's frame is replaced, so
        // the commit does not verify and the second reads unverified.
        var revisions: [EntryRevision] = []
        try Vault.open(at: f.path, store: f.store, options: fast).commit { tx in
            revisions.append(try tx.add(EntryBody(created: KeyTestSupport.t0 + 200, text: "replaced")))
            revisions.append(try tx.add(EntryBody(created: KeyTestSupport.t0 + 201, text: "unverified")))
        }
        // A later commit keeps the newest clock (§7's clock test).
        _ = try Vault.open(at: f.path, store: f.store, options: fast).add(EntryBody(created: KeyTestSupport.t0 + 202, text: "kept"))
        let victim = revisions[1]
        let s = try VaultFile(path: f.path).structure
        let frame = s.frames[s.groups[s.groups.count - 2].members.lowerBound]
        let body = [UInt8](repeating: 0x42, count: Int(frame.header.bodyLength) - 32)
        let header = FrameHeader(kind: RecordKind(rawValue: 0x9e), flags: 0, keyID: frame.header.keyID, bodyLength: frame.header.bodyLength)
        try SystemFile(path: f.path, mode: .readWrite).write(
            header.encoded() + body + BLAKE2b.hash(body, byteCount: 32), at: frame.location.offset)
        let vault = try Vault.open(at: f.path, store: f.store, options: fast)
        #expect(try vault.entry(victim.entryID)?.isVerified == false)
        #expect(try vault.refresh().isEmpty)
        let other = try Vault.open(at: f.path, store: f.store, options: fast)
        _ = try other.compact(CompactionOptions(dropUnverified: true))
        let changes = try vault.refresh()
        #expect(changes.fileReplaced)
        #expect(changes.ids(.removed) == [victim.entryID])
        #expect(vault.keyWarnings.map(\.code) == [])
    }
}

extension VaultObserverTests {
    /// Issue 13, iOS trial of session 41: `events()` delivers an older copy
    /// renamed over the path as a failed refresh (`rolled_back`), not as
    /// `.changed`; the handle's write is refused afterwards.
    @Test(arguments: [false, true]) func eventsSayAnOlderCopyAsARollback(cache: Bool) async throws {
        let f = try RefreshRollbackTests.fixture("events \(cache)", cache: cache)
        let vault = try f.handle(cache: cache)
        try await Self.expectEventsSayARollback(f, vault, renamingOver: f.older)
        #expect(try f.freshOpen() == "rollback_suspected:20")
    }

    /// Issue 13, re-trial: `events()` delivers another history renamed
    /// over the path as a failed refresh (`rolled_back`), not as
    /// `.changed` with 10 entries removed; a write is refused afterwards.
    @Test(arguments: [false, true]) func eventsSayAnotherHistoryAsARollback(cache: Bool) async throws {
        let f = try RefreshRollbackTests.fixture("events fork \(cache)", cache: cache)
        let vault = try f.handle(cache: cache)
        let fork = try RefreshRollbackTests.fork(f)
        try await Self.expectEventsSayARollback(f, vault, renamingOver: fork.path)
    }

    /// Watches `vault`'s events while `replacement` is renamed over its
    /// path: they say a failed refresh (`rolled_back`), never a change;
    /// `keyWarnings` says `rollback_suspected`; a write is refused.
    static func expectEventsSayARollback(
        _ f: RefreshRollbackTests.Fixture, _ vault: Vault, renamingOver replacement: String
    ) async throws {
        let inbox = EventInbox()
        let task = Task { for await event in vault.events(coalescing: .milliseconds(20)) { inbox.add(event) } }
        try await Task.sleep(for: .milliseconds(100))
        try f.renameOver(from: replacement)
        #expect(await Self.eventually { !inbox.failures.isEmpty })
        #expect(inbox.failures.first?.code == "rolled_back")
        #expect(inbox.changes(.otherWriter).isEmpty)
        #expect(vault.keyWarnings.map(\.code) == ["rollback_suspected"])
        let write = await Task { () -> String? in
            RefreshRollbackTests.errorCode { () throws(QuireError) in try vault.add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after")) }?.code
        }.value
        #expect(write == "rolled_back")
        task.cancel()
        await task.value
        #expect(inbox.changes(.otherWriter).isEmpty && inbox.changes(.thisHandle).isEmpty)
    }
}
