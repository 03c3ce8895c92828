package import QuireCrypto
@_spi(Format) public import QuireFormat

/// What can go wrong with keys, slots and keyrings (`Spec/format.md §12`,
/// the key rows of the error table).
///
/// A wrong credential is always reported as such, never as damage: a
/// keyring whose checksum verifies but whose slots the credential does not
/// open means the credential is wrong. Messages never contain secrets.
@_spi(Format) public enum KeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The vault holds no intact, committed keyring.
    @_spi(Format) case noKeyring
    /// The recovery code is not 56 Crockford base32 characters, or its
    /// checksum does not match (a typo).
    @_spi(Format) case recoveryCodeInvalid(reason: String)
    /// A device code is not 56 Crockford base32 characters, its checksum
    /// does not match, or it holds no valid public key.
    @_spi(Format) case deviceCodeInvalid(reason: String)
    /// The recovery key opens no slot of this vault.
    @_spi(Format) case wrongRecoveryKey
    /// The passphrase opens no slot of this vault.
    @_spi(Format) case wrongPassphrase
    /// A passphrase was given but no keyring of this vault has a passphrase
    /// slot (code `wrong_passphrase`, `Spec/format.md §8.5`).
    @_spi(Format) case noPassphrase
    /// This device's key opens no slot: it was never enrolled, or was removed.
    @_spi(Format) case wrongDeviceKey
    /// The raw epoch key given opens nothing.
    @_spi(Format) case wrongKey
    /// A passphrase slot asks for more Argon2id work than the limits allow;
    /// it was not run.
    @_spi(Format) case kdfLimitsExceeded(opsLimit: UInt64, memLimitBytes: UInt64)
    /// The passphrase opened no slot of the ``Limits/maxPassphraseDerivations``
    /// newest distinct passphrase parameter triples (newest keyring first)
    /// nor of as many more first in file order (`Spec/keys.md §2.3`), and
    /// slots with other triples remain; they were not run. Code
    /// `kdf_limits_exceeded`.
    @_spi(Format) case kdfBudgetExceeded(untried: Int)
    /// Warning, when the vault opened anyway: the keyring at `location`
    /// holds a passphrase slot asking for more Argon2id work than readers
    /// run; it was skipped (`Spec/format.md §8.5`). Code `kdf_limits_exceeded`.
    @_spi(Format) case kdfLimitsExceededInKeyring(FrameLocation, opsLimit: UInt64, memLimitBytes: UInt64)
    /// A keyring is not signed by a member of a keyring before it (or by a
    /// removed member), so its keys and slots are not trusted.
    @_spi(Format) case keyringUnauthenticated(FrameLocation, reason: String)
    /// An escrow slot in a keyring that declares the vault escrow-free.
    @_spi(Format) case escrowForbidden(FrameLocation)
    /// An escrow key was asked for in an escrow-free vault.
    @_spi(Format) case escrowRefused
    /// A slot in a keyring made after a device was removed still opens for
    /// that device.
    @_spi(Format) case removedDeviceSlot(FrameLocation)
    /// The keyring's structure is invalid.
    @_spi(Format) case malformedKeyring(FrameLocation, reason: String)
    /// One of the two copies of a keyring is damaged; the other was used.
    /// A warning: nothing is lost.
    @_spi(Format) case keyringCopyDamaged(FrameLocation)
    /// Warning: the keyring at `location` removes a member, and rule 6 could
    /// not settle it (`Spec/format.md §8.4` "Termination"): it and another
    /// removal each lie on a branch that the other's removed member started,
    /// and both stand, as two mutual removals do. Someone may have answered
    /// a removal from an old copy: remove the members involved (and any key
    /// they enrolled) with the recovery key. Code `removal_tie`.
    @_spi(Format) case removalTie(FrameLocation)
    /// Warning: the keyring at `location` removes a member and stands, and
    /// so does a keyring that member (or a key it enrolled) signed outside
    /// its ancestors — an answer the file cannot tell from a concurrent
    /// removal (`Spec/format.md §8.4` rule 6, scenarios 2 and 3): both
    /// removed members stay removed. Code `removal_mutual`.
    @_spi(Format) case removalMutual(FrameLocation)
    /// Warning: the trusted keyring at `location` starts a key at `epoch`
    /// that other trusted keyrings start at `otherEpochs`: only a member
    /// reusing a key (a stolen device, say) makes that. `signer` names the
    /// member who signed this keyring, as messages do. The key's epoch is
    /// the highest claimed, and a commit's is judged by the keyring on its
    /// own line (`Spec/format.md §5.1`, §9.3). Code `key_epoch_claimed_twice`.
    @_spi(Format) case keyEpochClaimedTwice(FrameLocation, epoch: UInt32, otherEpochs: [UInt32], signer: String)
    /// The file looks older than what this device last saw of it: a keyring
    /// it trusted is missing, or records it saw are (`Spec/keys.md §7`). A
    /// warning; the library refuses to write until the user acts.
    @_spi(Format) case rollbackSuspected(reason: String)
    /// Warning: a key change was committed, but this device could not
    /// remember the new keyring heads (`Spec/keys.md §7`).
    @_spi(Format) case deviceMemoryNotSaved(reason: String)
    /// A key operation cannot be done as asked; the reason says why and what to do.
    @_spi(Format) case operationRefused(reason: String)
    /// A key change must join concurrent replacements of the recovery key
    /// and keep one of them, and the caller did not say which code the user
    /// holds (`Spec/keys.md §6.9`): the recovery keys to choose from.
    @_spi(Format) case recoveryKeyChoiceNeeded([RecoveryKeyChoice])
    /// An error of the container layer.
    @_spi(Format) case format(FormatError)

    /// The stable, machine-readable name used by `Vectors/` and `--json`.
    public var code: String {
        switch self {
        case .noKeyring: "no_keyring"
        case .recoveryCodeInvalid: "recovery_code_invalid"
        case .deviceCodeInvalid: "device_code_invalid"
        case .wrongRecoveryKey: "wrong_recovery_key"
        case .wrongPassphrase, .noPassphrase: "wrong_passphrase"
        case .wrongDeviceKey: "wrong_device_key"
        case .wrongKey: "wrong_key"
        case .kdfLimitsExceeded, .kdfBudgetExceeded, .kdfLimitsExceededInKeyring: "kdf_limits_exceeded"
        case .keyringUnauthenticated: "keyring_unauthenticated"
        case .escrowForbidden: "escrow_forbidden"
        case .escrowRefused: "escrow_refused"
        case .removedDeviceSlot: "removed_device_slot"
        case .malformedKeyring: "malformed_keyring"
        case .keyringCopyDamaged: "keyring_copy_damaged"
        case .removalTie: "removal_tie"
        case .removalMutual: "removal_mutual"
        case .keyEpochClaimedTwice: "key_epoch_claimed_twice"
        case .rollbackSuspected: "rollback_suspected"
        case .deviceMemoryNotSaved: "device_memory_not_saved"
        case .operationRefused: "operation_refused"
        case .recoveryKeyChoiceNeeded: "recovery_key_choice_needed"
        case .format(let e): e.code
        }
    }

    /// True when guarded memory ran out (`Spec/format.md §5.1`): a fault
    /// of the process, never of the file or the credential.
    package var isOutOfGuardedMemory: Bool {
        if case .format(.outOfGuardedMemory) = self { true } else { false }
    }

    /// True for ``malformedKeyring(_:reason:)``.
    public var isMalformedKeyring: Bool {
        switch self {
        case .malformedKeyring: true
        default: false
        }
    }

    /// True for warnings: the error cost nothing (``keyringCopyDamaged(_:)``).
    public var isWarning: Bool {
        switch self {
        case .keyringCopyDamaged, .rollbackSuspected, .deviceMemoryNotSaved, .kdfLimitsExceededInKeyring, .removalTie, .removalMutual,
            .keyEpochClaimedTwice:
            true
        default: false
        }
    }

    /// True for errors that mean "this credential is wrong" rather than
    /// "the file is damaged".
    public var isWrongCredential: Bool {
        switch self {
        case .wrongRecoveryKey, .wrongPassphrase, .noPassphrase, .wrongDeviceKey, .wrongKey, .recoveryCodeInvalid: true
        default: false
        }
    }

    /// The error in words a person can act on; never key bytes.
    public var description: String {
        switch self {
        case .noKeyring:
            return "the vault holds no intact keyring, so nothing in it can be unlocked"
        case .recoveryCodeInvalid(let reason):
            return "that recovery key is not valid: \(reason)"
        case .deviceCodeInvalid(let reason):
            return "that device code is not valid: \(reason)"
        case .wrongRecoveryKey:
            return "that recovery key does not open this vault (it is a valid key, but for another vault or a replaced one)"
        case .wrongPassphrase:
            return "wrong passphrase"
        case .noPassphrase:
            return "this vault has no passphrase: open it with an enrolled device or the recovery key"
        case .wrongDeviceKey:
            return "this device is not enrolled in this vault (or was removed)"
        case .wrongKey:
            return "that key does not open this vault"
        case .kdfLimitsExceeded(let ops, let mem):
            let within =
                ops >= 1 && ops <= Limits.maxArgon2OpsLimit && mem >= Limits.minArgon2MemLimitBytes && mem <= Limits.maxArgon2MemLimitBytes
            if within {
                return
                    "a passphrase cost of \(ops) passes over \(mem) bytes is below the floor for new passphrases (at least \(Limits.writerMinArgon2OpsLimit) passes over 64 MiB); choose a higher cost"
            }
            return
                "a passphrase slot asks for Argon2id with opslimit \(ops) and \(mem) bytes of memory, outside the limits (opslimit 1–8, memory 8 KiB–256 MiB); it was not run"
        case .kdfLimitsExceededInKeyring(let loc, let ops, let mem):
            return
                "keyring \(loc) holds a passphrase slot asking for Argon2id with opslimit \(ops) and \(mem) bytes of memory, outside the limits (opslimit 1–8, memory 8 KiB–256 MiB); it was skipped"
        case .kdfBudgetExceeded(let untried):
            return
                "the passphrase opened no slot of the \(Limits.maxPassphraseDerivations) newest passphrase parameter sets (salt and cost) nor of the \(Limits.maxPassphraseDerivations) oldest, and \(untried) other parameter sets were not tried (each costs a full Argon2id run); it may be a passphrase replaced \(Limits.maxPassphraseDerivations) or more times since, or someone may have added decoy slots: open with a device or the recovery key"
        case .keyringUnauthenticated(let loc, let reason):
            return "keyring \(loc) is not trusted: \(reason)"
        case .escrowForbidden(let loc):
            return
                "keyring \(loc) breaks escrow-free mode (it holds an escrow slot, or turns the mode off after an escrow-free keyring); the keyring is rejected"
        case .escrowRefused:
            return "this vault is escrow-free: no escrow key can be added to it, now or later"
        case .removedDeviceSlot(let loc):
            return "keyring \(loc) wraps a key to a device that was removed; the keyring is rejected"
        case .malformedKeyring(let loc, let reason):
            return "keyring \(loc) is malformed: \(reason)"
        case .keyringCopyDamaged(let loc):
            return "keyring \(loc) is damaged, but it is a copy of an intact keyring, which was used"
        case .removalTie(let loc):
            return
                "keyring \(loc) removes a member while another removal removed one who started its branch, and that removal lies on a branch its own removed member started; both removals stand, as if the two members had removed each other. Someone may have answered a removal from an old copy: check the members, and remove the ones involved, and any key they enrolled, with the recovery key"
        case .removalMutual(let loc):
            return
                "keyring \(loc) removes a member, and a keyring that member (or a key it enrolled) signed without seeing that removal also stands and removes someone: both removed members stay removed. Someone may have answered a removal from an old copy: check the members, and remove the one who answered with the recovery key"
        case .keyEpochClaimedTwice(let loc, let epoch, let others, let signer):
            let list = others.map(String.init).joined(separator: ", ")
            return
                "keyring \(loc), signed by \(signer), gives its key epoch \(epoch), while another keyring gives the same key epoch \(list): only a member reusing a key does that. Commits under it are judged by the keyring of that key on their own line. Check the members, and remove the one who should not have signed (a stolen device, say) with the recovery key"
        case .rollbackSuspected(let reason):
            return
                "this file looks older than the copy this device last saw: \(reason). It may have been replaced by an older copy, which can undo a device removal or lose entries; writing is refused until you merge the newer copy back (quire merge), or accept this file if you restored it on purpose (quire keys accept-rollback)"
        case .deviceMemoryNotSaved(let reason):
            return
                "this device could not update its memory of the vault (\(reason)); whatever this command wrote is saved in the vault, but until this device can remember it, it may not notice the file being replaced by an older copy: check the free space and permissions of the key store folder"
        case .operationRefused(let reason):
            return reason
        case .recoveryKeyChoiceNeeded(let choices):
            let listed = choices.enumerated().map { i, c in
                "\(i + 1): made " + (c.madeBy.isEmpty ? "" : "by \"\(c.madeBy)\" ") + "on " + PrivacyStatement.date(c.createdMilliseconds)
            }.joined(separator: "; ")
            return "the recovery key was replaced on two copies of this vault at the same time (\(listed)), and this change must keep "
                + "one of them: the other code will open nothing written after it. Say which recovery code you hold: "
                + "quire keys recovery-key --keep N (N as listed), then write again"
        case .format(let e):
            return e.description
        }
    }
}

