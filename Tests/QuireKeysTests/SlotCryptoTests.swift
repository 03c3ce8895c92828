@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@testable @_spi(Format) @_spi(Crypto) import QuireKeys
import Testing

/// Tenth review R10-5: the library maps a passphrase to Unicode NFC before
/// Argon2id (`Spec/keys.md §2.3`), so a slot made from one form opens with
/// the other.
@Suite struct PassphraseNormalizationTests {
    static let vaultID = try! VaultID(bytes: counting(16))
    static let key = EpochKey(epoch: 1, key: try! SymmetricKey(bytes: counting(32, from: 7)))

    @Test func aSlotMadeInNFCOpensWithNFDAndTheOtherWayRound() throws {
        let nfc = "Cr\u{E8}me br\u{FB}l\u{E9}e"
        let nfd = "Cre\u{300}me bru\u{302}le\u{301}e"
        #expect(Array(nfc.utf8) != Array(nfd.utf8))
        for (made, typed) in [(nfc, nfd), (nfd, nfc)] {
            let slot = try SlotCrypto.passphraseSlot(
                for: Self.key, passphrase: passphrase(made), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: Self.vaultID,
                random: SeededRandom(label: "nfc"))
            var cache = SlotCrypto.PassphraseCache()
            try SlotCrypto.choosePassphraseRuns(passphrase(typed), keyrings: [[slot]], cache: &cache)
            let opened = try SlotCrypto.open(slot, with: .passphrase(passphrase(typed)), vaultID: Self.vaultID, epoch: 1, cache: &cache)
            #expect(opened?.storage.copyBytes() == counting(32, from: 7))
        }
        // The NFC bytes are what Argon2id sees.
        let a = try SlotCrypto.passphraseKeyPair(passphrase(nfd), salt: counting(16), opsLimit: tinyOps, memLimitBytes: tinyMem)
        let b = try SlotCrypto.passphraseKeyPair(passphrase(nfc), salt: counting(16), opsLimit: tinyOps, memLimitBytes: tinyMem)
        #expect(a.publicKey == b.publicKey)
        // ASCII and bytes that are not UTF-8 are taken as given.
        let ascii = passphrase("correct horse")
        #expect(try SlotCrypto.normalized(ascii) === ascii)
        var invalid: [UInt8] = [0x66, 0xC3, 0x28, 0xFF]
        let raw = try SecureBytes(consuming: &invalid)
        #expect(try SlotCrypto.normalized(raw).copyBytes() == [0x66, 0xC3, 0x28, 0xFF])
    }
}

@Suite struct SlotCryptoTests {
    static let vaultID = try! VaultID(bytes: counting(16))
    static let otherVault = try! VaultID(bytes: counting(16, from: 1))
    static let key = EpochKey(epoch: 0x0102, key: try! SymmetricKey(bytes: counting(32, from: 100)))


    /// Opens `slot` with `credential`; nil when it does not open.
    static func open(
        _ slot: KeySlot, _ credential: Credential, vault: VaultID = vaultID, epoch: UInt32 = 0x0102
    ) throws(KeyError) -> [UInt8]? {
        var cache = SlotCrypto.PassphraseCache()
        if case .passphrase(let p) = credential { try SlotCrypto.choosePassphraseRuns(p, keyrings: [[slot]], cache: &cache) }
        return try SlotCrypto.open(slot, with: credential, vaultID: vault, epoch: epoch, cache: &cache)?.storage.copyBytes()
    }

    static let device = try! Ed25519.KeyPair(using: SeededRandom(label: "device"))
    static let otherDevice = try! Ed25519.KeyPair(using: SeededRandom(label: "other device"))
    static let escrow = try! X25519.KeyPair(seed: secure(SeededRandom(label: "escrow").bytes(32)))
    static let otherEscrow = try! X25519.KeyPair(seed: secure(SeededRandom(label: "other escrow").bytes(32)))
    static let recovery = countingRecoveryKey()

