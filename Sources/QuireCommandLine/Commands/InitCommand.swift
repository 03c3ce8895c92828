import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireSystem

/// `quire init VAULT`: a new vault, and this device's key if it has none.
struct InitCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "init", abstract: "create a vault, and this device's key if it has none",
        discussion: """
            The recovery key is shown once: write it down and keep it away from
            this device. It opens the vault on any device; without it, losing
            every enrolled device loses the journal.

            To use the vault without naming it: export QUIRE_VAULT=PATH, or
            'quire journals add NAME PATH --default'.
            """,
        json: InitJSON.self, jsonNote: "(\"recoveryKey\" is null when it was written to a file.)", section: .journal)

    @Argument(placeholder: "VAULT", help: "the new vault's path (it must not exist)") var path: String
    @Option(placeholder: "NAME", help: "the journal's name (default: the file name)") var name: String?
    @Option(help: "name this device's new key (default: the host name)") var deviceName: DeviceName?
    @Flag(help: "no escrow key may ever be added") var escrowFree: Bool
    @Option(help: "also wrap the keys to this custodian (64 hex digits, X25519)") var escrowKey: EscrowKey?
    @Flag(help: "also unlock with a passphrase, typed on the terminal") var passphrase: Bool
    @Option(help: "also unlock with the passphrase in FILE") var passphraseFile: FilePath?
    @Option(help: "write the recovery key to FILE (new, mode 0600) instead of printing it") var recoveryKeyFile: FilePath?
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        if escrowFree && escrowKey != nil { throw c.usage("--escrow-free and --escrow-key exclude each other") }
        if passphrase && passphraseFile != nil { throw c.usage("give --passphrase or --passphrase-file, not both") }
        guard !path.isEmpty else { throw c.usage("VAULT is empty: give the path of the vault to make") }
        if FileSystem.nameExists(path) {
            throw CLIFailure(
                "\(path) already exists; nothing was changed", hint: "choose another name, or open the existing vault",
                code: "already_exists")
        }
        try Paths.requireParentFolder(path, nothing: "no vault was made")
        if let file = recoveryKeyFile?.path { try Paths.requireParentFolder(file, nothing: "no vault was made") }
        let escrow = escrowKey.map { EscrowRecipient(publicKey: $0.bytes, label: "escrow") }
        var secret: SecureBytes?
        if let file = passphraseFile?.path {
            var typed = try Prompt.secretFile(file, what: "passphrase")
            defer { wipe(&typed) }
            guard !typed.isEmpty else { throw CLIFailure("the passphrase file \(file) is empty") }
            secret = try Prompt.passphraseBytes(typed)
        } else if passphrase {
            secret = try Prompt.newPassphrase(option: "--passphrase-file")
        }
        if let secret { Prompt.warnIfShort(secret, out: c.out) }
        let journalName = name ?? Paths.deletingExtension(of: Paths.lastComponent(of: path))
        let (device, created) = try Unlock.loadOrCreateDevice(named: deviceName?.name)
        let recovery: RecoveryKey
        do { recovery = try RecoveryKey() } catch { throw CLIFailure("\(error)") }
        // The recovery key file first (new, 0600): if it cannot be written, no vault is made.
        let recoveryFile = recoveryKeyFile?.path
        if let recoveryFile { try RecoveryKeyFile.write(recovery, to: recoveryFile, nothing: "nothing was changed") }
        var setup = VaultSetup(name: journalName, recoveryKey: recovery, device: device)
        setup.guardedPassphrase = secret
        setup.escrow = escrow
        setup.isEscrowFree = escrowFree
        let vault: Vault
        let store = try Unlock.store()
        do throws(QuireError) {
            vault = try Vault.create(at: path, setup: setup)
            try vault.remember(in: store)
        } catch {
            if let recoveryFile { try? FileSystem.remove(recoveryFile) }
            throw .vault(error, path: path)
        }
        let out = c.out
        out.line("Created \(path): the journal \"\(journalName)\", vault id \(vault.vaultID).")
        out.line("This device: \"\(device.name)\", fingerprint \(device.fingerprint)\(created ? " (its key was made now)" : "").")
        if setup.isEscrowFree { out.line("Escrow-free: no escrow key can ever be added.") }
        if escrow != nil { out.line("An escrow key can also decrypt it (standard mode).") }
        if secret != nil { out.line("A passphrase can also open it.") }
        if let recoveryFile {
            out.line("The recovery key was written to \(recoveryFile) (mode 0600). Copy it somewhere safe, away")
            out.line("from this device (on paper, or in a password manager), then delete the file.")
        } else if !out.json {
            out.line()
            out.line("Recovery key (shown once; write it down and keep it away from this device):")
            out.line()
            out.line("    \(recovery.code())")
            out.line()
            out.line("It opens the journal on any device. Without it, losing every enrolled device")
            out.line("loses the journal; with it, anyone can read it.")
        }
        out.emit(
            InitJSON(
                path: path, vaultID: vault.vaultID.description, name: journalName, escrowFree: setup.isEscrowFree,
                passphrase: secret != nil,
                device: .init(name: device.name, fingerprint: device.fingerprint, created: created),
                recoveryKey: recoveryFile == nil ? recovery.code() : nil, recoveryKeyFile: recoveryFile))
        return .success
    }
}

/// What `quire init --json` prints.
struct InitJSON: JSONShape {
    struct Device: Encodable {
        let name: String
        let fingerprint: String
        let created: Bool
    }

    let path: String
    let vaultID: String
    let name: String
    let escrowFree: Bool
    let passphrase: Bool
    let device: Device
    @OrNull var recoveryKey: String?
    @OrNull var recoveryKeyFile: String?

    static var example: InitJSON {
        InitJSON(
            path: "", vaultID: "", name: "", escrowFree: false, passphrase: false, device: .init(name: "", fingerprint: "", created: false),
            recoveryKey: nil, recoveryKeyFile: nil)
    }
}
