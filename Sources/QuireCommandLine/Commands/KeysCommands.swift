import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireSystem

/// `quire keys …`: who can decrypt the vault, and changing its keys.
struct KeysCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "keys", abstract: "the vault's keys: who can decrypt what, and changing them",
        subcommands: [
            KeysStatusCommand.self, KeysRotateCommand.self, KeysEscrowFreeCommand.self, KeysPassphraseCommand.self,
            KeysRecoveryKeyCommand.self, KeysAcceptRollbackCommand.self, KeysAcceptTamperedCommand.self,
        ],
        section: .keys)
}

/// `quire keys status [VAULT]`: the privacy statement.
struct KeysStatusCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "keys status", abstract: "who can decrypt what, derived from the file",
        discussion:
            "The statement is derived from the file itself; the first time it uses the words epoch and escrow, a line says what they mean.",
        json: KeysStatusJSON.self, jsonNote: "(kind: device, recovery, passphrase or escrow; phrase: how the text names the reader.)",
        unlocks: true)

    @VaultArgument var vault: String
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    /// One plain line for each word of the trade, said where it first appears.
    static let glossary: [(word: String, meaning: String)] = [
        (
            "epoch",
            "(An epoch is one generation of the vault's keys: each key change starts a new one, and a record stays sealed under the epoch it was written in.)"
        ),
        (
            "escrow",
            "(An escrow key belongs to a custodian you chose, such as a provider, who could then also decrypt the journal to help you recover it.)"
        ),
    ]

    /// `text` with each glossary line after the first line that uses its word.
    static func explained(_ text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (word, meaning) in glossary {
            guard let i = lines.firstIndex(where: { $0.lowercased().contains(word) }) else { continue }
            let indent = String(lines[i].prefix { $0 == " " })
            lines.insert(indent + meaning, at: i + 1)
        }
        return lines.joined(separator: "\n")
    }

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let opened = try Unlock.open(vault, unlock, out: c.out, writable: false)
        let statement: PrivacyStatement
        do { statement = try opened.vault.privacyStatement() } catch { throw .vault(error, path: vault) }
        var text = Self.explained(statement.text)
        if text.hasSuffix("\n") { text.removeLast() }
        c.out.line("\(multiline: text)")
        func reader(_ r: PrivacyStatement.Reader) -> KeysStatusJSON.Reader {
            let kind: String
            switch r.kind {
            case .device: kind = "device"
            case .recovery: kind = "recovery"
            case .passphrase: kind = "passphrase"
            case .escrow: kind = "escrow"
            }
            return .init(
                kind: kind, name: r.name, thisDevice: r.isThisDevice, retiredAt: r.retiredAt.map { DateText.iso($0) }, phrase: r.phrase)
        }
        c.out.emit(
            KeysStatusJSON(
                vaultName: statement.vaultName, vaultID: statement.vaultID.description, escrowFree: statement.isEscrowFree,
                escrowFreeSince: statement.escrowFreeSince.map { DateText.iso($0) }, epoch: statement.currentEpoch,
                since: DateText.iso(statement.currentSince),
                readers: statement.currentReaders.map(reader),
                olderRecords: statement.groups.map { g in
                    .init(
                        epochs: Array(g.epochs.lowerBound...g.epochs.upperBound), from: DateText.iso(g.from),
                        until: g.until.map { DateText.iso($0) },
                        entryRevisions: g.entryRevisions, attachments: g.attachments, alsoReadableBy: g.extraReaders.map(reader))
                }, notes: statement.notes, text: text + "\n"))
        return .success
    }
}

/// What `quire keys status --json` prints.
struct KeysStatusJSON: JSONShape {
    struct Reader: Encodable {
        let kind: String
        let name: String
        let thisDevice: Bool
        @OrNull var retiredAt: String?
        let phrase: String
    }

