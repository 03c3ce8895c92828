import Foundation
@_spi(Format) import Quire
import QuireExport
import QuireImport
import QuireSystem

/// The exit codes `quire` uses (`Spec/cli-json.md §1`).
package enum ExitCode: Int32, Sendable {
    /// Success.
    case success = 0
    /// The command failed.
    case failure = 1
    /// `verify` found damage: records were lost or cannot be trusted.
    case damage = 2
    /// The command line was wrong (BSD `EX_USAGE`).
    case usage = 64
}

/// Why a command stopped: printed as `quire: error: …` and `quire: hint: …`.
struct CLIFailure: Error, Sendable {
    /// The sentence after `quire: error:`.
    var message: String
    /// What to do, after `quire: hint:`.
    var hint: String?
    /// A stable machine-readable code (`--json` errors, `Spec/cli-json.md §3.1`).
    var code: String
    /// The exit code.
    var exit: ExitCode
    /// The library error it reports, when it reports one.
    var cause: QuireError?

    init(_ message: String, hint: String? = nil, code: String = "failed", exit: ExitCode = .failure) {
        self.message = message
        self.hint = hint
        self.code = code
        self.exit = exit
    }

    /// A usage error (exit 64) with the hint to read the command's help.
    static func usage(_ message: String, command: String?) -> CLIFailure {
        CLIFailure(message, hint: "see 'quire help\(command.map { " " + $0 } ?? "")'", code: "usage", exit: .usage)
    }

    /// A library error, with the hint its case calls for.
    static func vault(_ error: QuireError, path: String? = nil) -> CLIFailure {
        var f = CLIFailure(error.description, hint: hint(for: error, path: path ?? "VAULT"), code: error.code)
        // A file shorter than the header that starts with the magic is a
        // vault cut off: damage, said as such (still truncated_header).
        if case .format(.truncatedHeader(let n)) = error.detail, let path, isCutOffVault(path) {
            f = CLIFailure(
                "damaged: the file is a Quire vault cut off, \(n) bytes, shorter than its 64-byte header (it starts with the Quire magic)",
                hint: "restore it from a copy (another device's copy, or a backup); 'quire verify \(path)' says the same", code: error.code)
        }
        f.cause = error
        return f
    }