    static func allSlots() throws -> [KeySlot] {
        let r = SeededRandom(label: "slots")
        return [
            try SlotCrypto.recoverySlot(for: key, recovery: recovery, vaultID: vaultID, random: r),
            try SlotCrypto.passphraseSlot(
                for: key, passphrase: passphrase("correct horse"), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: vaultID, random: r),
            try SlotCrypto.deviceSlot(for: key, devicePublicKey: device.publicKey, vaultID: vaultID, random: r),
            try SlotCrypto.escrowSlot(for: key, escrowPublicKey: escrow.publicKey, vaultID: vaultID, random: r),
        ]
    }

    static let rightCredentials: [Credential] = [
        .recoveryKey(recovery), .passphrase(passphrase("correct horse")), .device(device), .escrow(escrow),
    ]
    static let wrongCredentials: [Credential] = [
        .recoveryKey(recoveryKey("other")), .passphrase(passphrase("correct horsE")), .device(otherDevice), .escrow(otherEscrow),
    ]

    /// `epoch key ‖ vault id ‖ u32(epoch)`: 52 bytes.
    static let payload = counting(32, from: 100) + counting(16) + [0x02, 0x01, 0x00, 0x00]

    @Test func recoverySlotLayout() throws {
        guard case .recovery(let box) = try SlotCrypto.recoverySlot(
            for: Self.key, recovery: Self.recovery, vaultID: Self.vaultID, random: SeededRandom(label: "r"))
        else {
            Issue.record("not a recovery slot")
            return
        }
        #expect(box.count == KeySlot.boxByteCount)
        // A sealed box to the X25519 form of the recovery signing key.
        let pair = try Self.recovery.signingKeyPair().agreementKeyPair()
        #expect(try pair.open(box).copyBytes() == Self.payload)
        // Any member can make it from the public key alone.
        guard case .recovery(let again) = try SlotCrypto.recoverySlot(
            for: Self.key, recoveryPublicKey: try Self.recovery.publicKey(), vaultID: Self.vaultID, random: SeededRandom(label: "r"))
        else {
            Issue.record("not a recovery slot")
            return
        }
        #expect(again == box)
    }

    @Test func passphraseSlotLayout() throws {
        let r = SeededRandom(label: "p")
        let slot = try SlotCrypto.passphraseSlot(
            for: Self.key, passphrase: passphrase("pw"), opsLimit: 2, memLimitBytes: 16384, vaultID: Self.vaultID, random: r)
        guard case .passphrase(let salt, let ops, let mem, let publicKey, let box) = slot else {
            Issue.record("not a passphrase slot")
            return
        }
        #expect(salt == SeededRandom(label: "p").bytes(16))
        #expect(ops == 2 && mem == 16384)
        let seed = try Argon2id.deriveKey(passphrase: passphrase("pw"), salt: salt, opsLimit: 2, memLimitBytes: 16384)
        let pair = try X25519.KeyPair(seed: seed.storage)
        #expect(publicKey == pair.publicKey)
        #expect(try pair.open(box).copyBytes() == Self.payload)
        // Rewrapping (a rotation by a device that does not know the
        // passphrase) keeps salt, cost and public key.
        let next = EpochKey(epoch: 0x0103, key: try SymmetricKey(bytes: counting(32, from: 7)))
        guard case .passphrase(let s2, let o2, let m2, let pk2, let box2) = try SlotCrypto.passphraseSlot(
            for: next, rewrapping: slot, vaultID: Self.vaultID, random: r)
        else {
            Issue.record("not a passphrase slot")
            return
        }
        #expect(s2 == salt && o2 == ops && m2 == mem && pk2 == publicKey)
        #expect(try pair.open(box2).copyBytes() == counting(32, from: 7) + counting(16) + [0x03, 0x01, 0x00, 0x00])
    }