    struct Group: Encodable {
        let epochs: [UInt32]
        let from: String
        @OrNull var until: String?
        let entryRevisions: Int
        let attachments: Int
        let alsoReadableBy: [Reader]
    }

    let vaultName: String
    let vaultID: String
    let escrowFree: Bool
    @OrNull var escrowFreeSince: String?
    let epoch: UInt32
    let since: String
    let readers: [Reader]
    let olderRecords: [Group]
    let notes: [String]
    let text: String

    static var example: KeysStatusJSON {
        let r = Reader(kind: "", name: "", thisDevice: false, retiredAt: nil, phrase: "")
        return KeysStatusJSON(
            vaultName: "", vaultID: "", escrowFree: false, escrowFreeSince: nil, epoch: 1, since: "", readers: [r],
            olderRecords: [Group(epochs: [], from: "", until: nil, entryRevisions: 0, attachments: 0, alsoReadableBy: [r])], notes: [],
            text: "")
    }
}

/// `quire keys rotate [VAULT]`.
struct KeysRotateCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "keys rotate", abstract: "start a new epoch key for the same devices", json: EpochJSON.self, unlocks: true)

    @VaultArgument var vault: String
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let opened = try Unlock.open(vault, unlock, out: c.out)
        try Unlock.warnIfDroppingProtection(opened, path: vault, out: c.out)
        do {
            try opened.vault.rotateKeys()
            let epoch = try opened.vault.keyState().epoch
            c.out.line("rotated: new records are sealed under epoch \(epoch), for the same devices and keys")
            c.out.emit(EpochJSON(epoch: epoch))
        } catch { throw .vault(error, path: vault) }
        return .success
    }
}

/// `{"epoch"}`.
struct EpochJSON: JSONShape {
    let epoch: UInt32
    static var example: EpochJSON { EpochJSON(epoch: 1) }
}

/// `quire keys escrow-free [VAULT]`.
struct KeysEscrowFreeCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "keys escrow-free", abstract: "turn on escrow-free mode, for good",
        discussion: """
            Removes any escrow key from new records and forbids adding one, ever.
            Needs a recovery method you hold: the recovery key, or a second
            enrolled device. Older records stay readable by a former escrow key
            until 'quire compact --rekey'.
            """,
        json: EscrowFreeJSON.self, unlocks: true)

    @VaultArgument var vault: String
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let opened = try Unlock.open(vault, unlock, out: c.out)
        let state: KeyState
        do { state = try opened.vault.keyState() } catch { throw .vault(error, path: vault) }
        if state.isEscrowFree {
            c.out.line("\(vault) is already escrow-free")
            c.out.emit(EscrowFreeJSON(epoch: state.epoch, escrowFree: true, changed: false))
            return .success
        }
        // The recovery key as proof that the user holds a way back in.
        var proof = opened.recoveryKey
        if proof == nil, let file = unlock.recoveryKeyFile?.path {
            var bytes = try Prompt.secretFile(file, what: "recovery key")
            defer { wipe(&bytes) }
            do {
                proof = try RecoveryKey(codeBytes: bytes)
            } catch {
                throw CLIFailure.vault(.keys(error), path: vault)
            }
        }
        try Unlock.warnIfDroppingProtection(opened, path: vault, out: c.out)
        let epoch: UInt32
        do {
            try opened.vault.changeKeys(.enableEscrowFree(recoveryProof: proof))
            epoch = try opened.vault.keyState().epoch
        } catch {
            var f = CLIFailure.vault(error, path: vault)
            if case .keys(.operationRefused) = error.detail, proof == nil, state.devices.count < 2 {
                f.hint = "pass --recovery-key-file FILE to show you hold the recovery key, or enroll a second device first"
            }
            throw f
        }
        c.out.line("escrow-free from epoch \(epoch): no escrow key can be added, now or later")
        c.out.line(
            "'quire keys status \(vault)' says which older records a former escrow key can still read; 'quire compact --rekey' ends that")
        c.out.emit(EscrowFreeJSON(epoch: epoch, escrowFree: true, changed: true))
        return .success
    }
}