    /// True when the file at `path` holds a non-empty start of the Quire
    /// magic bytes, or the whole magic (`Spec/format.md §3`).
    static func isCutOffVault(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return false }
        let bytes = [UInt8](data.prefix(FileHeader.magic.count))
        return bytes.count == FileHeader.magic.count ? bytes == FileHeader.magic : FileHeader.magic.starts(with: bytes)
    }

    /// What a person can do about `error`, chosen by its case.
    static func hint(for error: QuireError, path: String) -> String? {
        switch error.detail {
        case .keys(let e): return hint(for: e, path: path)
        case .deviceStore(.noKey):
            return "make this device's key with 'quire device code', or unlock with --recovery-key-file FILE"
        case .deviceStore(.io(let e)): return hint(for: e)
        case .removedFromVault:
            return "open it on a device still enrolled, or with --recovery-key-file FILE"
        case .behindNewerKeyring(_, _, true):
            return
                "to come back, run 'quire device code --new-key' here, then 'quire device add \(path) CODE --name NAME' on an enrolled device (or with --recovery-key-file FILE); 'quire device list \(path) --recovery-key-file FILE' shows which devices are enrolled and which removed"
        case .behindNewerKeyring:
            return
                "open it on a device that can read the newer keys; if you do not trust the member named above, remove it with 'quire device remove \(path) NAME' (here, or with --recovery-key-file FILE); if this device was removed, it comes back only with a new key: 'quire device code --new-key' here, then 'quire device add' on an enrolled device"
        case .tampered:
            return
                "merge a copy that holds the commit ('quire merge \(path) COPY'), compact without what cannot be verified ('quire compact \(path) --drop-unverified'), or accept it and write on ('quire keys accept-tampered \(path)')"
        case .rolledBack: return rollbackHint(path: path)
        case .format(let e): return hint(for: e, path: path)
        case .sync(let e): return hint(for: e, path: path)
        case .entryNotFound: return "see the ids with 'quire list'"
        case .entryDeleted: return "bring it back first with 'quire restore \(path) ID'"
        case .entryNotRestorable:
            return "a copy of the vault from before the compaction (a backup, another device's copy) still holds it"
        case .attachmentNotFound: return "see an entry's attachments with 'quire attachments ID'"
        case .attachmentNotStored: return "store the file again in the same command as the entry that names it"
        case .deviceStore: return nil
        case .catalogStale, .cancelled: return "run the command again"
        case .other, .transactionEnded: return nil
        case .damagedHeader: return "restore it from a copy (another device's copy, or a backup); 'quire verify \(path)' says the same"
        }
    }

    static func hint(for error: KeyError, path: String) -> String? {
        switch error {
        case .wrongDeviceKey:
            "enroll this device: run 'quire device code' here, then 'quire device add \(path) CODE --name NAME' on an enrolled device; or unlock with --recovery-key-file FILE"
        case .wrongRecoveryKey: "check the recovery key file holds this vault's recovery key (56 characters)"
        case .wrongPassphrase: "check the passphrase; passphrases are compared exactly, including case"
        case .noPassphrase:
            "unlock with --recovery-key-file FILE or on an enrolled device; an enrolled device can add a passphrase ('quire keys passphrase')"
        case .recoveryCodeInvalid: "a recovery key is 56 characters in groups of 4; dashes and spaces are optional"
        case .deviceCodeInvalid: "copy the whole code 'quire device code' prints on the new device (56 letters and digits; dashes optional)"
        case .rollbackSuspected: rollbackHint(path: path)
        case .recoveryKeyChoiceNeeded:
            "say which recovery code you hold: 'quire keys recovery-key \(path) --keep N' (N as listed above); if you hold neither, keep either and replace it afterwards with 'quire keys recovery-key \(path) --replace'"
        case .format(let e): hint(for: e, path: path)
        default: nil
        }
    }

    /// What to do about a file older than the copy this device saw
    /// (`Spec/keys.md §7`): writing stays refused until one of them.
    static func rollbackHint(path: String) -> String {
        "merge the newer copy back with 'quire merge \(path) NEWER-COPY', or, if you restored this file on purpose, run 'quire keys accept-rollback \(path)'"
    }

    static func hint(for error: FormatError, path: String) -> String? {
        switch error {
        case .notAVault, .truncatedHeader, .unsupportedVersion:
            "check the path: \(path) is not a Quire vault (vaults are made by 'quire init')"
        case .locked: "another quire process is writing to it; try again when it has finished"
        case .io(let e): hint(for: e)
        default: nil
        }
    }

    static func hint(for error: SyncError, path: String) -> String? {
        switch error {
        case .keys(let e): hint(for: e, path: path)
        case .vaultUnreadable(_, let e): hint(for: e, path: path)
        case .locked: "another quire process is writing to it; try again when it has finished"
        case .io(let e), .folderUnreadable(_, let e): hint(for: e)
        case .damaged:
            "merge a copy that holds those records intact ('quire merge \(path) COPY'), then compact; or compact without them ('quire compact \(path) --drop-unverified'); 'quire verify \(path)' lists them"
        case .unknownCriticalKind(_, _, let author):
            "update Quire to a version that knows this kind; if you do not recognise \(author ?? "the member that attested it") (a lost or stolen device), remove it first with 'quire device remove \(path) NAME' (here, or with --recovery-key-file FILE), then merge again"
        default: nil
        }
    }

    /// A hint for a failed system call: a full disk, a place not writable.
    static func hint(for error: SystemError) -> String? {
        if ProcessControl.isDiskFull(error) {
            return "the disk is full: free some space (or write somewhere else) and run the command again"
        }
        if ProcessControl.isNotPermitted(error) { return "check you may write there: the folder or file is not writable by this user" }
        return nil
    }

    /// An import error.
    static func importing(_ error: ImportError, path: String) -> CLIFailure {
        if case .vault(let e) = error { return .vault(e, path: path) }
        if case .unreadableSource = error {
            return CLIFailure(error.description, hint: "check the path and the format name: see 'quire help import'", code: error.code)
        }
        return CLIFailure(error.description, code: error.code)
    }

    /// An export error.
    static func exporting(_ error: ExportError, path: String) -> CLIFailure {
        if case .vault(let e) = error { return .vault(e, path: path) }
        return CLIFailure(error.description, code: error.code)
    }
}
