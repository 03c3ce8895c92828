import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// The device-local index cache (`Spec/index-cache.md`): what it stores
/// comes back equal, and anything else — damage, another device, another
/// vault, another state of the file, a truncated file — is discarded.
@Suite struct IndexCacheTests {
    static let vault = VaultID(unchecked: Array(0x10..<0x20))
    static let otherVault = VaultID(unchecked: Array(0x20..<0x30))
    static let head = BLAKE2b.hash(Array("head".utf8), byteCount: 32)
    static let identity = IndexCache.Identity(
        committedLength: 123_456, frameCount: 42, chainHead: head,
        keyringHeads: [KeyringID(unchecked: Array(repeating: 9, count: 32)), KeyringID(unchecked: Array(repeating: 3, count: 32))])

    static func device(_ name: String) -> DeviceIdentity {
        try! DeviceIdentity.generate(name: name, now: 1_700_000_000_000, using: SeededRandom(label: "cache device " + name))
    }

    static func id<T: ByteIdentifier>(_ label: String, _ i: Int) -> T {
        T(unchecked: BLAKE2b.hash(Array("\(label) \(i)".utf8), byteCount: 16))
    }

    /// Four entries (one deleted, one in conflict), tags in three scripts,
    /// and documents for the live ones.
    static func contents(extraTag: String? = nil) -> IndexCache.Contents {
        let rows: [(tags: [String], journal: String, text: String?)] = [
            (["путешествия", "travel"], "", "Walked to the harbour; the spring was late."),
            (["дневник"], "работа", "Сегодня ёлка стояла во дворе."),
            (["日记"] + (extraTag.map { [$0] } ?? []), "", "今天我在北京写日记。"),
            (["secret-tag"], "private", nil),
        ]
        var entries: [IndexCache.Entry] = []
        var documents: [(position: Int32, text: String, tags: [String])] = []
        for (i, row) in rows.enumerated() {
            let summary = EntrySummary(
                id: id("entry", i), created: 1_600_000_000_000 + Int64(i) * 86_400_000, utcOffsetSeconds: Int32(i * 3600 - 7200),
                tags: row.tags, journal: row.journal, isStarred: i == 1, hasAttachments: i == 2, hasPhotos: i == 2,
                isDeleted: row.text == nil, hasConflict: i == 0, standing: UInt8(i % 3), frame: 3 + 2 * i)
            let otherHeads = i == 0 ? [IndexCache.Head(revision: id("other head", i), clock: 77 << 16, standing: 1, frame: 2, frameOffset: 900)] : []
            entries.append(
                IndexCache.Entry(
                    summary: summary, revision: id("revision", i), frameOffset: 1000 + UInt64(i) * 777, clock: UInt64(1_600_000_000_000 + i) << 16,
                    otherHeads: otherHeads))
            if let text = row.text { documents.append((Int32(i), text, row.tags)) }
        }
        return IndexCache.Contents(vaultID: vault, identity: identity, entries: entries, documents: documents)
    }

    static func key(_ device: DeviceIdentity = device("laptop"), _ vaultID: VaultID = vault) -> IndexCacheKey {
        try! IndexCacheKey(device: device, vaultID: vaultID)
    }

    static func discard(_ load: IndexCache.Load) -> IndexCache.Discard? {
        if case .discarded(let d) = load { return d }
        return nil
    }

    static func accept(_: IndexCache.Identity) -> IndexCache.Discard? { nil }

