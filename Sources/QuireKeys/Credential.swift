public import QuireCrypto
public import QuireFormat

/// Something that can open a vault (`Spec/keys.md §2`).
public enum Credential: Sendable {
    /// The recovery key.
    case recoveryKey(RecoveryKey)
    /// A passphrase, as UTF-8 bytes in guarded memory.
    case passphrase(SecureBytes)
    /// An enrolled device's Ed25519 key pair.
    case device(Ed25519.KeyPair)
    /// An escrow custodian's X25519 key pair.
    case escrow(X25519.KeyPair)
    /// A raw epoch key (and optionally the blob key), for tests and vectors.
    case epochKey(EpochKey, blobKey: SymmetricKey?)

    /// The error for "this credential opens nothing".
    var wrongError: KeyError {
        switch self {
        case .recoveryKey: .wrongRecoveryKey
        case .passphrase: .wrongPassphrase
        case .device: .wrongDeviceKey
        case .escrow, .epochKey: .wrongKey
        }
    }

    /// The key pair this credential authorizes keyrings with, if any.
    public func signingKeyPair() -> Ed25519.KeyPair? {
        switch self {
        case .recoveryKey(let r): try? r.signingKeyPair()
        case .device(let d): d
        default: nil
        }
    }
}

/// Wrapping and unwrapping epoch keys in key slots (`Spec/format.md §8.3`).
///
/// ```
/// recovery slot:   XChaCha20-Poly1305(recovery wrapping key, epoch key, AD)
/// passphrase slot: XChaCha20-Poly1305(Argon2id(passphrase, salt, ops, mem), epoch key, AD)
/// AD = vault id (16) ‖ epoch (u16 LE) ‖ UTF-8 slot kind
/// device slot:     crypto_box_seal(epoch key ‖ vault id ‖ epoch (u16 LE), X25519(device Ed25519 key))
/// escrow slot:     crypto_box_seal(epoch key ‖ vault id ‖ epoch (u16 LE), escrow X25519 key)
/// ```
public enum SlotCrypto {
    static func associatedData(vaultID: VaultID, epoch: UInt16, kind: String) -> [UInt8] {
        vaultID.bytes + [UInt8(truncatingIfNeeded: epoch), UInt8(truncatingIfNeeded: epoch >> 8)] + Array(kind.utf8)
    }

    static func boxPayload(_ key: EpochKey, vaultID: VaultID) throws(CryptoError) -> SecureBytes {
        let payload = try SecureBytes(zeroedCount: 50)
        payload.withUnsafeMutableBytes { p in
            key.key.withUnsafeBytes { k in p.baseAddress!.copyMemory(from: k.baseAddress!, byteCount: 32) }
            for (i, b) in vaultID.bytes.enumerated() { p[32 + i] = b }
            p[48] = UInt8(truncatingIfNeeded: key.epoch)
            p[49] = UInt8(truncatingIfNeeded: key.epoch >> 8)
        }
        return payload
    }

    static func wrap(_ key: EpochKey, under wrappingKey: SymmetricKey, vaultID: VaultID, kind: String, random: any RandomSource) -> (nonce: [UInt8], wrapped: [UInt8]) {
        let nonce = random.bytes(24)
        var plain = key.key.storage.copyBytes()
        defer { wipe(&plain) }
        let wrapped = XChaCha20Poly1305.seal(plain, key: wrappingKey, nonce: nonce, authenticating: associatedData(vaultID: vaultID, epoch: key.epoch, kind: kind))
        return (nonce, wrapped)
    }

    /// A recovery slot for `key`.
    public static func recoverySlot(for key: EpochKey, recovery: RecoveryKey, vaultID: VaultID, random: any RandomSource) -> KeySlot {
        let (nonce, wrapped) = wrap(key, under: recovery.wrappingKey, vaultID: vaultID, kind: "recovery", random: random)
        return .recovery(nonce: nonce, wrapped: wrapped)
    }

    /// A passphrase slot for `key`, running Argon2id with the given cost.
    ///
    /// - Throws: ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)`` for
    ///   costs outside the limits readers accept.
    public static func passphraseSlot(
        for key: EpochKey, passphrase: SecureBytes, opsLimit: UInt64, memLimitBytes: UInt64, vaultID: VaultID,
        random: any RandomSource
    ) throws(KeyError) -> KeySlot {
        try checkLimits(opsLimit: opsLimit, memLimitBytes: memLimitBytes)
        let salt = random.bytes(Argon2id.saltByteCount)
        let wrappingKey: SymmetricKey
        do {
            wrappingKey = try Argon2id.deriveKey(passphrase: passphrase, salt: salt, opsLimit: opsLimit, memLimitBytes: memLimitBytes)
        } catch {
            throw .kdfLimitsExceeded(opsLimit: opsLimit, memLimitBytes: memLimitBytes)
        }
        let (nonce, wrapped) = wrap(key, under: wrappingKey, vaultID: vaultID, kind: "passphrase", random: random)
        return .passphrase(salt: salt, opsLimit: opsLimit, memLimitBytes: memLimitBytes, nonce: nonce, wrapped: wrapped)
    }

