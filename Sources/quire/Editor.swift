import Foundation
import Quire
import QuireSystem

/// Text for `add` and `edit`: the TEXT operand, standard input (`-`), or
/// `$VISUAL` / `$EDITOR` on a temporary file.
enum EntryText {
    /// Standard input, as UTF-8.
    static func standardInput() throws(CLIFailure) -> String {
        let data = FileHandle.standardInput.readDataToEndOfFile()
        guard let text = String(data: data, encoding: .utf8) else {
            throw CLIFailure("standard input is not UTF-8 text", code: "usage", exit: .usage)
        }
        return text
    }

    /// Opens the editor on a 0600 file in a fresh 0700 folder holding
    /// `initial`; returns what was saved. The file is overwritten with zeros
    /// and removed, with its folder, whatever happens.
    static func compose(initial: String) throws(CLIFailure) -> String {
        let env = ProcessInfo.processInfo.environment
        let editor = [env["VISUAL"], env["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
        let folder = NSTemporaryDirectory() + "quire-edit-" + UUID().uuidString
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CLIFailure("cannot make a temporary folder for the editor: \(Paths.describe(error))")
        }
        let path = folder + "/entry.md"
        defer {
            if let f = try? SystemFile(path: path, mode: .readWrite), let size = try? f.size(), size > 0 {
                try? f.write([UInt8](repeating: 0, count: Int(size)), at: 0)
                try? f.sync()
            }
            try? FileSystem.remove(path)
            try? FileManager.default.removeItem(atPath: folder)
        }
        do {
            let f = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600))
            try f.write(Array(initial.utf8), at: 0)
        } catch {
            throw CLIFailure("cannot write the temporary file for the editor: \(error)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", editor + " \"$1\"", "quire-editor", path]
        do { try process.run() } catch { throw CLIFailure("cannot start the editor '\(editor)': \(Paths.describe(error))", hint: "set VISUAL or EDITOR") }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CLIFailure("the editor '\(editor)' exited with status \(process.terminationStatus); nothing was saved", code: "cancelled")
        }
        do {
            let f = try SystemFile(path: path, mode: .readOnly)
            var bytes = try f.read(count: Int(try f.size()), at: 0)
            defer { wipe(&bytes) }
            return String(decoding: bytes, as: UTF8.self)
        } catch {
            throw CLIFailure("cannot read back what the editor saved: \(error)")
        }
    }

    /// The text for `add`/`edit` from operand `index`; without it, nil when
    /// `optional` (other fields are being changed), else the editor with
    /// `initial` on a terminal, else a usage error.
    static func from(_ c: Context, operand index: Int, initial: String = "", optional: Bool = false) throws(CLIFailure) -> String? {
        if let text = c.operand(index) { return text == "-" ? try standardInput() : text }
        if optional { return nil }
        if Prompt.isInteractive && Terminal.isTerminal(Terminal.standardOutput) { return try compose(initial: initial) }
        throw c.usage("no TEXT: give the text, or '-' to read it from standard input (the editor opens only on a terminal)")
    }
}