    @Test func deviceAndEscrowBoxLayout() throws {
        let payload = counting(32, from: 100) + counting(16) + [0x02, 0x01, 0x00, 0x00]
        guard case .device(let box) = try SlotCrypto.deviceSlot(
            for: Self.key, devicePublicKey: Self.device.publicKey, vaultID: Self.vaultID, random: SeededRandom(label: "d"))
        else {
            Issue.record("not a device slot")
            return
        }
        #expect(box.count == KeySlot.boxByteCount)
        #expect(try Self.device.agreementKeyPair().open(box).copyBytes() == payload)
        guard case .escrow(let ebox) = try SlotCrypto.escrowSlot(
            for: Self.key, escrowPublicKey: Self.escrow.publicKey, vaultID: Self.vaultID, random: SeededRandom(label: "e"))
        else {
            Issue.record("not an escrow slot")
            return
        }
        #expect(ebox.count == 100)
        #expect(try Self.escrow.open(ebox).copyBytes() == payload)
    }

    @Test func eachSlotOpensWithItsCredentialOnly() throws {
        let slots = try Self.allSlots()
        for (i, slot) in slots.enumerated() {
            for (j, credential) in Self.rightCredentials.enumerated() {
                let opened = try Self.open(slot, credential)
                #expect(opened == (i == j ? counting(32, from: 100) : nil), "slot \(slot.kind), credential \(j)")
            }
            #expect(try Self.open(slot, Self.wrongCredentials[i]) == nil, "slot \(slot.kind) with a wrong credential")
            #expect(try Self.open(slot, .epochKey(Self.key)) == nil)
        }
    }

    @Test func slotsAreBoundToVaultAndEpoch() throws {
        let slots = try Self.allSlots()
        for (i, slot) in slots.enumerated() {
            #expect(try Self.open(slot, Self.rightCredentials[i], vault: Self.otherVault) == nil, "\(slot.kind)")
            #expect(try Self.open(slot, Self.rightCredentials[i], epoch: 0x0103) == nil, "\(slot.kind)")
            #expect(try Self.open(slot, Self.rightCredentials[i], epoch: 0x0201) == nil, "\(slot.kind)")
        }
    }

    @Test func tamperedSlotsDoNotOpen() throws {
        let slots = try Self.allSlots()
        guard case .recovery(let rbox) = slots[0], case .device(let box) = slots[2],
            case let .passphrase(salt, ops, mem, pk, pbox) = slots[1]
        else {
            Issue.record("unexpected slot kinds")
            return
        }
        for i in [0, 31, 32, 97] {
            var w = rbox
            w[i] ^= 1
            #expect(try Self.open(.recovery(box: w), .recoveryKey(Self.recovery)) == nil)
            var p = pbox
            p[i] ^= 1
            #expect(try Self.open(.passphrase(salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: pk, box: p), .passphrase(passphrase("correct horse"))) == nil)
        }
        // A passphrase slot whose public key was changed does not open with the passphrase.
        var otherPK = pk
        otherPK[3] ^= 1
        #expect(try Self.open(.passphrase(salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: otherPK, box: pbox), .passphrase(passphrase("correct horse"))) == nil)
        var b = box
        b[60] ^= 1
        #expect(try Self.open(.device(box: b), .device(Self.device)) == nil)
        // A device box read as an escrow slot is bound to another kind only
        // through the credential type; the escrow key still does not open it.
        #expect(try Self.open(.escrow(box: box), .escrow(Self.escrow)) == nil)
    }

    @Test func passphraseResultsAreCached() throws {
        let slot = try Self.allSlots()[1]
        var cache = SlotCrypto.PassphraseCache()
        try SlotCrypto.choosePassphraseRuns(passphrase("correct horse"), keyrings: [[slot, slot]], cache: &cache)
        let first = try SlotCrypto.open(slot, with: .passphrase(passphrase("correct horse")), vaultID: Self.vaultID, epoch: 0x0102, cache: &cache)
        #expect(first?.storage.copyBytes() == counting(32, from: 100))
        #expect(cache.pairs.count == 1)
        let again = try SlotCrypto.open(slot, with: .passphrase(passphrase("correct horse")), vaultID: Self.vaultID, epoch: 0x0102, cache: &cache)
        #expect(again == first)
        #expect(cache.pairs.count == 1)
    }

