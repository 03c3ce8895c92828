import Foundation
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) @_spi(Crypto) import QuireKeys
import Testing

func hexBytes(_ text: String) -> [UInt8] {
    guard let b = bytes(fromHex: text.filter { !$0.isWhitespace }) else { fatalError("bad hex literal in test: \(text)") }
    return b
}

func counting(_ count: Int, from start: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: start + $0) }
}

func secure(_ bytes: [UInt8]) -> SecureBytes {
    var copy = bytes
    return try! SecureBytes(consuming: &copy)
}

func passphrase(_ text: String) -> SecureBytes { secure(Array(text.utf8)) }

/// The recovery key whose secret is 00 01 … 1f.
func countingRecoveryKey() -> RecoveryKey {
    RecoveryKey(secret: try! SymmetricKey(bytes: counting(32)))
}

/// A recovery key named by a label, so tests are repeatable.
func recoveryKey(_ label: String) -> RecoveryKey {
    try! RecoveryKey(using: SeededRandom(label: "recovery " + label))
}

/// No flush, and torn tails cut at once (no sync tool writes into test files).
let fast = WriteOptions(synchronous: false, tornTailQuietSeconds: 0)

/// Cheapest Argon2id cost the limits accept.
let tinyOps: UInt64 = 1
let tinyMem: UInt64 = 8192

final class TemporaryDirectory {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.path + "/quire-keys-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Builds vaults whose keyrings are assembled by hand (no `Quire` facade).
final class KeyringVault {
    let dir = TemporaryDirectory()
    let path: String
    let random: SeededRandom
    let vaultID: VaultID
    /// The root keyring's salt: with the recovery signer and `epoch1`'s
    /// commitment it derives the vault id.
    let salt: [UInt8]
    let recovery: RecoveryKey
    let recoverySigner: Ed25519.KeyPair
    let blobKey: SymmetricKey
    let epoch1: EpochKey
    let epoch2: EpochKey

    init(label: String) {
        path = dir.file("v.quire")
        random = SeededRandom(label: "keyring vault " + label)
        recovery = recoveryKey(label)
        recoverySigner = try! recovery.signingKeyPair()
        salt = random.bytes(16)
        blobKey = try! SymmetricKey(using: random)
        epoch1 = EpochKey(epoch: 1, key: try! SymmetricKey(using: random))
        epoch2 = EpochKey(epoch: 2, key: try! SymmetricKey(using: random))
        vaultID = rootVaultID(signer: recoverySigner.publicKey, keyCommit: epoch1.commitment, salt: salt)
    }

    var recoveryMember: KeyringMember {
        KeyringMember(role: "recovery", publicKey: recoverySigner.publicKey, name: "Recovery key", added: 1_000)
    }

    func recoverySlot(_ key: EpochKey) -> KeySlot {
        // The recovery key always derives a valid public key.
        (try? SlotCrypto.recoverySlot(for: key, recovery: recovery, vaultID: vaultID, random: random)) ?? .unknown(kind: "none", fields: CBORMap())
    }

    /// A keyring body for `key`; a root (no parents) carries the vault salt.
    /// `parents` are (id, epoch key) pairs: links and parent keys are made
    /// from them.
    func body(
        _ key: EpochKey, parents: [(KeyringID, EpochKey)] = [], isEscrowFree: Bool = false, slots: [KeySlot]? = nil,
        members: [KeyringMember]? = nil, removed: [KeyringMember] = [], signer: Ed25519.KeyPair? = nil, reason: String = "test",
        blobKey: SymmetricKey? = nil
    ) -> [UInt8] {
        let content = KeyringContent(
            members: members ?? [recoveryMember], removed: removed, blobKey: blobKey ?? self.blobKey, created: 2_000, reason: reason)
        return try! KeyringBuilder.body(
            epochKey: key, vaultID: vaultID, parents: parents.map { KeyringBuilder.Parent(id: $0.0, key: $0.1) }, isEscrowFree: isEscrowFree,
            slots: (slots ?? [recoverySlot(key)]).map { StoredSlot(slot: $0) }, vaultSalt: parents.isEmpty ? salt : nil, content: content,
            signer: signer ?? recoverySigner, random: random)
    }

    /// Creates the vault with one commit holding the given keyring bodies.
    @discardableResult
    func create(_ keyrings: [(key: EpochKey, body: [UInt8])], extra: [[UInt8]] = []) throws -> VaultFile {
        try VaultFile.create(
            at: path, vaultID: vaultID, keys: KeySet(single: epoch1.withBlobKey(blobKey)), random: random, options: fast, attestWith: recoverySigner
        ) { (tx: PendingCommit) throws(FormatError) in
            for k in keyrings { try tx.appendPlaintext(kind: .keyring, keyID: k.key.id, epoch: k.key.epoch, body: k.body) }
            for p in extra { try tx.appendSealed(kind: .entryRevision, payload: p) }
        }
    }

    /// Appends a commit with more keyrings, written with `epoch1`.
    /// Appends `keyrings` in one commit, made under the epoch-1 key or
    /// `commitKey` (a writer makes a commit that starts an epoch under the
    /// new key, `Spec/format.md §9.2`).
    func append(_ keyrings: [(key: EpochKey, body: [UInt8])], commitKey: EpochKey? = nil) throws {
        let vault = try VaultFile(path: path, writable: true)
        vault.verifyCommits(keys: KeySet(single: epoch1.withBlobKey(blobKey)), trustedKeyrings: [:], attestors: [recoverySigner.publicKey])
        try vault.commit(random: random, options: fast, attestWith: recoverySigner) { (tx: PendingCommit) throws(FormatError) in
            for k in keyrings { try tx.appendPlaintext(kind: .keyring, keyID: k.key.id, epoch: k.key.epoch, body: k.body) }
            tx.commitKey = commitKey
        }
    }

    func unlock(_ credential: Credential) throws(KeyError) -> UnlockedKeys {
        let vault: VaultFile
        do { vault = try VaultFile(path: path) } catch { throw .format(error) }
        return try KeyringEvaluator.unlock(vault, with: credential)
    }

    func unlockResult(_ credential: Credential) -> Result<UnlockedKeys, KeyError> {
        Result { () throws(KeyError) -> UnlockedKeys in try unlock(credential) }
    }

    /// The error unlocking with `credential` throws, or nil.
    func unlockError(_ credential: Credential) -> KeyError? {
        if case .failure(let e) = unlockResult(credential) { return e }
        return nil
    }
}

/// Raw access to a vault file, for damaging it.
struct SystemFileAccess {
    let path: String

    init(path: String) throws { self.path = path }

    func flip(at offset: UInt64, mask: UInt8 = 0x01) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        let b = try handle.read(upToCount: 1) ?? Data()
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data([b[b.startIndex] ^ mask]))
    }
}