extension KeyError: QuireErrorLayer {
    /// The `errno` of the container error this one carries.
    package var errorNumber: Int32? {
        if case .format(let e) = self { return e.errorNumber }
        return nil
    }

    /// The key layer's part of ``QuireError/category``.
    package var category: QuireError.Category {
        switch self {
        case .recoveryCodeInvalid, .deviceCodeInvalid, .wrongRecoveryKey, .wrongPassphrase, .noPassphrase,
            .wrongDeviceKey, .wrongKey, .kdfBudgetExceeded:
            .wrongCredential
        case .noKeyring, .kdfLimitsExceeded, .kdfLimitsExceededInKeyring, .keyringUnauthenticated, .escrowForbidden,
            .removedDeviceSlot, .malformedKeyring, .keyringCopyDamaged, .removalTie, .removalMutual, .keyEpochClaimedTwice:
            .damaged
        case .escrowRefused: .programmerError
        case .rollbackSuspected, .recoveryKeyChoiceNeeded: .needsMerge
        case .deviceMemoryNotSaved: .unavailable
        case .operationRefused: .readOnly
        case .format(let e): e.category
        }
    }

    /// The byte offset in the vault file the error is about, or nil.
    package var offset: UInt64? {
        if case .format(let e) = self { return e.offset }
        return nil
    }
}

extension QuireError {
    /// The key layer's `error` as a `QuireError`.
    package static func fromKeys(_ error: KeyError) -> QuireError {
        if case .format(.source(let e)) = error { return e }
        return QuireError(layer: error)
    }
}
