import Foundation
@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat

/// Wrapping and unwrapping epoch keys in key slots (`Spec/format.md §8.3`,
/// `Spec/keys.md §2`).
///
/// Every slot is a sealed box (`crypto_box_seal`, X25519) of
///
/// ```
/// payload = epoch key (32) ‖ vault id (16) ‖ epoch (u32 LE)        → box of 100 bytes
/// ```
///
/// to one X25519 public key:
///
/// | slot         | recipient key                                                        |
/// |--------------|----------------------------------------------------------------------|
/// | `device`     | the device's Ed25519 key, converted (`crypto_sign_ed25519_pk_to_curve25519`) |
/// | `recovery`   | the recovery key's signing key (seed `KDF(R, 2, "quire rk")`), converted |
/// | `passphrase` | `crypto_box_seed_keypair(Argon2id(passphrase, salt, opsLimit, memLimit))` |
/// | `escrow`     | the custodian's X25519 key                                           |
///
/// Because every recipient is a public key, any member can wrap a new epoch
/// to all of them — a device that rotates needs neither the recovery key nor
/// the passphrase.
@_spi(Format) public enum SlotCrypto {
    /// The 50-byte payload sealed in every slot, in guarded memory.
    /// A slot's plaintext: `epoch key (32) ‖ vault id (16) ‖ u32(epoch)`.
    static let payloadByteCount = 52

    static func boxPayload(_ key: EpochKey, vaultID: VaultID) throws(CryptoError) -> SecureBytes {
        let payload = try SecureBytes(zeroedCount: payloadByteCount)
        payload.withUnsafeMutableBytes { p in
            key.key.withUnsafeBytes { k in p.baseAddress!.copyMemory(from: k.baseAddress!, byteCount: 32) }
            for (i, b) in vaultID.bytes.enumerated() { p[32 + i] = b }
            for i in 0..<4 { p[48 + i] = UInt8(truncatingIfNeeded: key.epoch >> (8 * UInt32(i))) }
        }
        return payload
    }

    /// Seals `key` to an X25519 public key.
    static func seal(_ key: EpochKey, to recipient: [UInt8], vaultID: VaultID, random: any RandomSource, what: String) throws(KeyError)
        -> [UInt8]
    {
        do {
            return try X25519.seal(boxPayload(key, vaultID: vaultID), to: recipient, using: random)
        } catch {
            throw .operationRefused(reason: "the \(what) is not a valid public key")
        }
    }

    /// Seals `key` to the X25519 form of an Ed25519 public key.
    static func seal(_ key: EpochKey, toSigningKey publicKey: [UInt8], vaultID: VaultID, random: any RandomSource, what: String)
        throws(KeyError) -> [UInt8]
    {
        let agreement: [UInt8]
        do { agreement = try Ed25519.agreementPublicKey(from: publicKey) } catch {
            throw .operationRefused(reason: "the \(what) is not a valid public key")
        }
        return try seal(key, to: agreement, vaultID: vaultID, random: random, what: what)
    }

    /// A recovery slot for `key`, sealed to the recovery member's Ed25519
    /// public key (``RecoveryKey/signingKeyPair()``'s public half). A device
    /// that rotates finds that key in the keyring's members.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` for a key that is not a valid point.
    public static func recoverySlot(for key: EpochKey, recoveryPublicKey: [UInt8], vaultID: VaultID, random: any RandomSource)
        throws(KeyError) -> KeySlot
    {
        .recovery(box: try seal(key, toSigningKey: recoveryPublicKey, vaultID: vaultID, random: random, what: "recovery key"))
    }

    /// A recovery slot for `key`, from the recovery key itself.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` when the key pair cannot be derived (out of secure memory).
    public static func recoverySlot(for key: EpochKey, recovery: RecoveryKey, vaultID: VaultID, random: any RandomSource) throws(KeyError)
        -> KeySlot
    {
        try recoverySlot(for: key, recoveryPublicKey: recovery.publicKey(), vaultID: vaultID, random: random)
    }

