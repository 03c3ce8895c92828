import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireSystem

/// Questions to the person at the terminal, and secrets read from files.
enum Prompt {
    /// True when quire may ask: standard input is a terminal. (Scripts and
    /// tests, whose stdin is a pipe or a file, are never asked anything.)
    static var isInteractive: Bool { Terminal.isTerminal(Terminal.standardInput) }

    /// Reads a line from /dev/tty with echo off. The caller wipes the bytes.
    static func secret(_ prompt: String) throws(CLIFailure) -> [UInt8] {
        let line: [UInt8]?
        do { line = try Terminal.readLine(prompt: prompt, echo: false) } catch {
            throw CLIFailure("cannot ask for a secret: \(error)", hint: "use --passphrase-file FILE or --recovery-key-file FILE instead")
        }
        guard let line else { throw CLIFailure("no answer was typed (end of input)", code: "cancelled") }
        return line
    }

    /// Asks a yes/no question on /dev/tty; true only for `y` or `yes`.
    static func confirm(_ question: String) throws(CLIFailure) -> Bool {
        let line: [UInt8]?
        do { line = try Terminal.readLine(prompt: TerminalEscape.escape(question, keepingLineBreaks: false) + " [y/N] ", echo: true) } catch
        {
            throw CLIFailure("cannot ask for confirmation: \(error)", hint: "pass --yes to confirm without a question")
        }
        let answer = String(decoding: line ?? [], as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased()
        return answer == "y" || answer == "yes"
    }

    /// A new passphrase: typed twice on /dev/tty (echo off). `option` is
    /// the option that gives it from a file instead, for the hint.
    static func newPassphrase(option: String) throws(CLIFailure) -> SecureBytes {
        guard isInteractive else {
            throw CLIFailure(
                "a passphrase can only be typed on a terminal", hint: "give it in a file with \(option) FILE (mode 0600)", code: "usage",
                exit: .usage)
        }
        var first = try secret("New passphrase: ")
        defer { wipe(&first) }
        var second = try secret("Type it again: ")
        defer { wipe(&second) }
        guard !first.isEmpty else { throw CLIFailure("the passphrase is empty", code: "usage", exit: .usage) }
        guard first == second else { throw CLIFailure("the two passphrases differ; nothing was changed", hint: "run the command again") }
        return try passphraseBytes(first)
    }

    /// The contents of a secret file (a passphrase or a recovery key): one
    /// line ending is removed; the file must not be readable by others.
    static func secretFile(_ path: String, what: String, option given: String? = nil) throws(CLIFailure) -> [UInt8] {
        let option = given ?? "--\(what == "passphrase" ? "passphrase" : "recovery-key")-file"
        if Paths.isFolder(path) {
            throw CLIFailure(
                "the \(what) file \(path) is a folder, not a file", hint: "give \(option) the path of the file that holds the \(what)")
        }
        let file: SystemFile
        do { file = try SystemFile(path: path, mode: .readOnly) } catch {
            throw CLIFailure("cannot read the \(what) file: \(error)", hint: "check the path given to \(option)")
        }
        if let mode = try? FileSystem.permissions(path), mode & 0o077 != 0 {
            throw CLIFailure(
                "the \(what) file \(path) can be read by other users (mode \(String(mode, radix: 8)))",
                hint: "run 'chmod 600 \(path)'")
        }
        var bytes: [UInt8]
        do {
            let size = try file.size()
            guard size <= 4096 else { throw CLIFailure("the \(what) file \(path) is larger than 4 KiB; it cannot hold a \(what)") }
            bytes = try file.read(count: Int(size), at: 0)
        } catch let e as CLIFailure {
            throw e
        } catch {
            throw CLIFailure("cannot read the \(what) file: \(error)")
        }
        if bytes.last == 0x0a { bytes.removeLast() }
        if bytes.last == 0x0d { bytes.removeLast() }
        return bytes
    }

    /// The fewest characters a new passphrase should have. A shorter one is
    /// accepted, with a warning (README, "Passphrase"): the passphrase is
    /// the user's choice, but a short one falls to offline guessing by
    /// anyone holding a copy of the file, Argon2id or not.
    static let recommendedPassphraseCharacters = 12

    /// Warns on stderr when a new passphrase has fewer than
    /// ``recommendedPassphraseCharacters`` characters (Unicode scalars,
    /// counted in place: the passphrase is never copied).
    static func warnIfShort(_ passphrase: SecureBytes, out: Output) {
        let characters = passphrase.withUnsafeBytes { raw in raw.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }
        guard characters < recommendedPassphraseCharacters else { return }
        out.warning(
            "this passphrase has only \(plural(characters, "character")): anyone with a copy of the vault can try passphrases on their own computer, and a short one is found quickly; it was accepted, but use \(recommendedPassphraseCharacters) characters or more (four or five random words) unless you know what you do"
        )
    }

    /// A passphrase in Unicode NFC, in guarded memory; wipes nothing of the caller's.
    /// ASCII is already in NFC and is copied straight into guarded memory;
    /// only other text goes through a `String`, which cannot be wiped.
    static func passphraseBytes(_ typed: [UInt8]) throws(CLIFailure) -> SecureBytes {
        if typed.allSatisfy({ $0 < 0x80 }) {
            do { return try typed.withUnsafeBytes { raw throws(QuireError) in try SecureBytes(copying: raw) } } catch {
                throw CLIFailure("\(error)")
            }
        }
        var normalized = Array(String(decoding: typed, as: UTF8.self).precomposedStringWithCanonicalMapping.utf8)
        do { return try SecureBytes(consuming: &normalized) } catch { throw CLIFailure("\(error)") }
    }
}
