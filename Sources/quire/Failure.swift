import Quire
import QuireExport
import QuireImport

/// The exit codes `quire` uses (documented in `quire help`).
enum ExitCode: Int32, Sendable {
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
    /// A stable machine-readable code (`--json` errors).
    var code: String
    /// The exit code.
    var exit: ExitCode

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

    /// A library error, with a hint for the ones a person can do something about.
    static func vault(_ error: VaultError, path: String? = nil) -> CLIFailure {
        var hint: String?
        let where_ = path ?? "VAULT"
        switch error {
        case .keys(.wrongDeviceKey):
            hint = "enroll this device: run 'quire device code' here, then 'quire device add \(where_) CODE --name NAME' on an enrolled device; or unlock with --recovery-key-file FILE"
        case .keys(.wrongRecoveryKey):
            hint = "check the recovery key file holds this vault's recovery key (56 characters)"
        case .keys(.wrongPassphrase):
            hint = "check the passphrase; passphrases are compared exactly, including case"
        case .keys(.recoveryCodeInvalid):
            hint = "a recovery key is 56 characters in groups of 4; dashes and spaces are optional"
        case .deviceStore(.noKey):
            hint = "make this device's key with 'quire device code', or unlock with --recovery-key-file FILE"
        case .removedFromVault:
            hint = "open it on a device still enrolled, or with --recovery-key-file FILE"
        case .behindNewerKeyring:
            hint = "open it on a device that can read the newer keys; if you do not trust the member named above, remove it with 'quire device remove \(where_) NAME' (here, or with --recovery-key-file FILE)"
        case .format(.locked):
            hint = "another quire process is writing to it; try again when it has finished"
        default:
            if error.code == "not_a_vault" || error.code == "truncated_header" || error.code == "unsupported_version" {
                hint = "check the path: \(where_) is not a Quire vault (vaults are made by 'quire init')"
            } else if case .keys(.deviceCodeInvalid) = error {
                hint = "copy the whole code 'quire device code' prints on the new device (56 letters and digits; dashes optional)"
            }
        }
        if hint == nil { hint = Paths.hint(forMessage: error.description) }
        return CLIFailure(error.description, hint: hint, code: error.code)
    }

    /// An import error; `notImplemented` says which issue it waits for.
    /// (`if case` rather than `switch`: the import module may add cases.)
    static func importing(_ error: ImportError) -> CLIFailure {
        if case .notImplemented = error {
            return CLIFailure(error.description, hint: "this command waits for issue 6 (import); nothing was changed", code: error.code)
        }
        if case .vault(let e) = error { return .vault(e) }
        if case .unreadableSource = error {
            return CLIFailure(error.description, hint: "check the path and the format name: see 'quire help import'", code: error.code)
        }
        return CLIFailure(error.description, code: error.code)
    }

    /// An export error; `notImplemented` says which issue it waits for.
    /// (`if case` rather than `switch`: the export module may add cases.)
    static func exporting(_ error: ExportError) -> CLIFailure {
        if case .notImplemented = error {
            return CLIFailure(error.description, hint: "this command waits for issue 7 (export); nothing was written", code: error.code)
        }
        if case .vault(let e) = error { return .vault(e) }
        return CLIFailure(error.description, code: error.code)
    }
}