    /// The X25519 key pair a passphrase derives for one slot's salt and cost:
    /// `crypto_box_seed_keypair(Argon2id(NFC(passphrase), salt, opsLimit, memLimitBytes))`.
    /// The passphrase is mapped to Unicode NFC first (``normalized(_:)``), so
    /// "é" typed as U+0065 U+0301 opens what U+00E9 made (`Spec/keys.md §2.3`).
    ///
    /// - Throws: ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)`` for a
    ///   cost outside the limits (checked before any work) or one libsodium refuses.
    public static func passphraseKeyPair(
        _ passphrase: SecureBytes, salt: [UInt8], opsLimit: UInt64, memLimitBytes: UInt64
    ) throws(KeyError) -> X25519.KeyPair {
        try checkLimits(opsLimit: opsLimit, memLimitBytes: memLimitBytes)
        do {
            let nfc = try normalized(passphrase)
            let seed = try Argon2id.deriveKey(passphrase: nfc, salt: salt, opsLimit: opsLimit, memLimitBytes: memLimitBytes)
            return try X25519.KeyPair(seed: seed.storage)
        } catch {
            // Guarded memory running out is not the slot's cost (Spec/format.md §5.1).
            if case .outOfSecureMemory = error { throw .format(.outOfGuardedMemory) }
            throw .kdfLimitsExceeded(opsLimit: opsLimit, memLimitBytes: memLimitBytes)
        }
    }

    /// The passphrase's UTF-8 bytes in Unicode Normalization Form C
    /// (`Spec/keys.md §2.3`, `Spec/format.md §8.3`), by Foundation's
    /// canonical composition. ASCII is NFC already and is returned as it is,
    /// in guarded memory; other text passes through a `String`, which cannot
    /// be wiped (the byte copy is). Bytes that are not valid UTF-8 are
    /// returned as given.
    ///
    /// - Throws: ``CryptoError`` when guarded memory cannot be had.
    package static func normalized(_ passphrase: SecureBytes) throws(CryptoError) -> SecureBytes {
        if passphrase.withUnsafeBytes({ $0.allSatisfy { $0 < 0x80 } }) { return passphrase }
        var bytes = passphrase.copyBytes()
        defer { wipe(&bytes) }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.utf8.elementsEqual(bytes) else { return passphrase }
        var nfc = Array(text.precomposedStringWithCanonicalMapping.utf8)
        if nfc == bytes {
            wipe(&nfc)
            return passphrase
        }
        return try SecureBytes(guardedConsuming: &nfc)
    }

    /// A passphrase slot for `key` with a fresh random salt, running Argon2id
    /// once with the given cost (the cost is in the slot).
    ///
    /// - Parameters:
    ///   - passphrase: UTF-8 bytes, mapped to Unicode NFC here (`Spec/format.md §8.3`).
    ///   - opsLimit: Argon2id passes, 1…8.
    ///   - memLimitBytes: Argon2id memory in bytes, 8 KiB…1 GiB.
    /// - Throws: ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)``.
    public static func passphraseSlot(
        for key: EpochKey, passphrase: SecureBytes, opsLimit: UInt64, memLimitBytes: UInt64, vaultID: VaultID,
        random: any RandomSource
    ) throws(KeyError) -> KeySlot {
        let salt = random.bytes(Argon2id.saltByteCount)
        let pair = try passphraseKeyPair(passphrase, salt: salt, opsLimit: opsLimit, memLimitBytes: memLimitBytes)
        let box = try seal(key, to: pair.publicKey, vaultID: vaultID, random: random, what: "passphrase key")
        return .passphrase(salt: salt, opsLimit: opsLimit, memLimitBytes: memLimitBytes, publicKey: pair.publicKey, box: box)
    }