/// What `quire keys escrow-free --json` prints.
struct EscrowFreeJSON: JSONShape {
    let epoch: UInt32
    let escrowFree: Bool
    let changed: Bool

    static var example: EscrowFreeJSON { EscrowFreeJSON(epoch: 1, escrowFree: true, changed: true) }
}

/// `quire keys passphrase [VAULT] [--remove | --new-passphrase-file F]`.
struct KeysPassphraseCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "keys passphrase", abstract: "set, change or remove the passphrase",
        discussion: "Without --new-passphrase-file, the new passphrase is typed twice on the terminal.",
        json: PassphraseJSON.self, unlocks: true)

    @VaultArgument var vault: String
    @Option(help: "the new passphrase, from FILE (default: typed twice)") var newPassphraseFile: FilePath?
    @Flag(help: "remove the passphrase") var remove: Bool
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        if remove && newPassphraseFile != nil { throw c.usage("--remove and --new-passphrase-file exclude each other") }
        try Unlock.requireVault(vault)
        var new: SecureBytes?
        if let file = newPassphraseFile?.path {
            var typed = try Prompt.secretFile(file, what: "passphrase", option: "--new-passphrase-file")
            defer { wipe(&typed) }
            guard !typed.isEmpty else { throw CLIFailure("the passphrase file \(file) is empty") }
            new = try Prompt.passphraseBytes(typed)
        }
        let opened = try Unlock.open(vault, unlock, out: c.out)
        if !remove && new == nil { new = try Prompt.newPassphrase(option: "--new-passphrase-file") }
        if let secret = new { Prompt.warnIfShort(secret, out: c.out) }
        try Unlock.warnIfDroppingProtection(opened, path: vault, out: c.out)
        do {
            let had = try !opened.vault.keyState().passphrases.isEmpty
            if remove && !had {
                c.out.line("\(vault) has no passphrase")
                c.out.emit(PassphraseJSON(epoch: try opened.vault.keyState().epoch, passphrase: false, changed: false))
                return .success
            }
            try opened.vault.setPassphrase(new)
            let epoch = try opened.vault.keyState().epoch
            c.out.line("\(new == nil ? "passphrase removed" : had ? "passphrase changed" : "passphrase set") (epoch \(epoch))")
            c.out.emit(PassphraseJSON(epoch: epoch, passphrase: new != nil, changed: true))
        } catch { throw .vault(error, path: vault) }
        return .success
    }
}

/// What `quire keys passphrase --json` prints.
struct PassphraseJSON: JSONShape {
    let epoch: UInt32
    let passphrase: Bool
    let changed: Bool

    static var example: PassphraseJSON { PassphraseJSON(epoch: 1, passphrase: true, changed: true) }
}

/// `quire keys accept-rollback [VAULT]`: takes the file as it is after a
/// suspected rollback (`Spec/keys.md §7`).
struct KeysAcceptRollbackCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "keys accept-rollback", abstract: "accept this file after a rollback warning",
        discussion: """
            When the vault file is older than the copy this device last saw (a sync
            service or a backup put back an older copy), quire warns and refuses to
            write to it. If the newer copy still exists, merge it back instead
            ('quire merge VAULT NEWER-COPY'): nothing is lost. If you restored this
            file on purpose, this makes the device remember the file as it is now,
            and writing is allowed again.
            """,
        json: AcceptRollbackJSON.self, unlocks: true)

    @VaultArgument var vault: String
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let opened = try Unlock.open(vault, unlock, out: c.out)
        let suspected = opened.vault.keyWarnings.contains { $0.code == "rollback_suspected" }
        do { try opened.vault.acceptRollback() } catch { throw .vault(error, path: vault) }
        c.out.line(
            suspected
                ? "accepted: this device now takes \(vault) as it is, and writing to it is allowed again"
                : "\(vault) is not older than the copy this device saw: nothing to accept")
        c.out.emit(AcceptRollbackJSON(accepted: suspected))
        return .success
    }
}