    @Test func roundTripKeepsSummariesAndSearch() throws {
        let original = Self.contents()
        let bytes = IndexCache.seal(original, key: Self.key(), random: SeededRandom(label: "seal"))
        guard case .loaded(let loaded) = IndexCache.open(bytes, key: Self.key(), vaultID: Self.vault, check: Self.accept) else {
            Issue.record("discarded")
            return
        }
        #expect(loaded.vaultID == Self.vault)
        #expect(loaded.identity == Self.identity)
        #expect(loaded.entries == original.entries)
        #expect(loaded.entries[1].summary.tags == ["дневник"])
        #expect(loaded.entries[1].summary.journal == "работа")
        #expect(loaded.entries[2].summary.hasPhotos && !loaded.entries[1].summary.hasPhotos)
        #expect(loaded.entries[3].summary.isDeleted)
        #expect(loaded.entries[0].summary.utcOffsetSeconds == -7200)
        #expect(loaded.entries[0].otherHeads.map(\.frameOffset) == [900])
        #expect(loaded.entries[3].clock == UInt64(1_600_000_000_003) << 16)
        #expect(loaded.search == original.search)
        #expect((loaded.search?.terms.count ?? 0) > 10)
        // Searches in three scripts find the same entries as before.
        #expect(loaded.positions(matching: "ёлка") == [1])
        #expect(loaded.positions(matching: "елка") == [1])
        #expect(loaded.positions(matching: "日记") == [2])
        #expect(loaded.positions(matching: "harb") == [0])
        #expect(loaded.positions(matching: "ring") == [])
        #expect(loaded.positions(matching: "secret") == [])
        // Without the search index, the same summaries.
        guard case .loaded(let light) = IndexCache.open(bytes, key: Self.key(), vaultID: Self.vault, search: false, check: Self.accept) else {
            Issue.record("discarded")
            return
        }
        #expect(light.entries == original.entries)
        #expect(light.search == nil)
    }

    /// Without the search index, only the header and summaries are read:
    /// the file may end where the search part starts, and damage there is
    /// found only by a load that wants the index.
    @Test func summariesAloneDoNotNeedTheSearchPart() {
        let original = Self.contents()
        let bytes = IndexCache.seal(original, key: Self.key())
        let sealedHeader = bytes[9..<13].reduce(0) { $0 << 8 | Int($1) }
        let sealedTable = bytes[13..<21].reduce(0) { $0 << 8 | Int($1) }
        let sealedSummaries = bytes[21..<29].reduce(0) { $0 << 8 | Int($1) }
        let summaryGroups = bytes[29..<37].reduce(0) { $0 << 8 | Int($1) }
        let searchStart = IndexCache.prefixByteCount + 4 * 24 + sealedHeader + sealedTable + sealedSummaries + summaryGroups
        guard case .loaded(let cut) = IndexCache.open(Array(bytes[..<searchStart]), key: Self.key(), vaultID: Self.vault, search: false, check: Self.accept) else {
            Issue.record("discarded")
            return
        }
        #expect(cut.entries == original.entries)
        #expect(cut.search == nil)
        #expect(Self.discard(IndexCache.open(Array(bytes[..<(searchStart - 1)]), key: Self.key(), vaultID: Self.vault, search: false, check: Self.accept)) != nil)
        var damaged = bytes
        damaged[searchStart + 5] ^= 0x10
        #expect(Self.discard(IndexCache.open(damaged, key: Self.key(), vaultID: Self.vault, check: Self.accept)) == .notAuthentic)
        #expect(Self.discard(IndexCache.open(damaged, key: Self.key(), vaultID: Self.vault, search: false, check: Self.accept)) == nil)
    }

    /// An entry flagged in conflict with no other head, or one with heads
    /// but no flag, cannot be merged with: the whole cache is discarded.
    @Test func headsThatDisagreeWithTheConflictFlagAreDiscarded() {
        var noHeads = Self.contents()
        noHeads.entries[0].otherHeads = []
        #expect(Self.discard(IndexCache.open(IndexCache.seal(noHeads, key: Self.key()), key: Self.key(), vaultID: Self.vault, check: Self.accept)) == .malformed)
        var unflagged = Self.contents()
        unflagged.entries[1].otherHeads = unflagged.entries[0].otherHeads
        #expect(Self.discard(IndexCache.open(IndexCache.seal(unflagged, key: Self.key()), key: Self.key(), vaultID: Self.vault, check: Self.accept)) == .malformed)
    }

