import Foundation
import Testing
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// Opening something that is not a (healthy) vault fails with a typed error
/// and never changes a byte of the file, even when opened for writing.
@Suite struct DamageBadInputTests {
    /// A real vault with two entries, its bytes and its recovery key.
    static func healthyVault(_ dir: TemporaryDirectory) throws -> ([UInt8], RecoveryKey) {
        let (vault, recovery) = try makeVault(dir, name: "healthy.quire", seed: "bad-input")
        try vault.add(dmgBody("One", created: 1_700_000_100_000))
        try vault.add(dmgBody("Two", created: 1_700_000_100_001))
        return (dmgRead(dir.file("healthy.quire")), recovery)
    }

    /// One header copy with a correct check value for its first 28 bytes.
    static func headerCopy(magic: [UInt8] = FileHeader.magic, version: UInt16 = 2, flags: UInt16 = 0, id: [UInt8]) -> [UInt8] {
        var c = magic + [UInt8(version & 0xff), UInt8(version >> 8), UInt8(flags & 0xff), UInt8(flags >> 8)] + id
        c += BLAKE2b.hash(c, byteCount: 16).prefix(4)
        return c
    }

    /// Writes `bytes`, opens them (writable) with `recovery`, and checks the
    /// error and that the file, its size and its modification time are unchanged.
    static func expectRefused(
        _ bytes: [UInt8], _ recovery: RecoveryKey, _ dir: TemporaryDirectory, name: String, error expected: QuireError, code: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let path = dir.file(name)
        dmgWrite(path, bytes)
        let before = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        for writable in [true, false] {
            do {
                _ = try Vault.open(at: path, credential: .recoveryKey(recovery), writable: writable, options: fast)
                Issue.record("\(name) opened (writable: \(writable))", sourceLocation: sourceLocation)
            } catch {
                #expect(error == expected, "\(name) (writable: \(writable))", sourceLocation: sourceLocation)
                #expect(error.code == code, "\(name) (writable: \(writable))", sourceLocation: sourceLocation)
            }
        }
        #expect(dmgRead(path) == bytes, "\(name) changed", sourceLocation: sourceLocation)
        let after = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        #expect(before == after, "\(name) was touched", sourceLocation: sourceLocation)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(name) } == [name], sourceLocation: sourceLocation)
    }

    @Test func textFileIsNotAVault() throws {
        let dir = TemporaryDirectory()
        let text = Array("Dear diary,\nThis is a plain text file, not a vault. Это не хранилище. 这不是保险库。\n".utf8)
        #expect(text.count >= 64)
        try Self.expectRefused(text, testRecoveryKey(), dir, name: "diary.txt", error: .format(.notAVault), code: "not_a_vault")
    }

    @Test(arguments: [0, 1, 31, 32, 40, 63])
    func truncatedHeader(length: Int) throws {
        let dir = TemporaryDirectory()
        let (bytes, recovery) = try Self.healthyVault(dir)
        try Self.expectRefused(
            Array(bytes.prefix(length)), recovery, dir, name: "short.quire",
            error: .format(.truncatedHeader(fileByteCount: UInt64(length))), code: "truncated_header")
    }

    @Test(arguments: [64, 100, 4096, 70_000])
    func randomBytes(length: Int) throws {
        let dir = TemporaryDirectory()
        var bytes = SeededRandom(label: "random-\(length)").bytes(length)
        // Make sure neither copy starts with the magic by chance.
        bytes[0] = 0
        bytes[32] = 0
        try Self.expectRefused(bytes, testRecoveryKey(), dir, name: "random.bin", error: .format(.notAVault), code: "not_a_vault")
    }

    @Test func headerOnlyHasNoKeyring() throws {
        let dir = TemporaryDirectory()
        let (bytes, recovery) = try Self.healthyVault(dir)
        try Self.expectRefused(Array(bytes.prefix(64)), recovery, dir, name: "header-only.quire", error: .keys(.noKeyring), code: "no_keyring")
    }

    @Test func headerPlusRandomBytesHasNoKeyring() throws {
        let dir = TemporaryDirectory()
        let (bytes, recovery) = try Self.healthyVault(dir)
        let junk = Array(bytes.prefix(64)) + SeededRandom(label: "junk").bytes(5000)
        try Self.expectRefused(junk, recovery, dir, name: "junk.quire", error: .keys(.noKeyring), code: "no_keyring")
    }

    @Test func bothHeaderCopiesDamaged() throws {
        let dir = TemporaryDirectory()
        let (bytes, recovery) = try Self.healthyVault(dir)
        var b = bytes
        b[20] ^= 0x10
        b[52] ^= 0x10
        try Self.expectRefused(b, recovery, dir, name: "both.quire", error: .format(.headerDamaged), code: "header_damaged")
    }