/// What `quire keys accept-rollback --json` prints.
struct AcceptRollbackJSON: JSONShape {
    /// True when a rollback was suspected and the file is now accepted.
    let accepted: Bool

    static var example: AcceptRollbackJSON { AcceptRollbackJSON(accepted: true) }
}

/// `quire keys accept-tampered [VAULT]`: writes on over the tampered commits
/// the file holds (`Spec/keys.md §7`, "Accepting a tampered commit").
struct KeysAcceptTamperedCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "keys accept-tampered", abstract: "write on after a tampered-commit error",
        discussion: """
            When a commit of the vault file was altered after later commits were
            written (commit_tampered: records deleted, replaced or inserted by
            someone who can write the file), quire refuses to write to it. If a copy
            that holds the commit exists, merge it back instead ('quire merge VAULT
            COPY'); or compact without what cannot be verified ('quire compact VAULT
            --drop-unverified'). This accepts the tampered commits the file holds
            now: this device writes on, their records stay unverified, and verify
            still reports them. A commit tampered with later is refused again.
            """,
        json: AcceptTamperedJSON.self, unlocks: true)

    @VaultArgument var vault: String
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let opened = try Unlock.open(vault, unlock, out: c.out)
        let accepted: Int
        do { accepted = try opened.vault.acceptTampered() } catch { throw .vault(error, path: vault) }
        c.out.line(
            accepted > 0
                ? "accepted \(accepted) tampered commit\(accepted == 1 ? "" : "s"): this device writes to \(vault) again; their records stay unverified"
                : "\(vault) holds no tampered commit this device has not accepted: nothing to accept")
        c.out.emit(AcceptTamperedJSON(accepted: accepted))
        return .success
    }
}

/// What `quire keys accept-tampered --json` prints.
struct AcceptTamperedJSON: JSONShape {
    /// How many tampered commits were accepted now (0: none to accept).
    let accepted: Int

    static var example: AcceptTamperedJSON { AcceptTamperedJSON(accepted: 1) }
}