    /// A device slot for `key`, sealed to the device's Ed25519 public key
    /// converted to X25519.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` for a public key that
    ///   is not a valid point.
    public static func deviceSlot(for key: EpochKey, devicePublicKey: [UInt8], vaultID: VaultID, random: any RandomSource) throws(KeyError) -> KeySlot {
        do {
            let x = try Ed25519.agreementPublicKey(from: devicePublicKey)
            return .device(box: try X25519.seal(boxPayload(key, vaultID: vaultID), to: x, using: random))
        } catch {
            throw .operationRefused(reason: "the device key is not a valid public key")
        }
    }

    /// An escrow slot for `key`, sealed to an X25519 public key.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` for an invalid key.
    public static func escrowSlot(for key: EpochKey, escrowPublicKey: [UInt8], vaultID: VaultID, random: any RandomSource) throws(KeyError) -> KeySlot {
        do {
            return .escrow(box: try X25519.seal(boxPayload(key, vaultID: vaultID), to: escrowPublicKey, using: random))
        } catch {
            throw .operationRefused(reason: "the escrow key is not a valid X25519 public key")
        }
    }

    /// Rejects Argon2id costs outside the reader limits before any work.
    ///
    /// - Throws: ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)``.
    public static func checkLimits(opsLimit: UInt64, memLimitBytes: UInt64) throws(KeyError) {
        guard opsLimit >= 1, opsLimit <= Limits.maxArgon2OpsLimit,
            memLimitBytes >= Limits.minArgon2MemLimitBytes, memLimitBytes <= Limits.maxArgon2MemLimitBytes
        else {
            throw .kdfLimitsExceeded(opsLimit: opsLimit, memLimitBytes: memLimitBytes)
        }
    }

    /// Tries to unwrap the epoch key of `epoch` from `slot` with
    /// `credential`; nil when the slot is of another kind or does not open.
    ///
    /// - Parameter passphraseKeys: Argon2id results by salt, so one
    ///   passphrase runs the KDF once per distinct slot.
    /// - Throws: ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)``.
    static func open(
        _ slot: KeySlot, with credential: Credential, vaultID: VaultID, epoch: UInt16,
        passphraseKeys: inout [[UInt8]: SymmetricKey]
    ) throws(KeyError) -> SymmetricKey? {
        let ad = associatedData(vaultID: vaultID, epoch: epoch, kind: slot.kind)
        switch (slot, credential) {
        case let (.recovery(nonce, wrapped), .recoveryKey(recovery)):
            return unwrap(wrapped, nonce: nonce, key: recovery.wrappingKey, ad: ad)
        case let (.passphrase(salt, ops, mem, nonce, wrapped), .passphrase(passphrase)):
            try checkLimits(opsLimit: ops, memLimitBytes: mem)
            let cacheKey = salt + littleEndian(ops) + littleEndian(mem)
            let wrappingKey: SymmetricKey
            if let cached = passphraseKeys[cacheKey] {
                wrappingKey = cached
            } else {
                do {
                    wrappingKey = try Argon2id.deriveKey(passphrase: passphrase, salt: salt, opsLimit: ops, memLimitBytes: mem)
                } catch {
                    throw .kdfLimitsExceeded(opsLimit: ops, memLimitBytes: mem)
                }
                passphraseKeys[cacheKey] = wrappingKey
            }
            return unwrap(wrapped, nonce: nonce, key: wrappingKey, ad: ad)
        case let (.device(box), .device(pair)):
            guard let agreement = try? pair.agreementKeyPair() else { return nil }
            return openBox(box, with: agreement, vaultID: vaultID, epoch: epoch)
        case let (.escrow(box), .escrow(pair)):
            return openBox(box, with: pair, vaultID: vaultID, epoch: epoch)
        default:
            return nil
        }
    }

    private static func littleEndian(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }

    private static func unwrap(_ wrapped: [UInt8], nonce: [UInt8], key: SymmetricKey, ad: [UInt8]) -> SymmetricKey? {
        guard var plain = try? XChaCha20Poly1305.open(wrapped, key: key, nonce: nonce, authenticating: ad) else { return nil }
        defer { wipe(&plain) }
        return try? SymmetricKey(bytes: plain)
    }

    private static func openBox(_ box: [UInt8], with pair: X25519.KeyPair, vaultID: VaultID, epoch: UInt16) -> SymmetricKey? {
        guard let payload = try? pair.open(box), payload.count == 50 else { return nil }
        let bound = payload.withUnsafeBytes { p in
            Array(p[32..<48]) == vaultID.bytes && p[48] == UInt8(truncatingIfNeeded: epoch) && p[49] == UInt8(truncatingIfNeeded: epoch >> 8)
        }
        guard bound else { return nil }
        return payload.withUnsafeBytes { p in try? SymmetricKey(bytes: p[0..<32]) }
    }
}