    @Test func passphraseDerivationsAreBudgeted() throws {
        // Ten keyrings of one slot each, distinct salts, none for this
        // passphrase: the four newest are run, then the four oldest (the
        // second pass, in file order), and the two between are untried.
        let r = SeededRandom(label: "budget")
        var cache = SlotCrypto.PassphraseCache()
        let slots = try (0..<10).map { _ in
            try SlotCrypto.passphraseSlot(
                for: Self.key, passphrase: passphrase("other"), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: Self.vaultID, random: r)
        }
        try SlotCrypto.choosePassphraseRuns(passphrase("mine"), keyrings: slots.map { [$0] }, cache: &cache)
        #expect(cache.pairs.count == 2 * Limits.maxPassphraseDerivations)
        for slot in slots {
            #expect(try SlotCrypto.open(slot, with: .passphrase(passphrase("mine")), vaultID: Self.vaultID, epoch: 0x0102, cache: &cache) == nil)
        }
        #expect(cache.pairs.count == 2 * Limits.maxPassphraseDerivations)
        #expect(cache.skipped == 2)
        // The newest slot names this passphrase's key: one run, no second
        // pass; the 3 older triples chosen with it (earlier passphrases) are
        // neither run nor untried, the 7 oldest are untried.
        var newest = SlotCrypto.PassphraseCache()
        let mine = try SlotCrypto.passphraseSlot(
            for: Self.key, passphrase: passphrase("mine"), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: Self.vaultID, random: r)
        try SlotCrypto.choosePassphraseRuns(passphrase("mine"), keyrings: slots.map { [$0] } + [[mine]], cache: &newest)
        #expect(newest.pairs.count == 1)
        #expect(try SlotCrypto.open(slots[0], with: .passphrase(passphrase("mine")), vaultID: Self.vaultID, epoch: 0x0102, cache: &newest) == nil)
        #expect(try SlotCrypto.open(mine, with: .passphrase(passphrase("mine")), vaultID: Self.vaultID, epoch: 0x0102, cache: &newest) != nil)
        #expect(newest.pairs.count == 1 && newest.skipped == 1)
    }

    @Test func appendedDecoyTriplesLeaveTheOldestSlotRun() throws {
        // Spec/keys.md §2.3, the second pass (eleventh review R11-4): the
        // passphrase's slot is in the first keyring, and a keyring appended
        // after it holds 4 made-up triples. The first pass runs the 4
        // decoys and none names the key; the second, in file order, runs the
        // first keyring's triple, and the slot opens. Before, the 4 decoys
        // spent the whole budget and the slot was untried.
        let r = SeededRandom(label: "appended decoys")
        let mine = try SlotCrypto.passphraseSlot(
            for: Self.key, passphrase: passphrase("mine"), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: Self.vaultID, random: r)
        let decoys = try (0..<4).map { _ in
            try SlotCrypto.passphraseSlot(
                for: Self.key, passphrase: passphrase("decoy"), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: Self.vaultID, random: r)
        }
        var cache = SlotCrypto.PassphraseCache()
        try SlotCrypto.choosePassphraseRuns(passphrase("mine"), keyrings: [[mine], decoys], cache: &cache)
        #expect(cache.pairs.count == Limits.maxPassphraseDerivations + 1)
        let key = try SlotCrypto.open(mine, with: .passphrase(passphrase("mine")), vaultID: Self.vaultID, epoch: 0x0102, cache: &cache)
        #expect(key?.storage.copyBytes() == counting(32, from: 100))
        #expect(cache.skipped == 0)
    }

    static let limitCases: [(UInt64, UInt64, Bool)] = [
        (1, 8192, true), (8, 8192, true), (1, 1 << 28, true), (8, 1 << 28, true), (3, 256 << 20, true),
        (0, 8192, false), (9, 8192, false), (UInt64.max, 8192, false), (1, 8191, false), (1, 0, false),
        (1, (1 << 28) + 1, false), (1, 1 << 30, false), (1, UInt64.max, false),
    ]

    @Test(arguments: limitCases)
    func checkLimits(ops: UInt64, mem: UInt64, accepted: Bool) {
        let result = Result { () throws(KeyError) in try SlotCrypto.checkLimits(opsLimit: ops, memLimitBytes: mem) }
        if accepted {
            #expect(throws: Never.self) { try result.get() }
        } else {
            #expect(throws: KeyError.kdfLimitsExceeded(opsLimit: ops, memLimitBytes: mem)) { try result.get() }
        }
    }

