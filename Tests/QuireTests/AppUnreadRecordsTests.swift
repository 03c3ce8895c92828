import Foundation
import Quire  // alone: what an app sees
import Testing

/// iOS trial of session 41, finding 4: `UnreadRecords.count` pointed to
/// `records`, which was `@_spi`, so an app could not reach each record's
/// public `code` and `message`. And damage done to the file after the
/// index cache was written is silent until the record is read or
/// `verify()` runs (documented, unchanged). Written against `import Quire`
/// without any `@_spi`, as an app is.
@Suite struct AppUnreadRecordsTests {
    typealias Store = AppKeyStoreTests.KeychainLikeStore

    /// A journal of three entries, and the range of bytes the second
    /// entry's commit appended.
    static func journal(at path: String, store: Store) async throws -> (vault: Vault, second: Range<Int>) {
        let vault = try await Vault.create(at: path, setup: VaultSetup(name: "J", recoveryKey: try RecoveryKey()), store: store)
        func size() throws -> Int { try Data(contentsOf: URL(fileURLWithPath: path)).count }
        _ = try await vault.commit { tx in try tx.add(EntryBody(created: Date(timeIntervalSince1970: 1), text: "one")) }
        let before = try size()
        _ = try await vault.commit { tx in try tx.add(EntryBody(created: Date(timeIntervalSince1970: 2), text: "two")) }
        let after = try size()
        _ = try await vault.commit { tx in try tx.add(EntryBody(created: Date(timeIntervalSince1970: 3), text: "three")) }
        return (vault, before..<after)
    }

    /// Flips one byte of the file at `path`, 40 bytes into `range`.
    static func damage(_ path: String, in range: Range<Int>) throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[range.lowerBound + 40] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func eachUnreadRecordHasACodeAndAMessage() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let store = Store()
        _ = try store.loadOrCreate(name: "Phone")
        let (_, second) = try await Self.journal(at: path, store: store)
        try Self.damage(path, in: second)

        let vault = try await Vault.open(at: path, store: store)
        let unread = try await vault.unreadRecords()
        #expect(unread.records.count >= 1)
        for record in unread.records {
            #expect(!record.code.isEmpty)
            #expect(!record.message.isEmpty)
        }
        #expect(try await vault.entries(matching: EntryQuery()).entries.map(\.body.text).sorted() == ["one", "three"])
    }

    @Test func damageAfterTheIndexCacheIsFoundWhenReadOrByVerify() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let store = Store(indexCacheFolder: dir.file("Caches"))
        _ = try store.loadOrCreate(name: "Phone")
        let vault = try await Vault.create(at: path, setup: VaultSetup(name: "J", recoveryKey: try RecoveryKey()), store: store)
        let before = try Data(contentsOf: URL(fileURLWithPath: path)).count
        let photo = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let id = try await vault.commit { tx in
            let blob = try tx.storeAttachment(photo, mediaType: "image/jpeg")
            return try tx.add(EntryBody(created: Date(timeIntervalSince1970: 1), text: "photo", attachments: [AttachmentReference(blob, mediaType: "image/jpeg")]))
                .entryID
        }
        let after = try Data(contentsOf: URL(fileURLWithPath: path)).count
        #expect(try await vault.entries(matching: EntryQuery()).entries.count == 1)
        #expect(try !FileManager.default.contentsOfDirectory(atPath: dir.file("Caches")).isEmpty)
        // A byte of the photo's chunks flips on the disk.
        try Self.damage(path, in: (before + (after - before) / 2 - 40)..<after)

        // Opened from the cache, nothing reads the chunks: nothing is said.
        let reopened = try await Vault.open(at: path, store: store)
        #expect(reopened.keyWarnings.isEmpty)
        #expect(try await reopened.entries(matching: EntryQuery()).entries.map(\.body.text) == ["photo"])
        #expect(try await reopened.unreadRecords().records.isEmpty)
        // Reading the photo finds it; so does verify(), which reads every record.
        let ref = try #require(try await reopened.entry(id)?.body.attachments.first)
        var read: QuireError?
        do {
            for try await _ in reopened.attachmentStream(ref.blob) {}
        } catch {
            read = error
        }
        #expect(read?.category == .damaged)
        #expect(try await !reopened.verify().issues.isEmpty)
    }
}
