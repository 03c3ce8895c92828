@_spi(Crypto) import QuireCrypto
import QuireSystem
import Testing

@testable @_spi(Format) import QuireFormat

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
        try vault.commit(random: SeededRandom(label: "c2"), options: fast, attestWith: v.member) {
            (tx: PendingCommit) throws(FormatError) in
            _ = try tx.appendBlob(from: MemoryByteSource(SeededRandom(label: "photo").bytes(200_000)), mediaType: "image/jpeg")
        }
        try vault.commit(random: SeededRandom(label: "c3"), options: fast, attestWith: v.member) {
            (tx: PendingCommit) throws(FormatError) in
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

    /// A prefix taken from a scan shares the scan's frames
    /// (``FrameList/keepingFirst(_:)``): it holds the same frames, a prefix
    /// taken from it or from it grown holds the same frames again, and a
    /// change to it — an append, a removal inside the shared frames —
    /// changes neither the scan nor the prefix it came from.
    @Test func aTakenPrefixSharesItsFramesAndAChangeCopiesThem() throws {
        let v = RawKeyVault(label: "shared frames")
        try v.create([Array("one".utf8)])
        let vault = try v.open(writable: true)
        for label in ["two", "three"] {
            try vault.commit(random: SeededRandom(label: label), options: fast, attestWith: v.member) {
                (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: Array(label.utf8), compress: false)
            }
        }
        let original = try VaultFile(path: v.path)
        let all = original.structure.frames
        let locations = all.map(\.location)
        let known = try #require(VaultScanner.prefix(of: original.structure, groups: 2))
        let n = known.frames.count
        #expect(n >= 2 && n + 2 <= all.count)
        #expect(known.frames.map(\.location) == Array(locations[0..<n]))
        #expect(known.frames.map(\.trailer) == all[0..<n].map(\.trailer))
        #expect(known.frames.keepingFirst(n - 1).map(\.location) == Array(locations[0..<(n - 1)]))

        var grown = known.frames
        grown.append(all[n])
        grown.append(all[n + 1])
        #expect(grown.map(\.location) == Array(locations[0..<(n + 2)]))
        for i in grown.indices {
            #expect(grown.header(at: i) == all[i].header && grown.location(at: i) == all[i].location)
            #expect(grown.end(at: i) == all[i].end && grown.kind(at: i) == all[i].header.kind && grown.chunk(at: i) == all[i].chunk)
        }
        // A prefix of a grown prefix, past its shared frames.
        #expect(grown.keepingFirst(n + 1).map(\.location) == Array(locations[0..<(n + 1)]))
        #expect(grown.keepingFirst(n + 1).map(\.trailer) == all[0..<(n + 1)].map(\.trailer))

        var changed = grown
        changed.removeSubrange(0..<1)
        #expect(changed.map(\.location) == Array(locations[1..<(n + 2)]))
        #expect(grown.map(\.location) == Array(locations[0..<(n + 2)]))
        #expect(known.frames.map(\.location) == Array(locations[0..<n]))
        #expect(original.structure.frames.map(\.location) == locations)
    }

    /// Two copies that part after their second commit: the shared prefix
    /// is those two commit groups, and the copy opened from it is what a
    /// full scan finds.
    @Test func sharedPrefixOfTwoCopies() throws {
        let v = RawKeyVault(label: "shared prefix")
        try v.create([Array("one".utf8)])
        let vault = try v.open(writable: true)
        try vault.commit(random: SeededRandom(label: "two"), options: fast, attestWith: v.member) {
            (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: Array("two".utf8), compress: false)
        }
        let copy = v.dir.file("copy.quire")
        try SystemFile(path: copy, mode: .createExclusive(permissions: 0o600)).write(try fileBytes(v.path), at: 0)
        for (path, label) in [(v.path, "mine"), (copy, "theirs")] {
            let w = try VaultFile(path: path, writable: true)
            w.keys = v.keys
            try w.commit(random: SeededRandom(label: label), options: fast, attestWith: v.member) {
                (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: Array(label.utf8), compress: false)
            }
        }
        let mine = try VaultFile(path: v.path)
        let shared = try #require(try mine.sharedPrefix(withFileAt: copy))
        #expect(shared.groups.count == 2)
        let quick = try VaultFile(path: copy, copiedPrefix: shared)
        let full = try VaultFile(path: copy)
        #expect(quick.structure.frames.map(\.location) == full.structure.frames.map(\.location))
        #expect(quick.structure.frames.map(\.trailer) == full.structure.frames.map(\.trailer))
        #expect(quick.structure.groups.map(\.storedHead) == full.structure.groups.map(\.storedHead))
        #expect(quick.structure.committedEnd == full.structure.committedEnd)
        quick.verifyCommits(keys: v.keys, trustedKeyrings: [:], attestors: [v.member.publicKey])
        #expect(records(quick).0 == [Array("one".utf8), Array("two".utf8), Array("theirs".utf8)])
        // A file that shares nothing but the header: no prefix.
        let other = RawKeyVault(label: "another vault")
        try other.create([Array("x".utf8)])
        #expect(try mine.sharedPrefix(withFileAt: other.path) == nil)
    }
}
