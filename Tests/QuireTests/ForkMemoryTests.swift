import Foundation
@_spi(Testing) @_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// Issue 13 (data loss), the re-trial's `forknw` case: a fresh open of a
/// file that a sync tool replaced with another history — a copy forked
/// from an older state and written to since on another device, so that
/// its greatest clock passes §7's clock test — must suspect a rollback, as
/// an open handle does; device memory's `newest` entries catch it
/// (`Spec/keys.md §3.3`, §7 test 3).
@Suite struct ForkMemoryTests {
    /// A vault this device (`phone`, memory in `store`) wrote five commits
    /// to, a copy of it then (`copy`), three more commits; and a second
    /// device (`tablet`) enrolled before the copy.
    struct Fixture {
        let dir: TemporaryDirectory
        let store: any DeviceKeyStore
        let phone: DeviceIdentity
        let tablet: DeviceIdentity
        let path: String
        let copy: String
        /// The three entries the copy lacks.
        let later: [EntryRevision]

        /// A fresh open through the store: its warnings' codes and how
        /// many entries it holds, as "codes:count".
        func freshOpen() throws -> String {
            let fresh = try Vault.open(at: path, store: store, options: fast)
            let count = try fresh.entries(matching: EntryQuery(limit: 100)).entries.count
            return fresh.keyWarnings.map(\.code).joined(separator: ",") + ":\(count)"
        }

        /// The tablet writes one entry to the copy (its clock is newer
        /// than anything the phone saw) and a sync tool renames it over
        /// the path. Returns what the file had before, kept beside it.
        @discardableResult
        func forkOver() throws -> String {
            let newer = dir.file("newer.quire")
            try FileManager.default.copyItem(atPath: path, toPath: newer)
            let other = try Vault.open(at: copy, credential: .device(tablet.keyPair), options: fast)
            _ = try other.add(EntryBody(created: KeyTestSupport.t0 + 900, text: "on the tablet's history"))
            try FileManager.default.copyItem(atPath: copy, toPath: dir.file("incoming.quire"))
            #expect(rename(dir.file("incoming.quire"), path) == 0)
            return newer
        }
    }