/// `quire keys recovery-key --replace [VAULT]`: a new recovery key in place
/// of the old one (`Spec/keys.md §6.9`).
struct KeysRecoveryKeyCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "keys recovery-key", abstract: "replace the recovery key (--replace)",
        discussion: """
            With --replace, makes a new recovery key and shows its code once (or
            writes it to a new file with --new-recovery-key-file). The old code
            opens no later epoch: it still reads the records written before,
            until 'quire compact --rekey'. Any enrolled device, or the old
            recovery key itself, can do this.

            With --keep N, when two devices replaced the recovery key at the
            same time on two copies that were then merged, says which of the
            new codes you hold (N as the error of the next write lists them)
            and joins the copies' keys keeping that one; the other code
            opens nothing written after it.
            """,
        json: RecoveryKeyJSON.self, jsonNote: "(\"recoveryKey\" is null when it was written to a file.)", unlocks: true)

    @VaultArgument var vault: String
    @Flag(help: "make a new recovery key; the old one opens no later epoch") var replace: Bool
    @Option(help: "write the new recovery key to FILE (new, mode 0600) instead of printing it") var newRecoveryKeyFile: FilePath?
    @Option(help: "keep recovery key N of two made at the same time on merged copies (the one whose code you hold)") var keep: Int?
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        guard replace || keep != nil else {
            throw c.usage("say --replace to make a new recovery key in place of the old one, or --keep N to keep one of two made at once")
        }
        try Unlock.requireVault(vault)
        if let keep, !replace {
            let opened = try Unlock.open(vault, unlock, out: c.out)
            let epoch: UInt32
            let kept: RecoveryKeyChoice
            do {
                let choices = try opened.vault.recoveryKeyChoices()
                guard !choices.isEmpty else {
                    throw CLIFailure("this vault has one recovery key; there is nothing to choose, and nothing was changed")
                }
                guard choices.indices.contains(keep - 1) else {
                    throw CLIFailure("--keep takes 1 to \(choices.count) (the recovery keys the error listed); nothing was changed")
                }
                kept = choices[keep - 1]
                try opened.vault.keepRecoveryKey(kept.publicKey)
                try opened.vault.rotateKeys()
                epoch = try opened.vault.keyState().epoch
            } catch let e as CLIFailure {
                throw e
            } catch let e as QuireError {
                throw .vault(e, path: vault)
            } catch {
                throw CLIFailure("\(error)")
            }
            c.out.line(
                "kept recovery key \(keep)" + (kept.madeBy.isEmpty ? "" : " (made by \"\(kept.madeBy)\")")
                    + ": from epoch \(epoch) only its code opens \(vault)")
            c.out.emit(RecoveryKeyJSON(epoch: epoch, recoveryKey: nil, recoveryKeyFile: nil))
            return .success
        }
        let file = newRecoveryKeyFile?.path
        if let file { try Paths.requireParentFolder(file, nothing: "nothing was changed") }
        let opened = try Unlock.open(vault, unlock, out: c.out)
        let recovery: RecoveryKey
        let publicKey: [UInt8]
        do {
            recovery = try RecoveryKey()
            publicKey = try recovery.publicKey()
        } catch { throw CLIFailure("cannot make a recovery key: \(error); nothing was changed") }
        // The file first (new, 0600): if it cannot be written, the keys stay as they are.
        if let file { try RecoveryKeyFile.write(recovery, to: file, nothing: "nothing was changed") }
        try Unlock.warnIfDroppingProtection(opened, path: vault, out: c.out)
        let epoch: UInt32
        do throws(QuireError) {
            if let keep {
                let choices = try opened.vault.recoveryKeyChoices()
                guard choices.isEmpty || choices.indices.contains(keep - 1) else {
                    throw .keys(
                        .operationRefused(
                            reason: "--keep takes 1 to \(choices.count) (the recovery keys the error listed); nothing was changed"))
                }
                if !choices.isEmpty { try opened.vault.keepRecoveryKey(choices[keep - 1].publicKey) }
            }
            try opened.vault.changeKeys(.replaceRecoveryKey(newRecoveryPublicKey: publicKey))
            epoch = try opened.vault.keyState().epoch
        } catch {
            if let file { try? FileSystem.remove(file) }
            throw .vault(error, path: vault)
        }
        let out = c.out
        out.line("replaced the recovery key: from epoch \(epoch) only the new one opens \(vault)")
        if let file {
            out.line("The new recovery key was written to \(file) (mode 0600). Copy it somewhere safe, away")
            out.line("from this device, then delete the file.")
        } else if !out.json {
            out.line()
            out.line("New recovery key (shown once; write it down and keep it away from this device):")
            out.line()
            out.line("    \(recovery.code())")
            out.line()
        }
        out.line("The old code still reads what was written before; 'quire compact --rekey' ends that.")
        out.emit(RecoveryKeyJSON(epoch: epoch, recoveryKey: file == nil ? recovery.code() : nil, recoveryKeyFile: file))
        return .success
    }
}

/// What `quire keys recovery-key --replace --json` prints.
struct RecoveryKeyJSON: JSONShape {
    /// The epoch the new recovery key opens from.
    let epoch: UInt32
    /// The new code, when it was not written to a file.
    @OrNull var recoveryKey: String?
    /// The file the new code was written to.
    @OrNull var recoveryKeyFile: String?

    static var example: RecoveryKeyJSON { RecoveryKeyJSON(epoch: 2, recoveryKey: nil, recoveryKeyFile: nil) }
}