    /// The same passphrase (same salt, cost and public key as `existing`),
    /// wrapping another epoch key: what a rotation does without knowing the passphrase.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` when `existing` is not
    ///   a passphrase slot or its public key is not a valid point.
    public static func passphraseSlot(for key: EpochKey, rewrapping existing: KeySlot, vaultID: VaultID, random: any RandomSource)
        throws(KeyError) -> KeySlot
    {
        guard case .passphrase(let salt, let ops, let mem, let publicKey, _) = existing else {
            throw .operationRefused(reason: "not a passphrase slot")
        }
        let box = try seal(key, to: publicKey, vaultID: vaultID, random: random, what: "passphrase key")
        return .passphrase(salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: publicKey, box: box)
    }

    /// A device slot for `key`, sealed to the device's Ed25519 public key
    /// converted to X25519.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` for a public key that
    ///   is not a valid point.
    public static func deviceSlot(for key: EpochKey, devicePublicKey: [UInt8], vaultID: VaultID, random: any RandomSource) throws(KeyError)
        -> KeySlot
    {
        .device(box: try seal(key, toSigningKey: devicePublicKey, vaultID: vaultID, random: random, what: "device key"))
    }

    /// An escrow slot for `key`, sealed to an X25519 public key.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` for an invalid key.
    public static func escrowSlot(for key: EpochKey, escrowPublicKey: [UInt8], vaultID: VaultID, random: any RandomSource) throws(KeyError)
        -> KeySlot
    {
        .escrow(box: try seal(key, to: escrowPublicKey, vaultID: vaultID, random: random, what: "escrow key"))
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

    /// Argon2id results of one unlock, by salt and cost, and how many were run.
    /// Whether this task may make passphrase slots below the writer floor
    /// (tests and test vectors only, which need Argon2id to run fast; readers
    /// accept such slots anyway).
    @_spi(Testing) @TaskLocal public static var allowsWeakPassphraseCost = false

    /// Checks a passphrase cost a writer is asked to use: within the reader
    /// bounds, and at least the writer floor of ``Limits/writerMinArgon2OpsLimit``
    /// passes over ``Limits/writerMinArgon2MemLimitBytes`` (`Spec/keys.md §2.3`).
    ///
    /// - Throws: ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)``.
    public static func checkWriterCost(opsLimit: UInt64, memLimitBytes: UInt64) throws(KeyError) {
        try checkLimits(opsLimit: opsLimit, memLimitBytes: memLimitBytes)
        if allowsWeakPassphraseCost { return }
        guard opsLimit >= Limits.writerMinArgon2OpsLimit, memLimitBytes >= Limits.writerMinArgon2MemLimitBytes else {
            throw .kdfLimitsExceeded(opsLimit: opsLimit, memLimitBytes: memLimitBytes)
        }
    }

    /// What one unlock keeps from slot to slot: a passphrase's Argon2id
    /// results, and the X25519 key pair of a device or the recovery key.
    struct PassphraseCache {
        var pairs: [[UInt8]: X25519.KeyPair] = [:]
        /// The X25519 form of the device's or the recovery key's Ed25519 key
        /// pair, made for the first slot tried and kept for the others:
        /// converting the public key costs about as much as opening a box,
        /// and the recovery key's pair must be derived first (a KDF and a
        /// scalar multiplication), so redoing it for every slot more than
        /// doubled the cost of each slot a device tries.
        var agreementPair: X25519.KeyPair?
        /// Parameter sets not run because the per-open budget was spent.
        var skippedSets = Set<[UInt8]>()
        /// The parameter triples chosen for the derivation budget
        /// (``choosePassphraseRuns(_:keyrings:cache:)``): slots with any other
        /// triple are untried.
        var chosen = Set<[UInt8]>()
        /// How many parameter sets were not run for the budget.
        var skipped: Int { skippedSets.count }
    }

    /// Chooses the `(salt, opsLimit, memLimit)` triples a passphrase's
    /// Argon2id runs go to, and runs them (`Spec/keys.md §2.3`, the
    /// derivation budget), in two passes that each stop at the first triple
    /// whose derived public key a slot with that triple names:
    ///
    /// 1. the first ``Limits/maxPassphraseDerivations`` distinct triples of
    ///    the slots newest keyring first, in slot order within a keyring;
    /// 2. only when no triple of the first pass named the derived key, up to
    ///    ``Limits/maxPassphraseDerivations`` more in file order (the
    ///    bootstrap's order), skipping the triples already run.
    ///
    /// Slots over the reader limits are skipped (they are refused when
    /// tried). The slots of triples chosen but not run belong to earlier
    /// passphrases, whose keys the newer keyring's parents reach. The first
    /// pass makes the current passphrase, in the newest keyring, cost one run
    /// however often it was changed; the second keeps decoy keyrings a
    /// keyless writer appends from locking the right passphrase out. At most
    /// twice ``Limits/maxPassphraseDerivations`` runs in all.
    ///
    /// - Parameter keyrings: the slots of each keyring that may be tried, in
    ///   file order.
    /// - Throws: ``KeyError`` when Argon2id cannot run.
    static func choosePassphraseRuns(
        _ passphrase: SecureBytes, keyrings: [[KeySlot]], cache: inout PassphraseCache
    ) throws(KeyError) {
        var publicKeys: [[UInt8]: [[UInt8]]] = [:]
        var triples: [[UInt8]: (salt: [UInt8], ops: UInt64, mem: UInt64)] = [:]
        for slot in keyrings.joined() {
            guard case .passphrase(let salt, let ops, let mem, let publicKey, _) = slot,
                (try? checkLimits(opsLimit: ops, memLimitBytes: mem)) != nil
            else { continue }
            let key = salt + littleEndian(ops) + littleEndian(mem)
            triples[key] = (salt, ops, mem)
            publicKeys[key, default: []].append(publicKey)
        }
        /// The first distinct triples of `slots` not in `skipping`.
        func choose(_ slots: some Sequence<KeySlot>, skipping: Set<[UInt8]>) -> [[UInt8]] {
            var order: [[UInt8]] = []
            for slot in slots where order.count < Limits.maxPassphraseDerivations {
                guard case .passphrase(let salt, let ops, let mem, _, _) = slot else { continue }
                let key = salt + littleEndian(ops) + littleEndian(mem)
                if triples[key] != nil, !skipping.contains(key), !order.contains(key) { order.append(key) }
            }
            return order
        }
        /// Runs `order` up to the first triple a slot names; true when one does.
        func run(_ order: [[UInt8]]) throws(KeyError) -> Bool {
            for key in order {
                let pair: X25519.KeyPair
                if let cached = cache.pairs[key] {
                    pair = cached
                } else {
                    let t = triples[key]!
                    pair = try passphraseKeyPair(passphrase, salt: t.salt, opsLimit: t.ops, memLimitBytes: t.mem)
                    cache.pairs[key] = pair
                }
                if publicKeys[key, default: []].contains(where: { constantTimeEqual(pair.publicKey, $0) }) { return true }
            }
            return false
        }
        let first = choose(keyrings.reversed().joined(), skipping: [])
        cache.chosen.formUnion(first)
        if try run(first) { return }
        let second = choose(keyrings.joined(), skipping: Set(first))
        cache.chosen.formUnion(second)
        _ = try run(second)
    }

    /// Tries to unwrap the epoch key of `epoch` from `slot` with
    /// `credential`; nil when the slot is of another kind or does not open.
    ///
    /// - Parameter cache: Argon2id results by salt and cost, run before by
    ///   ``choosePassphraseRuns(_:keyrings:cache:)``: a passphrase slot whose
    ///   triple was not run does not open.
    /// - Throws: ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)``.
    static func open(
        _ slot: KeySlot, with credential: Credential, vaultID: VaultID, epoch: UInt32, cache: inout PassphraseCache
    ) throws(KeyError) -> SymmetricKey? {
        switch (slot, credential) {
        case (.recovery(let box), .recoveryKey(let recovery)):
            let pair: X25519.KeyPair
            if let cached = cache.agreementPair {
                pair = cached
            } else {
                pair = try guarded { () throws(CryptoError) in try recovery.signingKeyPair().agreementKeyPair() }
            }
            cache.agreementPair = pair
            return try openBox(box, with: pair, vaultID: vaultID, epoch: epoch)
        case (.passphrase(let salt, let ops, let mem, let publicKey, let box), .passphrase):
            try checkLimits(opsLimit: ops, memLimitBytes: mem)
            let cacheKey = salt + littleEndian(ops) + littleEndian(mem)
            // Only the triples chosen for the budget were run: a slot with
            // another is untried; one chosen but not run belongs to an
            // earlier passphrase than a newer slot's.
            guard let pair = cache.pairs[cacheKey] else {
                if !cache.chosen.contains(cacheKey) { cache.skippedSets.insert(cacheKey) }
                return nil
            }
            // A wrong passphrase derives another public key: no box to try.
            guard constantTimeEqual(pair.publicKey, publicKey) else { return nil }
            return try openBox(box, with: pair, vaultID: vaultID, epoch: epoch)
        case (.device(let box), .device(let pair)):
            let agreement: X25519.KeyPair
            if let cached = cache.agreementPair {
                agreement = cached
            } else {
                agreement = try guarded { () throws(CryptoError) in try pair.agreementKeyPair() }
            }
            cache.agreementPair = agreement
            return try openBox(box, with: agreement, vaultID: vaultID, epoch: epoch)
        case (.escrow(let box), .escrow(let pair)):
            return try openBox(box, with: pair, vaultID: vaultID, epoch: epoch)
        default:
            return nil
        }
    }

    private static func littleEndian(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }

    /// True when `slot` is of the kind `credential` tries (`Spec/format.md
    /// §8.5` step 2): a device key on device slots, the recovery key on the
    /// recovery slot, a passphrase on passphrase slots, an escrow key on
    /// escrow slots.
    static func isOwnKind(_ slot: KeySlot, of credential: Credential) -> Bool {
        switch (slot, credential) {
        case (.recovery, .recoveryKey), (.passphrase, .passphrase), (.device, .device), (.escrow, .escrow): true
        default: false
        }
    }

    /// Opens a slot's box and checks that it names this vault and epoch;
    /// nil when it does not open or names another.
    ///
    /// - Throws: ``KeyError/format(_:)`` (``FormatError/outOfGuardedMemory``):
    ///   running out of guarded memory is never a slot that does not open
    ///   (`Spec/format.md §5.1`).
    static func openBox(_ box: [UInt8], with pair: X25519.KeyPair, vaultID: VaultID, epoch: UInt32) throws(KeyError) -> SymmetricKey? {
        let payload: SecureBytes
        do { payload = try pair.open(box) } catch {
            if case .outOfSecureMemory = error { throw .format(.outOfGuardedMemory) }
            return nil
        }
        guard payload.count == payloadByteCount else { return nil }
        let bound = payload.withUnsafeBytes { p in
            constantTimeEqual(p[32..<48], vaultID.bytes)
                && (0..<4).allSatisfy { p[48 + $0] == UInt8(truncatingIfNeeded: epoch >> (8 * UInt32($0))) }
        }
        guard bound else { return nil }
        return try payload.withUnsafeBytes { (p) throws(KeyError) -> SymmetricKey in
            try guarded { () throws(CryptoError) in try SymmetricKey(bytes: p[0..<32]) }
        }
    }

    /// `make()`'s result; its failure (guarded memory running out, the
    /// only way these fail) as ``FormatError/outOfGuardedMemory``.
    static func guarded<T>(_ make: () throws(CryptoError) -> T) throws(KeyError) -> T {
        do { return try make() } catch { throw .format(.outOfGuardedMemory) }
    }
}