    /// The summaries of ``contents()`` sealed after `change` rewrote their
    /// encoded map, then opened: what a reader makes of a writer's bug.
    static func openGarbled(_ change: @escaping (inout CBORMap) -> Void) -> IndexCache.Load {
        let bytes = IndexCache.seal(Self.contents(), key: Self.key()) { encoded in
            guard case .map(var m)? = try? CBORDecoder.decode(encoded) else { return encoded }
            change(&m)
            return CBOREncoder.encode(.map(m))
        }
        return IndexCache.open(bytes, key: Self.key(), vaultID: Self.vault, check: Self.accept)
    }

    /// The loaded summaries are kept packed and decoded row by row: each
    /// row, read alone or all together, is the one stored.
    @Test func packedRowsDecodeOneByOne() {
        let original = Self.contents()
        guard case .loaded(let loaded) = IndexCache.open(IndexCache.seal(original, key: Self.key()), key: Self.key(), vaultID: Self.vault, check: Self.accept) else {
            Issue.record("discarded")
            return
        }
        #expect(loaded.entryCount == original.entries.count)
        for i in (0..<original.entries.count).reversed() { #expect(loaded.entry(at: i) == original.entries[i]) }
        #expect(loaded.tableRowCount() == original.entries.count)
        // The unchanged map opens: the rewriting below is what is refused.
        #expect(Self.discard(Self.openGarbled { _ in }) == nil)
    }

    /// Rows are checked when loaded, not when read: a column one byte
    /// short or long, or any row naming what is not there, discards the
    /// whole cache (never some rows, never a wrong row later).
    @Test func garbledPackedColumnsAreDiscarded() {
        let columns = ["ids", "revisions", "created", "offsets", "flags", "standing", "frames", "frameOffsets", "clocks", "heads", "journals", "tags", "revisionCounts"]
        for name in columns {
            let short = Self.openGarbled { m in
                if case .bytes(let b)? = m[text: name] { m[text: name] = .bytes(Array(b.dropLast())) }
            }
            #expect(Self.discard(short) == .malformed, "\(name) truncated")
            let long = Self.openGarbled { m in
                if case .bytes(let b)? = m[text: name] { m[text: name] = .bytes(b + [0]) }
            }
            #expect(Self.discard(long) == .malformed, "\(name) extended")
            let missing = Self.openGarbled { m in m[text: name] = nil }
            #expect(Self.discard(missing) == .malformed, "\(name) missing")
        }
        let cases: [(String, (inout CBORMap) -> Void)] = [
            ("count", { m in m[text: "count"] = .unsigned(5) }),
            ("unknown flag", { m in
                if case .bytes(var b)? = m[text: "flags"] { b[2] |= 0x80; m[text: "flags"] = .bytes(b) }
            }),
            ("standing 3", { m in
                if case .bytes(var b)? = m[text: "standing"] { b[1] = 3; m[text: "standing"] = .bytes(b) }
            }),
            ("journal past the strings", { m in
                if case .bytes(var b)? = m[text: "journals"] { b[3] = 0x7f; m[text: "journals"] = .bytes(b) }
            }),
            ("tag past the strings", { m in
                if case .bytes(var b)? = m[text: "tags"] { b[b.count - 1] = 0x7f; m[text: "tags"] = .bytes(b) }
            }),
            ("overlong varint", { m in
                if case .bytes(let b)? = m[text: "revisionCounts"] { m[text: "revisionCounts"] = .bytes(Array(b.dropLast()) + [0x81, 0x00]) }
            }),
            ("frame past Int32", { m in
                if case .bytes(var b)? = m[text: "frames"] { b[7] = 0x80; m[text: "frames"] = .bytes(b) }
            }),
            ("two rows share an id", { m in
                if case .bytes(var b)? = m[text: "ids"] { b.replaceSubrange(16..<32, with: b[0..<16]); m[text: "ids"] = .bytes(b) }
            }),
            ("strings not text", { m in m[text: "strings"] = .array([.unsigned(1)]) }),
        ]
        for (name, change) in cases {
            #expect(Self.discard(Self.openGarbled(change)) == .malformed, "\(name)")
        }
    }

    @Test func emptyVaultRoundTrips() {
        let empty = IndexCache.Contents(vaultID: Self.vault, identity: Self.identity, entries: [], search: nil)
        let bytes = IndexCache.seal(empty, key: Self.key())
        guard case .loaded(let loaded) = IndexCache.open(bytes, key: Self.key(), vaultID: Self.vault, check: Self.accept) else {
            Issue.record("discarded")
            return
        }
        #expect(loaded.entries.isEmpty)
        #expect(loaded.search == nil)
    }

    @Test func everyFlippedBitIsDiscarded() {
        let bytes = IndexCache.seal(Self.contents(), key: Self.key(), random: SeededRandom(label: "flip"))
        var kept: [Int] = []
        for i in 0..<bytes.count {
            for bit in [0, 7 - i % 7] {
                var damaged = bytes
                damaged[i] ^= 1 << UInt8(bit)
                // The frame table is authenticated by the load that reads
                // it (at open), the summaries and search by the other.
                let table: Bool
                if case .success = IndexCache.openFrameTable(damaged, key: Self.key(), vaultID: Self.vault) { table = true } else { table = false }
                if table, Self.discard(IndexCache.open(damaged, key: Self.key(), vaultID: Self.vault, check: Self.accept)) == nil {
                    kept.append(i)
                }
            }
        }
        #expect(kept == [])
        #expect(bytes.count > 500)
    }

    @Test func anotherDevicesKeyIsDiscarded() {
        let bytes = IndexCache.seal(Self.contents(), key: Self.key(Self.device("laptop")))
        let phone = Self.key(Self.device("phone"))
        #expect(phone.fileName != Self.key().fileName)
        #expect(Self.discard(IndexCache.open(bytes, key: phone, vaultID: Self.vault, check: Self.accept)) == .notAuthentic)
    }

    @Test func anotherVaultIsDiscarded() {
        let bytes = IndexCache.seal(Self.contents(), key: Self.key())
        // The same device's key for the other vault, or this vault's key
        // with the other vault id: the tag does not verify.
        #expect(Self.discard(IndexCache.open(bytes, key: Self.key(Self.device("laptop"), Self.otherVault), vaultID: Self.otherVault, check: Self.accept)) == .notAuthentic)
        #expect(Self.discard(IndexCache.open(bytes, key: Self.key(), vaultID: Self.otherVault, check: Self.accept)) == .notAuthentic)
        #expect(Self.key(Self.device("laptop"), Self.otherVault).fileName != Self.key().fileName)
    }

    @Test func staleIdentityIsDiscardedBeforeTheBody() throws {
        let bytes = IndexCache.seal(Self.contents(), key: Self.key())
        var seen: IndexCache.Identity?
        let load = IndexCache.open(bytes, key: Self.key(), vaultID: Self.vault) { identity in
            seen = identity
            return .staleFile
        }
        #expect(Self.discard(load) == .staleFile)
        #expect(seen == Self.identity)
    }

    /// ``IndexCache/Identity/check(against:keyringHeads:)`` against a real
    /// vault file: a prefix passes after an append; another length, head,
    /// frame count or keyring set does not.
    @Test func identityCheckAgainstAVaultFile() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        try vault.add(EntryBody(created: 1_700_000_000_000, text: "first"))
        let heads = [KeyringID(unchecked: Array(repeating: 1, count: 32))]
        let before = IndexCache.Identity(committedIn: vault.file.structure, keyringHeads: heads)!
        #expect(before.check(against: vault.file.structure, keyringHeads: heads) == nil)
        try vault.add(EntryBody(created: 1_700_000_100_000, text: "second"))
        let after = vault.file.structure
        #expect(after.committedEnd > before.committedLength)
        #expect(before.check(against: after, keyringHeads: heads) == nil)
        var moved = before
        moved.committedLength += 1
        #expect(moved.check(against: after, keyringHeads: heads) == .staleFile)
        var otherHead = before
        otherHead.chainHead[0] ^= 1
        #expect(otherHead.check(against: after, keyringHeads: heads) == .staleFile)
        var otherFrames = before
        otherFrames.frameCount -= 1
        #expect(otherFrames.check(against: after, keyringHeads: heads) == .staleFile)
        var longer = IndexCache.Identity(committedIn: after, keyringHeads: heads)!
        longer.committedLength += 4096
        #expect(longer.check(against: after, keyringHeads: heads) == .staleFile)
        #expect(before.check(against: after, keyringHeads: heads + [KeyringID(unchecked: Array(repeating: 2, count: 32))]) == .keyringsChanged)
        #expect(before.check(against: after, keyringHeads: []) == .keyringsChanged)
    }

