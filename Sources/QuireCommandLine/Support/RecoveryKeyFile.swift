@_spi(Format) import Quire
import QuireSystem

/// Writes a recovery key's code to a new file (`Spec/records.md §6.5`).
enum RecoveryKeyFile {
    /// Writes `recovery`'s code and a newline to `path`, a file that must
    /// not exist yet, with mode 0600, and syncs it. The code is wiped from
    /// memory after the write.
    ///
    /// - Parameter nothing: what did not happen, for the error ("no vault was made").
    /// - Throws: ``CLIFailure`` when the file exists or cannot be written.
    static func write(_ recovery: RecoveryKey, to path: String, nothing: String) throws(CLIFailure) {
        do {
            let f = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600))
            var code = Array((recovery.code() + "\n").utf8)
            defer { wipe(&code) }
            try f.write(code, at: 0)
            try f.sync()
        } catch {
            if error.isAlreadyExists {
                throw CLIFailure(
                    "\(path) already exists; \(nothing)", hint: "the recovery key is written only to a new file: choose another name")
            }
            throw CLIFailure("cannot write the recovery key to \(path): \(error); \(nothing)", hint: CLIFailure.hint(for: error))
        }
    }
}