    /// With `cache`, the store is a file store with an index cache (the
    /// `quire` command's), else one in memory without a cache. Each of the
    /// phone's commits is a fresh open through the store and one write, as
    /// the `quire add` command makes them.
    static func fixture(_ label: String, cache: Bool) throws -> Fixture {
        let dir = TemporaryDirectory()
        let phone = try DeviceIdentity.generate(name: "phone", now: KeyTestSupport.t0, using: SeededRandom(label: "fork memory " + label))
        let tablet = try DeviceIdentity.generate(name: "tablet", now: KeyTestSupport.t0, using: SeededRandom(label: "fork tablet " + label))
        let store: any DeviceKeyStore = cache ? FileDeviceKeyStore(directory: dir.file("home")) : InMemoryDeviceKeyStore()
        try store.create(phone)
        let path = dir.file("j.quire")
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "J", recoveryKey: testRecoveryKey(label), device: phone, now: KeyTestSupport.t0),
            random: SeededRandom(label: label), options: fast)
        try vault.remember(in: store)
        _ = try vault.enrollDevice(code: tablet.code, name: "Tablet", now: KeyTestSupport.t0 + 1)
        for i in 0..<5 {
            _ = try Vault.open(at: path, store: store, options: fast).add(
                EntryBody(created: KeyTestSupport.t0 + Int64(i), text: "first \(i)"))
        }
        let copy = dir.file("copy.quire")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        var later: [EntryRevision] = []
        for i in 0..<3 {
            later.append(
                try Vault.open(at: path, store: store, options: fast).add(
                    EntryBody(created: KeyTestSupport.t0 + 100 + Int64(i), text: "second \(i)")))
        }
        return Fixture(dir: dir, store: store, phone: phone, tablet: tablet, path: path, copy: copy, later: later)
    }

    /// The code of the error `body` throws; nil when it throws none.
    static func errorCode<T>(_ body: () throws(QuireError) -> T) -> String? {
        do throws(QuireError) {
            _ = try body()
            return nil
        } catch {
            return error.code
        }
    }

    /// The trial's case: a fresh open suspects a rollback, saying another
    /// history and how many remembered entries the file lacks, and writes
    /// are refused; the memory is not updated, so the next open says it
    /// again.
    @Test(arguments: [false, true]) func anotherHistoryIsARollbackOnAFreshOpen(cache: Bool) throws {
        let f = try Self.fixture("forknw \(cache)", cache: cache)
        #expect(try f.freshOpen() == ":8")
        try f.forkOver()
        let vault = try Vault.open(at: f.path, store: f.store, options: fast)
        #expect(vault.keyWarnings.map(\.code) == ["rollback_suspected"])
        let message = vault.keyWarnings.first?.message ?? ""
        #expect(message.contains("another history"))
        #expect(message.contains("of 3 of the 8 newest entries"))
        let write = Self.errorCode { () throws(QuireError) in try vault.add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after")) }
        #expect(write == "rolled_back")
        #expect(try f.freshOpen() == "rollback_suspected:6")
    }

    /// Merging the newer copy back brings the entries back: the tests
    /// pass again and writing goes on.
    @Test(arguments: [false, true]) func mergingTheNewerCopyBackLiftsIt(cache: Bool) throws {
        let f = try Self.fixture("forknw merge \(cache)", cache: cache)
        let newer = try f.forkOver()
        let vault = try Vault.open(at: f.path, store: f.store, options: fast)
        #expect(vault.keyWarnings.map(\.code) == ["rollback_suspected"])
        try vault.merge(copyAt: newer)
        #expect(try f.freshOpen() == ":9")
        _ = try Vault.open(at: f.path, store: f.store, options: fast).add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after"))
        #expect(try f.freshOpen() == ":10")
    }

    /// `acceptRollback` remembers the file as it is, `newest` included: the
    /// next open is quiet and writes.
    @Test(arguments: [false, true]) func acceptingTheOtherHistoryClearsIt(cache: Bool) throws {
        let f = try Self.fixture("forknw accept \(cache)", cache: cache)
        try f.forkOver()
        try Vault.open(at: f.path, store: f.store, options: fast).acceptRollback()
        let memory = try #require(try f.store.memory(of: Self.vaultID(f), path: Self.memoryPath(f)))
        #expect(memory.newest.count == 6)
        #expect(Set(memory.newest.map(\.entry)).isDisjoint(with: f.later.map(\.entryID)))
        #expect(try f.freshOpen() == ":6")
        _ = try Vault.open(at: f.path, store: f.store, options: fast).add(EntryBody(created: KeyTestSupport.t0 + 500, text: "after"))
        #expect(try f.freshOpen() == ":7")
    }

    /// Where the fixture's store keeps the memory of its vault.
    static func memoryPath(_ f: Fixture) -> String {
        f.store.keepsMemoryPerPath ? (FileSystem.canonicalPath(f.path) ?? f.path) : "vault:\(vaultID(f))"
    }

    static func vaultID(_ f: Fixture) -> VaultID {
        (try? Vault.open(at: f.path, credential: .device(f.phone.keyPair), writable: false).vaultID)!
    }

    /// The phone's memory holds its newest entries, the greatest clock
    /// first, after writes that never queried (each a fresh open and one
    /// add).
    @Test(arguments: [false, true]) func memoryKeepsTheNewestEntriesOfOwnWrites(cache: Bool) throws {
        let f = try Self.fixture("own writes \(cache)", cache: cache)
        let memory = try #require(try f.store.memory(of: Self.vaultID(f), path: Self.memoryPath(f)))
        #expect(memory.newest.count == 8)
        #expect(Array(memory.newest.prefix(3).map(\.entry)) == f.later.reversed().map(\.entryID))
        #expect(memory.newest.first?.clock == f.later.last?.clock.rawValue)
    }

    // MARK: Guards: legitimate rewrites and other devices pass.

    /// Another device edits and deletes the newest entries and compacts
    /// the vault, dropping history (the phone's memory is not updated by
    /// it): the heads and tombstones stay, so the phone's open is quiet.
    @Test(arguments: [false, true]) func anotherDevicesCompactionDroppingHistoryPasses(cache: Bool) throws {
        let f = try Self.fixture("compaction \(cache)", cache: cache)
        let tablet = try Vault.open(at: f.path, credential: .device(f.tablet.keyPair), options: fast)
        _ = try tablet.edit(f.later[2].entryID, body: EntryBody(created: KeyTestSupport.t0 + 102, text: "edited once"))
        _ = try tablet.edit(f.later[2].entryID, body: EntryBody(created: KeyTestSupport.t0 + 102, text: "edited twice"))
        _ = try tablet.delete(f.later[1].entryID)
        _ = try tablet.compact(CompactionOptions(keepHistory: 0))
        #expect(try f.freshOpen() == ":7")
    }

    /// Another device compacts with a rekey: the same.
    @Test(arguments: [false, true]) func anotherDevicesRekeyingCompactionPasses(cache: Bool) throws {
        let f = try Self.fixture("rekey \(cache)", cache: cache)
        let tablet = try Vault.open(at: f.path, credential: .device(f.tablet.keyPair), options: fast)
        _ = try tablet.edit(f.later[2].entryID, body: EntryBody(created: KeyTestSupport.t0 + 102, text: "edited"))
        _ = try tablet.compact(CompactionOptions(keepHistory: 0, rekey: true))
        #expect(try f.freshOpen() == ":8")
    }

    /// Another device's ordinary edits (appended) and its copy merged in
    /// by the phone, and a merge the tablet made of the phone's file with
    /// its own copy renamed over the path: all quiet.
    @Test(arguments: [false, true]) func mergesAndOtherDevicesEditsPass(cache: Bool) throws {
        let f = try Self.fixture("merge \(cache)", cache: cache)
        let tablet = try Vault.open(at: f.path, credential: .device(f.tablet.keyPair), options: fast)
        _ = try tablet.edit(f.later[0].entryID, body: EntryBody(created: KeyTestSupport.t0 + 100, text: "edited on the tablet"))
        #expect(try f.freshOpen() == ":8")
        // The tablet's own copy (written since the copy was taken) is
        // merged by the tablet into a copy of the phone's file, which a
        // sync tool then renames over the path.
        let theirs = try Vault.open(at: f.copy, credential: .device(f.tablet.keyPair), options: fast)
        _ = try theirs.add(EntryBody(created: KeyTestSupport.t0 + 900, text: "tablet"))
        let merged = f.dir.file("merged.quire")
        try FileManager.default.copyItem(atPath: f.path, toPath: merged)
        _ = try Vault.open(at: merged, credential: .device(f.tablet.keyPair), options: fast).merge(copyAt: f.copy)
        _ = try Vault.open(at: f.path, store: f.store, options: fast).add(EntryBody(created: KeyTestSupport.t0 + 950, text: "phone"))
        // The phone wrote once more meanwhile: merged again, by the phone.
        _ = try Vault.open(at: f.path, store: f.store, options: fast).merge(copyAt: merged)
        #expect(try f.freshOpen() == ":10")
        // And the tablet's merge of that renamed over the path.
        _ = try Vault.open(at: merged, credential: .device(f.tablet.keyPair), options: fast).merge(copyAt: f.path)
        _ = try Vault.open(at: merged, credential: .device(f.tablet.keyPair), options: fast).compact(CompactionOptions(keepHistory: 0))
        try FileManager.default.copyItem(atPath: merged, toPath: f.dir.file("incoming.quire"))
        #expect(rename(f.dir.file("incoming.quire"), f.path) == 0)
        #expect(try f.freshOpen() == ":10")
    }

    /// A compaction this device makes that drops what does not verify,
    /// after a keyless writer tampered with its newest commit: it
    /// remembers the result, so the next open is quiet.
    @Test(arguments: [false, true]) func ownCompactionDroppingUnverifiedPasses(cache: Bool) throws {
        let f = try Self.fixture("drop unverified \(cache)", cache: cache)
        // A commit of two entries; the first one's frame is replaced, so
        // the commit does not verify (its entries are in the memory's
        // newest).
        var revisions: [EntryRevision] = []
        try Vault.open(at: f.path, store: f.store, options: fast).commit { tx in
            revisions.append(try tx.add(EntryBody(created: KeyTestSupport.t0 + 200, text: "replaced")))
            revisions.append(try tx.add(EntryBody(created: KeyTestSupport.t0 + 201, text: "unverified")))
        }
        // A later commit keeps the newest clock (§7's clock test, which a
        // compaction dropping the newest record fails on its own).
        _ = try Vault.open(at: f.path, store: f.store, options: fast).add(EntryBody(created: KeyTestSupport.t0 + 202, text: "kept"))
        let memory = try #require(try f.store.memory(of: Self.vaultID(f), path: Self.memoryPath(f)))
        #expect(memory.newest.contains { $0.entry == revisions[1].entryID })
        let s = try VaultFile(path: f.path).structure
        let frame = s.frames[s.groups[s.groups.count - 2].members.lowerBound]
        let body = [UInt8](repeating: 0x42, count: Int(frame.header.bodyLength) - 32)
        let header = FrameHeader(kind: RecordKind(rawValue: 0x9e), flags: 0, keyID: frame.header.keyID, bodyLength: frame.header.bodyLength)
        try SystemFile(path: f.path, mode: .readWrite).write(
            header.encoded() + body + BLAKE2b.hash(body, byteCount: 32), at: frame.location.offset)
        #expect(try f.freshOpen() == ":10")
        _ = try Vault.open(at: f.path, store: f.store, options: fast).compact(CompactionOptions(dropUnverified: true))
        #expect(try f.freshOpen() == ":9")
    }

    /// A memory an older version wrote (no `newest` lines) skips the new
    /// test: the fork passes as before, and the open adds them.
    @Test func aMemoryWithoutNewestSkipsTheTest() throws {
        let f = try Self.fixture("old memory", cache: true)
        let file = try #require(
            try FileManager.default.contentsOfDirectory(atPath: f.dir.file("home/vaults")).first { $0.hasSuffix(".memory") })
        let memoryFile = f.dir.file("home/vaults/" + file)
        let text = try String(contentsOfFile: memoryFile, encoding: .utf8)
        #expect(text.contains("\nnewest "))
        let old = text.split(separator: "\n").filter { !$0.hasPrefix("newest ") }.joined(separator: "\n") + "\n"
        try old.write(toFile: memoryFile, atomically: false, encoding: .utf8)
        try f.forkOver()
        #expect(try f.freshOpen() == ":6")
        #expect(try String(contentsOfFile: memoryFile, encoding: .utf8).contains("\nnewest "))
    }

    /// The memory file's `newest` lines: written ranked, read back, at
    /// most 16; 17 is damaged, as a store reads it.
    @Test func newestLinesRoundTripAndAreCapped() throws {
        let vault = VaultID(unchecked: Array(repeating: 7, count: 16))
        let entries = (0..<20).map { i in
            VaultMemory.NewestEntry(entry: EntryID(unchecked: Array(repeating: UInt8(i), count: 16)), clock: UInt64(100 + i % 5))
        }
        let ranked = VaultMemory.newestEntries(entries + [VaultMemory.NewestEntry(entry: entries[0].entry, clock: 1)])
        #expect(ranked.count == 16)
        #expect(ranked.first == VaultMemory.NewestEntry(entry: entries[4].entry, clock: 104))
        #expect(ranked.map(\.clock) == ranked.map(\.clock).sorted(by: >))
        #expect(!ranked.contains { $0.entry == entries[0].entry })
        let memory = VaultMemory(
            vaultID: vault, path: "/v", committedLength: 64, chainHead: Array(repeating: 0, count: 32), newestClock: 104,
            keyringHeads: [], newest: ranked)
        let text = String(decoding: memory.encoded(), as: UTF8.self)
        #expect(text.contains("\nnewest 04040404040404040404040404040404 104\n"))
        #expect(VaultMemory(decoding: memory.encoded()) == memory)
        let seventeen = text + "newest " + String(repeating: "ee", count: 16) + " 1\n"
        #expect(VaultMemory(decoding: Array(seventeen.utf8)) == nil)
        #expect(VaultMemory(decoding: Array((text + "newest " + String(repeating: "EE", count: 16) + " 1\n").utf8)) == nil)
        // Digits only, and one line per entry (cryptographer's review, L2).
        let fifteen = VaultMemory(
            vaultID: vault, path: "/v", committedLength: 64, chainHead: Array(repeating: 0, count: 32), newestClock: 104,
            keyringHeads: [], newest: Array(ranked.prefix(15)))
        let base = String(decoding: fifteen.encoded(), as: UTF8.self)
        #expect(VaultMemory(decoding: Array((base + "newest " + String(repeating: "ee", count: 16) + " 1\n").utf8)) != nil)
        for clock in ["+1", "01", " 1", "1 "] {
            #expect(VaultMemory(decoding: Array((base + "newest " + String(repeating: "ee", count: 16) + " \(clock)\n").utf8)) == nil)
        }
        let repeated = "newest " + ranked[0].entry.description + " 1\n"
        #expect(VaultMemory(decoding: Array((base + repeated).utf8)) == nil)
        // Through the file store: device_key_damaged.
        let dir = TemporaryDirectory()
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        try store.remember(memory)
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: dir.file("home/vaults")).first { $0.hasSuffix(".memory") })
        try seventeen.write(toFile: dir.file("home/vaults/" + name), atomically: false, encoding: .utf8)
        let code = Self.errorCode { () throws(QuireError) in try store.memory(of: vault, path: "/v") }
        #expect(code == "device_key_damaged")
    }

    // MARK: What counts as seen (session 42 review, L1 and M3).

    /// L1: the phone only opens and lists the entries another device
    /// added, through its index cache (never the whole index); a fork
    /// lacking them (a copy of the state before them, written to since)
    /// renamed over the path is another history on a fresh open. On the
    /// old code the memory kept the `newest` it had before (written at the
    /// open, before the cached view was loaded), and the open was quiet.
    @Test func entriesReadOnlyThroughTheCacheAreRemembered() throws {
        let f = try Self.fixture("read through cache", cache: true)
        // A full read: it writes the index cache.
        #expect(try f.freshOpen() == ":8")
        let older = f.dir.file("older.quire")
        try FileManager.default.copyItem(atPath: f.path, toPath: older)
        let tablet = try Vault.open(at: f.path, credential: .device(f.tablet.keyPair), options: fast)
        for i in 0..<3 { _ = try tablet.add(EntryBody(created: KeyTestSupport.t0 + 300 + Int64(i), text: "tablet \(i)")) }
        // The phone reads them through its cache (the view and the tail).
        let reader = try Vault.open(at: f.path, store: f.store, options: fast)
        #expect(try reader.entries(matching: EntryQuery(limit: 100)).entries.count == 11)
        #expect(reader.readsThroughCachedView)
        let memory = try #require(try f.store.memory(of: Self.vaultID(f), path: Self.memoryPath(f)))
        #expect(memory.newest.count == 11)
        // The older copy, written to on the tablet, renamed over the path.
        _ = try Vault.open(at: older, credential: .device(f.tablet.keyPair), options: fast).add(
            EntryBody(created: KeyTestSupport.t0 + 900, text: "on the tablet's history"))
        try FileManager.default.copyItem(atPath: older, toPath: f.dir.file("incoming.quire"))
        #expect(rename(f.dir.file("incoming.quire"), f.path) == 0)
        let vault = try Vault.open(at: f.path, store: f.store, options: fast)
        #expect(vault.keyWarnings.map(\.code) == ["rollback_suspected"])
        #expect(vault.keyWarnings.first?.message.contains("of 3 of the 11 newest entries") == true)
    }

    /// M3: the newest entry a member wrote before the phone removed it
    /// ranks with a current member's standing (`Spec/format.md §9.4` step
    /// 5). The phone remembers it as `newest` alike whether it read
    /// through its cached view (a refresh that follows another device's
    /// commit) or through the whole entry index (a write after a full
    /// read); on the old code the index path counted only a current
    /// member's attestation and left it out, as test 3 did. A merge a third
    /// device makes into its own copy, renamed over the path, stays quiet.
    @Test func anEntryOfARemovedMemberBeforeItsRemovalIsNotLacking() throws {
        let dir = TemporaryDirectory()
        let label = "removed member's newest"
        func device(_ name: String) throws -> DeviceIdentity {
            try DeviceIdentity.generate(name: name, now: KeyTestSupport.t0, using: SeededRandom(label: label + name))
        }
        let phone = try device("phone")
        let tablet = try device("tablet")
        let laptop = try device("laptop")
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        try store.create(phone)
        let path = dir.file("j.quire")
        let created = try Vault.create(
            at: path, setup: VaultSetup(name: "J", recoveryKey: testRecoveryKey(label), device: phone, now: KeyTestSupport.t0),
            random: SeededRandom(label: label), options: fast)
        try created.remember(in: store)
        _ = try created.enrollDevice(code: tablet.code, name: "Tablet", now: KeyTestSupport.t0 + 1)
        _ = try created.enrollDevice(code: laptop.code, name: "Laptop", now: KeyTestSupport.t0 + 2)
        for i in 0..<2 {
            _ = try Vault.open(at: path, store: store, options: fast).add(
                EntryBody(created: KeyTestSupport.t0 + Int64(i), text: "phone \(i)"))
        }
        let newest = try Vault.open(at: path, credential: .device(tablet.keyPair), options: fast).add(
            EntryBody(created: KeyTestSupport.t0 + 50, text: "the tablet's newest"))
        _ = try Vault.open(at: path, store: store, options: fast).removeDevice(named: "Tablet", now: KeyTestSupport.t0 + 60)
        // The laptop's copy holds the tablet's commit and its removal.
        let diverged = dir.file("laptop.quire")
        try FileManager.default.copyItem(atPath: path, toPath: diverged)
        // A full read writes the cache under the new keys; the next open
        // reads through it and follows the laptop's commit.
        #expect(try Vault.open(at: path, store: store, options: fast).entries(matching: EntryQuery(limit: 100)).entries.count == 3)
        let phoneVault = try Vault.open(at: path, store: store, options: fast)
        #expect(try phoneVault.entries(matching: EntryQuery(limit: 100)).entries.count == 3)
        _ = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast).add(
            EntryBody(created: KeyTestSupport.t0 + 70, text: "laptop on the path"))
        _ = try phoneVault.refresh()
        #expect(phoneVault.readsThroughCachedView)
        let memory = try #require(try store.memory(of: phoneVault.vaultID, path: FileSystem.canonicalPath(path) ?? path))
        #expect(memory.newest.contains { $0.entry == newest.entryID && $0.clock == newest.clock.rawValue })
        // The laptop writes to its copy and merges the phone's file into
        // it; a sync tool renames it over the path.
        let other = try Vault.open(at: diverged, credential: .device(laptop.keyPair), options: fast)
        _ = try other.add(EntryBody(created: KeyTestSupport.t0 + 80, text: "laptop on its copy"))
        _ = try other.merge(copyAt: path)
        try FileManager.default.copyItem(atPath: diverged, toPath: dir.file("incoming.quire"))
        #expect(rename(dir.file("incoming.quire"), path) == 0)
        let fresh = try Vault.open(at: path, store: store, options: fast)
        #expect(fresh.keyWarnings.map(\.code) == [])
        #expect(try fresh.entries(matching: EntryQuery(limit: 100)).entries.count == 5)
        // Through the whole entry index (no cache: the keys changed, so
        // the cache is read again whole), a write remembers it too.
        _ = try Vault.open(at: path, store: store, options: fast).removeDevice(named: "Laptop", now: KeyTestSupport.t0 + 90)
        let indexed = try Vault.open(at: path, store: store, options: fast)
        #expect(try indexed.entries(matching: EntryQuery(limit: 100)).entries.count == 5)
        #expect(!indexed.readsThroughCachedView)
        _ = try indexed.add(EntryBody(created: KeyTestSupport.t0 + 95, text: "phone, indexed"))
        let after = try #require(try store.memory(of: indexed.vaultID, path: FileSystem.canonicalPath(path) ?? path))
        #expect(after.newest.contains { $0.entry == newest.entryID && $0.clock == newest.clock.rawValue })
    }
}
