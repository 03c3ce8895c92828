import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// The crypto review of session 41's findings on the index cache
/// (`Spec/index-cache.md §5`): a lookup by id of an entry the cache marks
/// deleted reads its deletion (F1), and a cache whose frame table fails is
/// not left in place to be refused at every open (F2).
@Suite struct IndexCacheDiscardTests {
    typealias Fixture = IndexCacheOpenTests.Fixture
    static let t0 = IndexCacheOpenTests.t0

    /// A vault of two entries whose second was deleted by its last commit
    /// (the deletion record is the frame before the last commit frame), and
    /// the deleted entry's id.
    static func deletedLast(_ label: String) throws -> (Fixture, EntryID) {
        let dir = TemporaryDirectory()
        let device = try DeviceIdentity.generate(name: "laptop", now: t0, using: SeededRandom(label: "discard " + label))
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        try store.create(device)
        let path = dir.file("j.quire")
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "J", recoveryKey: testRecoveryKey(label), device: device, now: t0),
            random: SeededRandom(label: label),
            options: fast)
        _ = try vault.add(EntryBody(created: t0, text: "alpha entry"))
        let bravo = try vault.add(EntryBody(created: t0 + 3_600_000, text: "bravo entry secret"))
        try vault.delete(bravo.entryID)
        return (Fixture(dir: dir, device: device, store: store, path: path), bravo.entryID)
    }

    /// F1: the deletion record of an entry is damaged after the cache was
    /// written (a bit 256 bytes before the end: the last commit frame is
    /// 216 bytes). A full read shows the entry (its older revision wins)
    /// with a warning; the cached lookup by id the CLI's `show` makes no
    /// longer says the entry is not there: it reads the deletion, fails,
    /// and gives way to the full read. Before, it answered from the deletion
    /// flag alone and `show` said "no entry has an id starting with".
    @Test func aLookupOfADeletedEntryReadsItsDeletion() throws {
        let (f, id) = try Self.deletedLast("deleted lookup")
        _ = try IndexCacheOpenTests.answers(try f.cached())  // writes the cache
        #expect(FileManager.default.fileExists(atPath: f.cacheFile))
        // Intact: the deletion reads, and the entry is left out from the cache.
        let intact = try f.cached()
        #expect(intact.cachedLiveEntryIDs(from: id, through: id, where: { _ in true }) == [])
        #expect(intact.answersFromIndexCache)
        #expect(try intact.entry(id)?.isDeleted == true)

        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: f.path)))
        bytes[bytes.count - 256] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: f.path))
        let full = try f.full()
        let listed = try full.entries().map(\.id)
        let warned = try full.unreadRecords().records.map(\.code)
        #expect(listed.contains(id))
        #expect(!warned.isEmpty)
        let fullEntry = try #require(try full.entry(id))
        #expect(!fullEntry.isDeleted)

        // The CLI's lookup by id (`quire show ID`): no answer from the
        // cache (the view is dropped; the file is removed by the full read).
        let cli = try f.cached()
        #expect(cli.file.cachedPrefixFrameCount > 0)
        #expect(cli.cachedLiveEntryIDs(from: id, through: id, where: { _ in true }) == nil)
        #expect(!cli.answersFromIndexCache)

        // The library's lookup by id reads the deletion and falls back.
        let library = try f.cached()
        #expect(library.file.cachedPrefixFrameCount > 0)
        let shown = try #require(try library.entry(id))
        #expect(!shown.isDeleted)
        #expect(shown.revision.revisionID == fullEntry.revision.revisionID)
        #expect(try library.unreadRecords().records.map(\.code) == warned)

        #expect(try cli.entries().map(\.id) == listed)
        #expect(try cli.unreadRecords().records.map(\.code) == warned)
    }

    /// F2: a cache whose frame table is refused — cut or extended (the
    /// open skips the table) or a row group damaged (its frames read from
    /// the vault file) — answers as a full open, and the damaged file is
    /// not kept: it is removed or rewritten, so that the open after the
    /// next full read uses a whole table again. Before, it stayed, and
    /// every open scanned the vault (or the group's bytes) again.
    @Test func aCacheWhoseFrameTableFailsIsNotKept() throws {
        for name in ["a bit flipped in a row group", "the last byte cut", "a byte appended"] {
            let (f, contents, bytes) = try IndexCacheRowGroupTests.fixture("discard " + name)
            let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
            let places = try IndexCacheRowGroupTests.places(bytes, key: key, vaultID: f.vaultID)
            let answers = try IndexCacheOpenTests.answers(try f.full())
            var damaged = bytes
            switch name {
            case "a bit flipped in a row group": damaged[places[1].lowerBound + 30] ^= 0x01
            case "the last byte cut": damaged.removeLast()
            default: damaged.append(0)
            }
            try IndexCacheRowGroupTests.write(damaged, to: f)
            let v = try f.cached()
            #expect(try IndexCacheOpenTests.answers(v) == answers, "\(name)")
            let after = FileManager.default.contents(atPath: f.cacheFile).map { [UInt8]($0) }
            #expect(after != damaged, "\(name): the damaged cache file is kept")
            // The next open reads what it must and writes a new cache when
            // there is none; the one after it uses the whole table.
            #expect(try IndexCacheOpenTests.answers(try f.cached()) == answers, "\(name)")
            let w = try f.cached()
            #expect(try IndexCacheOpenTests.answers(w) == answers, "\(name)")
            #expect(w.file.cachedPrefixFrameCount == contents.identity.frameCount, "\(name)")
            #expect(w.file.cachedPrefixRowGroupLoads.file == 0, "\(name)")
        }
    }
}
