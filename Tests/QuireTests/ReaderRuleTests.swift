import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import Testing

/// Reader rules the test vectors found the library breaking.
@Suite struct ReaderRuleTests {
    /// Appends one commit of a plaintext frame of `kind` with the vault's
    /// current write key (or `key`), attested by the recovery key.
    func appendUnknown(_ path: String, kind: UInt8, recovery: RecoveryKey, key: EpochKey? = nil) throws -> FrameLocation {
        let file = try VaultFile(path: path, writable: true)
        let unlocked = try KeyringEvaluator.unlock(file, with: .recoveryKey(recovery))
        var keys = unlocked.keys
        if let key {
            keys.add(key)
            keys.writeKey = key
        }
        file.verifyCommits(keys: keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
        var location: FrameLocation?
        try file.commit(random: SeededRandom(label: "unknown kind \(kind)"), options: fast, attestWith: try recovery.signingKeyPair()) {
            (tx: PendingCommit) throws(FormatError) in
            location = try tx.appendPlaintext(kind: RecordKind(rawValue: kind), keyID: tx.key.id, body: Array("from a newer version".utf8), trusted: false)
        }
        return location!
    }

    @Test func theBodyHashOfAnUnknownKindIsNotChecked() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        _ = vault
        let path = dir.file("v.quire")
        let at = try appendUnknown(path, kind: 0xbe, recovery: recovery)
        var bytes = dmgRead(path)
        bytes[Int(at.offset) + 16 + 2] ^= 0x04
        dmgWrite(path, bytes)
        // A reader skips a kind it does not know without checking its body
        // hash (Spec/format.md §4.2); merge and compaction check it.
        let reopened = try dmgOpen(path, recovery)
        #expect(dmgIssues(reopened).map(\.description) == [])
    }

    @Test func anUnknownCriticalKindInAStaleCommitIsReportedOnceAsItself() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        let old = vault.unlocked.keys.writeKey!
        try vault.rotateKeys(now: 1_700_000_100_000)
        let path = dir.file("v.quire")
        let at = try appendUnknown(path, kind: 0x3f, recovery: recovery, key: old)
        let reopened = try dmgOpen(path, recovery)
        let commit = reopened.file.structure.frames[at.index + 1].location.offset
        // Step 1 of the release rule fails first: unknown_critical_kind at
        // the frame, and stale_epoch only at the commit (Spec/format.md §9.3).
        #expect(dmgIssues(reopened).map(\.description) == ["unknown_critical_kind@\(at.offset)#\(at.index)!", "stale_epoch@\(commit)#\(at.index + 1)!"])
    }
}

extension ReaderRuleTests {
    @Test func aStreamShorterThanItsManifestSaysIsBadPadding() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        _ = vault
        let path = dir.file("v.quire")
        let file = try VaultFile(path: path, writable: true)
        let unlocked = try KeyringEvaluator.unlock(file, with: .recoveryKey(recovery))
        file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
        let key = unlocked.keys.writeKey!
        let random = SeededRandom(label: "short stream")
        // 3,000 bytes padded to Padmé(3,001) = 3,072 in one final chunk; the
        // manifest claims 65,000 bytes, which also takes one chunk.
        let content = random.bytes(3000)
        let stream = content + [0x80] + [UInt8](repeating: 0, count: Int(Padding.streamByteCount(contentByteCount: 3000)) - 3001)
        let streamID = StreamID(using: random)
        var chunk = [UInt8](repeating: 0, count: FrameHeader.byteCount + SealedFrame.chunkBodyLength(plaintextCount: stream.count))
        try stream.withUnsafeBytes { p in
            try chunk.withUnsafeMutableBytes { raw in
                try SealedFrame.sealChunk(plaintext: p, into: raw, chunk: ChunkHeader(stream: streamID, index: 0, isFinal: true), key: key, vaultID: file.vaultID, random: random)
            }
        }
        let manifest = BlobManifest(blob: BlobID(content: content, blobKey: key.blobKey!), stream: streamID, byteCount: 65_000)
        #expect(manifest.chunkCount == 1)
        var at: FrameLocation?
        try file.commit(random: random, options: fast, attestWith: try recovery.signingKeyPair()) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendRaw(frame: chunk)
            at = try tx.appendSealed(kind: .blobManifest, payload: manifest.encoded(), compress: false)
        }
        // The chunk count fits (check 6), the stream's length does not (check 7).
        let reopened = try dmgOpen(path, recovery)
        #expect(dmgIssues(reopened).map(\.description) == ["bad_padding@\(at!.offset)#\(at!.index)!"])
    }
}