    @Test func passphraseSlotRefusesCostsOverTheLimits() {
        #expect(throws: KeyError.kdfLimitsExceeded(opsLimit: 9, memLimitBytes: 8192)) {
            try SlotCrypto.passphraseSlot(
                for: Self.key, passphrase: passphrase("x"), opsLimit: 9, memLimitBytes: 8192, vaultID: Self.vaultID, random: SeededRandom(label: "x"))
        }
        #expect(throws: KeyError.kdfLimitsExceeded(opsLimit: 1, memLimitBytes: (1 << 30) + 1024)) {
            try SlotCrypto.passphraseSlot(
                for: Self.key, passphrase: passphrase("x"), opsLimit: 1, memLimitBytes: (1 << 30) + 1024, vaultID: Self.vaultID,
                random: SeededRandom(label: "x"))
        }
    }

    @Test func openingAPassphraseSlotOverTheLimitsThrowsWithoutRunningIt() throws {
        let r = SeededRandom(label: "limits")
        for (ops, mem) in [(UInt64(9), UInt64(8192)), (1, (1 << 30) + 1), (1, 4096), (0, 8192)] {
            let slot = KeySlot.passphrase(salt: r.bytes(16), opsLimit: ops, memLimitBytes: mem, publicKey: r.bytes(32), box: r.bytes(100))
            #expect(throws: KeyError.kdfLimitsExceeded(opsLimit: ops, memLimitBytes: mem)) {
                try Self.open(slot, .passphrase(passphrase("x")))
            }
            // Other credentials do not look at it.
            #expect(try Self.open(slot, .recoveryKey(Self.recovery)) == nil)
        }
    }

    @Test func invalidPublicKeysAreRefused() {
        var identity = [UInt8](repeating: 0, count: 32)
        identity[0] = 1
        #expect(throws: KeyError.operationRefused(reason: "the device key is not a valid public key")) {
            try SlotCrypto.deviceSlot(for: Self.key, devicePublicKey: identity, vaultID: Self.vaultID, random: SeededRandom(label: "x"))
        }
        #expect(throws: KeyError.operationRefused(reason: "the device key is not a valid public key")) {
            try SlotCrypto.deviceSlot(for: Self.key, devicePublicKey: counting(31), vaultID: Self.vaultID, random: SeededRandom(label: "x"))
        }
        #expect(throws: KeyError.operationRefused(reason: "the escrow key is not a valid public key")) {
            try SlotCrypto.escrowSlot(
                for: Self.key, escrowPublicKey: [UInt8](repeating: 0, count: 32), vaultID: Self.vaultID, random: SeededRandom(label: "x"))
        }
    }

    @Test func credentialSigningKeys() throws {
        #expect(try Credential.recoveryKey(Self.recovery).signingKeyPair()?.publicKey == (try Self.recovery.signingKeyPair()).publicKey)
        #expect(try Credential.device(Self.device).signingKeyPair()?.publicKey == Self.device.publicKey)
        #expect(try Credential.passphrase(passphrase("x")).signingKeyPair() == nil)
        #expect(try Credential.escrow(Self.escrow).signingKeyPair() == nil)
        #expect(try Credential.epochKey(Self.key).signingKeyPair() == nil)
    }

    @Test func keyErrorCodes() {
        #expect(KeyError.wrongRecoveryKey.code == "wrong_recovery_key")
        #expect(KeyError.kdfLimitsExceeded(opsLimit: 9, memLimitBytes: 1).code == "kdf_limits_exceeded")
        #expect(KeyError.format(.notAVault).code == "not_a_vault")
        #expect(KeyError.recoveryCodeInvalid(reason: "x").isWrongCredential)
        #expect(KeyError.wrongPassphrase.isWrongCredential)
        #expect(!KeyError.noKeyring.isWrongCredential)
        #expect(!KeyError.kdfLimitsExceeded(opsLimit: 9, memLimitBytes: 1).isWrongCredential)
    }
}