    /// A cache of an earlier format version — version 4 kept its frame
    /// table as one variable-width byte string, version 5 stored the
    /// standings from before R11-2, version 7 indexed only text and tags,
    /// version 9 had no id part, version 10 sealed the search part whole — or of a later one is discarded unread
    /// (and rewritten by the caller), never misread as this version's columns.
    @Test func anEarlierVersionIsDiscarded() {
        let bytes = IndexCache.seal(Self.contents(), key: Self.key())
        #expect(IndexCache.formatVersion == 11)
        #expect(bytes[IndexCache.magic.count] == IndexCache.formatVersion)
        for version: UInt8 in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12] {
            var old = bytes
            old[IndexCache.magic.count] = version
            #expect(Self.discard(IndexCache.open(old, key: Self.key(), vaultID: Self.vault, check: Self.accept)) == .unknownFormat)
            guard case .failure(.unknownFormat) = IndexCache.openFrameTable(old, key: Self.key(), vaultID: Self.vault) else {
                Issue.record("version \(version): the frame table was read")
                continue
            }
        }
    }

    @Test func everyTruncationIsDiscarded() {
        let bytes = IndexCache.seal(Self.contents(), key: Self.key())
        var kept: [Int] = []
        for n in 0..<bytes.count where Self.discard(IndexCache.open(Array(bytes.prefix(n)), key: Self.key(), vaultID: Self.vault, check: Self.accept)) == nil {
            kept.append(n)
        }
        #expect(kept == [])
        // Bytes appended are refused too: by the frame table's load (the
        // file must end where its last row group does); the summaries and
        // search, sealed apart with their lengths, are still authentic.
        guard case .failure(.unknownFormat) = IndexCache.openFrameTable(bytes + [0], key: Self.key(), vaultID: Self.vault) else {
            Issue.record("a byte appended was not refused")
            return
        }
    }

    @Test func fileIsPrivateAndReplacedWhole() throws {
        let dir = TemporaryDirectory()
        let folder = IndexCache.folder(inKeyStore: dir.path)
        let key = Self.key()
        #expect(Self.discard(IndexCache.load(folder: folder, key: key, vaultID: Self.vault, check: Self.accept)) == .missing)
        try IndexCache.write(Self.contents(), key: key, folder: folder)
        let path = folder + "/" + key.fileName
        #expect(try FileSystem.permissions(path) == 0o600)
        #expect(try FileSystem.permissions(folder) == 0o700)
        guard case .loaded(let loaded) = IndexCache.load(folder: folder, key: key, vaultID: Self.vault, check: Self.accept) else {
            Issue.record("discarded")
            return
        }
        #expect(loaded.entries == Self.contents().entries)
        // A second write replaces the file and leaves no temporary file.
        try IndexCache.write(Self.contents(extraTag: "again"), key: key, folder: folder)
        #expect(try FileSystem.listDirectory(folder).sorted() == [key.fileName])
        guard case .loaded(let again) = IndexCache.load(folder: folder, key: key, vaultID: Self.vault, check: Self.accept) else {
            Issue.record("discarded")
            return
        }
        #expect(again.entries[2].summary.tags == ["日记", "again"])
        // Readable by others: not used.
        try FileSystem.setPermissions(path, 0o644)
        #expect(Self.discard(IndexCache.load(folder: folder, key: key, vaultID: Self.vault, check: Self.accept)) == .notPrivate)
        IndexCache.remove(folder: folder, key: key)
        #expect(!FileSystem.exists(path))
    }

    @Test func fileShowsNoPlaintextNorVaultID() throws {
        let dir = TemporaryDirectory()
        let key = Self.key()
        try IndexCache.write(Self.contents(), key: key, folder: dir.path)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: dir.file(key.fileName))))
        for needle in ["путешествия", "дневник", "日记", "secret-tag", "работа", "harbour", "ёлка", "private"] {
            #expect(!Self.contains(bytes, Array(needle.utf8)), "\(needle) is in the cache file")
        }
        #expect(!Self.contains(bytes, Self.vault.bytes))
        #expect(!Self.contains(bytes, Self.head))
        #expect(!Self.contains(bytes, Self.contents().entries[0].summary.id.bytes))
        #expect(!key.fileName.contains(hex(Self.vault.bytes)))
        #expect(key.fileName.count == 32 + 4)
    }

    /// The body is padded to Padmé: a small change in size does not show.
    @Test func sizeIsPadded() {
        for extra in [nil, "x", String(repeating: "длинный тег ", count: 300)] {
            let bytes = IndexCache.seal(Self.contents(extraTag: extra), key: Self.key())
            let sealedHeader = bytes[9..<13].reduce(0) { $0 << 8 | Int($1) }
            let sealedTable = bytes[13..<21].reduce(0) { $0 << 8 | Int($1) }
            let sealedSummaries = bytes[21..<29].reduce(0) { $0 << 8 | Int($1) }
            let summaryGroups = bytes[29..<37].reduce(0) { $0 << 8 | Int($1) }
            let sealedSearch = bytes[37..<45].reduce(0) { $0 << 8 | Int($1) }
            let postingGroups = bytes[45..<53].reduce(0) { $0 << 8 | Int($1) }
            // No row groups of a frame table: the file ends with the search part's posting groups.
            #expect(
                bytes.count
                    == IndexCache.prefixByteCount + 4 * 24 + sealedHeader + sealedTable + sealedSummaries + summaryGroups + sealedSearch
                    + postingGroups)
            // No frame table here: `{}`, padded.
            #expect(sealedTable - 16 == Padding.padme(sealedTable - 16))
            // The summaries' id part, then one row group: each its nonce,
            // then its sealed bytes.
            let idPart = IndexCache.summaryIDPartPlace(bytes, key: Self.key(), vaultID: Self.vault)?.count ?? 0
            #expect(idPart > 24 + 16)
            for padded in [sealedHeader - 16, sealedSummaries - 16, idPart - 24 - 16, summaryGroups - idPart - 24 - 16, sealedSearch - 16] {
                #expect(padded > 50)
                #expect(padded == Padding.padme(padded))
            }
        }
        // Two sizes in one Padmé bucket seal to the same length.
        let a = IndexCache.seal(Self.contents(extraTag: String(repeating: "a", count: 3000)), key: Self.key())
        let b = IndexCache.seal(Self.contents(extraTag: String(repeating: "a", count: 3003)), key: Self.key())
        #expect(a.count == b.count)
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle {
            return true
        }
        return false
    }
}
