// What someone who can write the vault file but holds no key can append
// (`Spec/threat-model.md`): keyrings built from the file's public data
// alone — public parts copied or made up, a random "sealed" part no key
// opens — committed by a commit frame whose head is random bytes. The
// decoy and flood benchmarks measure what such frames cost a reader.

@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import QuireSystem

enum KeylessWriter {
    /// Bytes of random "sealed part" in each made-up keyring: about what a
    /// real keyring's padded inner part (members, blob key, one parent key)
    /// takes.
    static let sealedByteCount = 512

    /// The public data a keyless writer can read from the file: the newest
    /// trusted keyring's id, epoch and slots (everything in a keyring's public
    /// part), found by parsing the keyring frames without any key.
    struct PublicView {
        /// The id of the last keyring frame in the file.
        let newestID: KeyringID
        /// Its public part.
        let newest: KeyringPublic
        /// The key id of the last commit (in its frame header).
        let commitKeyID: KeyID
    }

    /// Reads the public view of the vault at `path`.
    static func publicView(of path: String) throws -> PublicView {
        let structure = try VaultScanner.scan(path: path)
        let committed = structure.frames[0..<structure.committedFrameCount]
        guard let frame = committed.last(where: { $0.header.kind == .keyring && $0.checksumIntact == true }),
            let body = frame.plaintextBody,
            let commit = committed.last(where: { $0.isCommit })
        else { throw BenchError("no keyring or commit in \(path)") }
        let record = try KeyringRecord(body: body, location: frame.location)
        return PublicView(newestID: KeyringID(unchecked: frame.trailer), newest: record.publicPart, commitKeyID: commit.header.keyID)
    }

    /// One made-up keyring frame (header, body, body hash): epoch `epoch`, a
    /// random key commitment, `parents` with random links, the given slots
    /// and a random sealed part.
    static func keyringFrame(epoch: UInt32, parents: [KeyringID], slots: [KeySlot], random: any RandomSource) -> [UInt8] {
        let commitment = random.bytes(32)
        let publicPart = KeyringPublic(
            epoch: epoch, keyCommit: commitment, parents: parents, links: parents.map { _ in random.bytes(KeyringRecord.linkByteCount) },
            isEscrowFree: false,
            slotEntries: slots.map { StoredSlot(slot: $0) })
        let record = KeyringRecord(publicPart: publicPart, nonce: random.bytes(24), sealed: random.bytes(sealedByteCount))
        let body = record.encodedBody()
        let header = FrameHeader(
            kind: .keyring, flags: 0, keyID: KeyID(commitment: commitment), bodyLength: UInt32(body.count + FrameHeader.bodyHashByteCount))
        return header.encoded() + body + BLAKE2b.hash(body, byteCount: FrameHeader.bodyHashByteCount)
    }

    /// A commit frame whose head and sealed attestation are random bytes,
    /// under key id `keyID`: it covers the frames before it, and verifies
    /// with no key.
    static func junkCommitFrame(keyID: KeyID, random: any RandomSource) -> [UInt8] {
        CommitChain.commitHeader(keyID: keyID).encoded() + random.bytes(CommitChain.bodyByteCount)
    }

    /// Appends `frames` and one junk commit to the end of the file at `path`
    /// (which must end with a commit: no torn tail).
    static func append(_ frames: [[UInt8]], commitKeyID: KeyID, to path: String, random: any RandomSource) throws {
        let file = try SystemFile(path: path, mode: .readWrite)
        var bytes: [UInt8] = []
        for f in frames { bytes += f }
        bytes += junkCommitFrame(keyID: commitKeyID, random: random)
        try file.write(bytes, at: try file.size())
    }

    /// `count` passphrase slots that copy the public fields of `genuine` (salt,
    /// cost, public key) with random boxes: a reader's Argon2id result
    /// matches them, so it must open each box (one X25519 agreement each).
    static func copiedPassphraseSlots(_ count: Int, like genuine: KeySlot, random: any RandomSource) throws -> [KeySlot] {
        guard case .passphrase(let salt, let ops, let mem, let publicKey, _) = genuine else { throw BenchError("not a passphrase slot") }
        return (0..<count).map { _ in
            .passphrase(salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: publicKey, box: random.bytes(KeySlot.boxByteCount))
        }
    }

    /// `count` device slots with random boxes: a device tries each (one
    /// X25519 agreement each), since slots do not name their holder.
    static func deviceSlots(_ count: Int, random: any RandomSource) -> [KeySlot] {
        (0..<count).map { _ in .device(box: random.bytes(KeySlot.boxByteCount)) }
    }
}
