import QuireCrypto
@testable import QuireFormat
import QuireSystem
import Testing

/// Merge opens its result, whose first commit groups it copied from the
/// vault, by scanning only what follows them
/// (``VaultScanner/prefix(of:groups:)``, ``VaultFile/init(path:writable:copiedPrefix:)``):
/// it must find what a scan of the whole file finds.
@Suite struct CopiedPrefixTests {
    /// Three commits (one holds an attachment); the first `groups` are
    /// copied to a new file, then the rest, as a merge writes its result.
    @Test(arguments: [1, 2, 3])
    func matchesAFullScan(groups: Int) throws {
        let v = RawKeyVault(label: "copied prefix")
        try v.create([Array("one".utf8)])
        let vault = try v.open(writable: true)
        try vault.commit(random: SeededRandom(label: "c2"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            _ = try tx.appendBlob(from: MemoryByteSource(SeededRandom(label: "photo").bytes(200_000)), mediaType: "image/jpeg")
        }
        try vault.commit(random: SeededRandom(label: "c3"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: Array("three".utf8), compress: false)
        }
        let original = try VaultFile(path: v.path)
        let known = try #require(VaultScanner.prefix(of: original.structure, groups: groups))
        #expect(known.groups.count == groups)
        #expect(known.committedEnd == original.structure.frames[original.structure.groups[groups - 1].commitFrame].end)
        #expect(VaultScanner.prefix(of: original.structure, groups: 0) == nil)
        #expect(VaultScanner.prefix(of: original.structure, groups: 4) == nil)

        // The copy: the prefix's bytes, then the rest of the file.
        let copy = v.dir.file("copy.quire")
        let bytes = try fileBytes(v.path)
        try SystemFile(path: copy, mode: .createExclusive(permissions: 0o600)).write(bytes, at: 0)
        let quick = try VaultFile(path: copy, copiedPrefix: known)
        let full = try VaultFile(path: copy)
        #expect(quick.structure.fileSize == full.structure.fileSize)
        #expect(quick.structure.committedEnd == full.structure.committedEnd)
        #expect(quick.structure.frames.map(\.location) == full.structure.frames.map(\.location))
        #expect(quick.structure.frames.map(\.headerBytes) == full.structure.frames.map(\.headerBytes))
        #expect(quick.structure.frames.map(\.trailer) == full.structure.frames.map(\.trailer))
        #expect(quick.structure.frames.map(\.chunk) == full.structure.frames.map(\.chunk))
        #expect(quick.structure.groups.map(\.commitFrame) == full.structure.groups.map(\.commitFrame))
        #expect(quick.structure.groups.map(\.storedHead) == full.structure.groups.map(\.storedHead))
        #expect(quick.structure.uncommittedFrames == full.structure.uncommittedFrames)
        quick.verifyCommits(keys: v.keys, trustedKeyrings: [:], attestors: [v.member.publicKey])
        #expect(quick.commits.allVerified)
        #expect(records(quick).0 == [Array("one".utf8), Array("three".utf8)])
    }
}