    @Test func headerCopiesDiffer() throws {
        let dir = TemporaryDirectory()
        let (bytes, recovery) = try Self.healthyVault(dir)
        var b = bytes
        let other = Self.headerCopy(id: SeededRandom(label: "other-id").bytes(16))
        b.replaceSubrange(32..<64, with: other)
        try Self.expectRefused(b, recovery, dir, name: "differ.quire", error: .format(.headerCopiesDiffer), code: "header_copies_differ")
    }

    @Test func unsupportedVersionAndFeature() throws {
        let dir = TemporaryDirectory()
        let (bytes, recovery) = try Self.healthyVault(dir)
        let id = Array(bytes[12..<28])
        // Version 1 (a development version) and a future version 3 are refused.
        for version: UInt16 in [1, 3] {
            var other = bytes
            other.replaceSubrange(0..<64, with: Self.headerCopy(version: version, id: id) + Self.headerCopy(version: version, id: id))
            try Self.expectRefused(
                other, recovery, dir, name: "v\(version).quire", error: .format(.unsupportedVersion(version)), code: "unsupported_version")
        }
        var flagged = bytes
        flagged.replaceSubrange(0..<64, with: Self.headerCopy(flags: 4, id: id) + Self.headerCopy(flags: 4, id: id))
        try Self.expectRefused(
            flagged, recovery, dir, name: "flags.quire", error: .format(.unsupportedFeature(flags: 4)), code: "unsupported_feature")
    }

    @Test func wrongRecoveryKeyOnHealthyVault() throws {
        let dir = TemporaryDirectory()
        let (bytes, _) = try Self.healthyVault(dir)
        try Self.expectRefused(bytes, testRecoveryKey("someone else"), dir, name: "other.quire", error: .keys(.wrongRecoveryKey), code: "wrong_recovery_key")
    }

    @Test func createRefusesToReplaceAnExistingFile() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("notes.txt")
        let text = Array("my precious notes\n".utf8)
        dmgWrite(path, text)
        #expect(throws: QuireError.format(.alreadyExists(path: path))) {
            try Vault.create(
                at: path, setup: VaultSetup(name: "Journal", recoveryKey: testRecoveryKey(), now: 1_700_000_000_000), options: fast)
        }
        #expect(dmgRead(path) == text)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["notes.txt"])
    }

    @Test func missingFileIsAnIOErrorAndIsNotCreated() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("missing.quire")
        do {
            _ = try Vault.open(at: path, credential: .recoveryKey(testRecoveryKey()), options: fast)
            Issue.record("opened a missing file")
        } catch {
            #expect(error.code == "io")
            guard case .format(.io(let e)) = error.detail else {
                Issue.record("\(error)")
                return
            }
            #expect(e.isNotFound)
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// Opening, reading and verifying a vault with a torn tail for writing
    /// leaves the tail alone: only an append cuts it off.
    @Test func tornTailIsNotCutByReading() throws {
        let dir = TemporaryDirectory()
        let (bytes, recovery) = try Self.healthyVault(dir)
        let torn = bytes + Array(bytes[64..<200])
        let path = dir.file("torn.quire")
        dmgWrite(path, torn)
        let vault = try dmgOpen(path, recovery)
        #expect(try dmgTexts(vault) == ["One", "Two"])
        #expect(dmgIssues(vault) == [DmgIssue("torn_tail", offset: UInt64(bytes.count), frame: nil, damage: false)])
        try vault.reload()
        #expect(dmgRead(path) == torn)
    }

    /// A vault whose last commit does not verify stays writable: the new
    /// commit chains to the damaged one's stored head, the damage stays
    /// reported and nothing earlier changes (Spec/format.md §9.1).
    @Test func damagedLastCommitStaysWritable() throws {
        let dir = TemporaryDirectory()
        let (bytes, recovery) = try Self.healthyVault(dir)
        var b = bytes
        b[b.count - CommitChain.bodyByteCount] ^= 0x01  // the last commit's chain head
        let path = dir.file("damaged-tail.quire")
        dmgWrite(path, b)
        let vault = try dmgOpen(path, recovery)
        let lastCommit = vault.file.structure.frames.last!.location
        #expect(try dmgTexts(vault) == ["One", "Two"])
        try vault.add(dmgBody("Three", created: 1_700_000_100_002))
        #expect(Array(dmgRead(path).prefix(b.count)) == b)
        let reopened = try dmgOpen(path, recovery)
        #expect(try dmgTexts(reopened) == ["One", "Two", "Three"])
        #expect(dmgIssues(reopened) == [DmgIssue("commit_mismatch", offset: lastCommit.offset, frame: lastCommit.index, damage: true)])
    }
}
