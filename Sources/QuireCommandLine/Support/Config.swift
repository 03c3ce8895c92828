import Foundation
import QuireSystem

/// The configuration file: named journals and the default one.
///
/// It lives at `$QUIRE_CONFIG`, else `$XDG_CONFIG_HOME/quire/config.toml`,
/// else `~/.config/quire/config.toml`, and is a small subset of TOML:
///
/// ```toml
/// default = "diary"                  # the journal used when a command names none
///
/// [journals]
/// diary = "~/Sync/Journal.quire"     # a path: absolute, ~/…, or relative to this file's folder
/// work = "/home/me/Work.quire"
/// ```
///
/// Comments start with `#`; values are double-quoted strings with `\"`,
/// `\\`, `\t`, `\n` and `\uXXXX` escapes. Unknown settings are errors, so
/// a typo is said rather than ignored.
struct Config: Sendable {
    /// The file this was read from (it may not exist).
    let path: String
    /// Journal names and their vault paths (expanded), in file order.
    var journals: [(name: String, path: String)] = []
    /// The name `default` gives, if any.
    var defaultJournal: String?

    /// The path of journal `name`, if the file names it.
    func journal(_ name: String) -> String? { journals.first { $0.name == name }?.path }

    /// Where the configuration file is.
    static func location() -> String {
        if let explicit = FileSystem.environment("QUIRE_CONFIG"), !explicit.isEmpty { return explicit }
        if let xdg = FileSystem.environment("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return xdg + "/quire/config.toml" }
        return home() + "/.config/quire/config.toml"
    }

    static func home() -> String {
        FileSystem.environment("HOME").flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
    }

    /// Reads the file; an empty configuration when there is none.
    ///
    /// - Throws: ``CLIFailure`` (`config_invalid`) naming the line that is wrong.
    static func load() throws(CLIFailure) -> Config {
        let path = location()
        guard FileSystem.exists(path) else { return Config(path: path) }
        let text: String
        do {
            let file = try SystemFile(path: path, mode: .readOnly)
            let size = try file.size()
            guard size <= 1 << 20 else { throw invalid(path, 0, "it is larger than 1 MiB") }
            text = String(decoding: try file.read(count: Int(size), at: 0), as: UTF8.self)
        } catch let e as CLIFailure {
            throw e
        } catch {
            throw CLIFailure("cannot read the configuration file: \(error)", hint: "check \(path)", code: "config_invalid")
        }
        return try parse(text, path: path)
    }

    static func invalid(_ path: String, _ line: Int, _ what: String) -> CLIFailure {
        CLIFailure(
            "the configuration file \(path)\(line > 0 ? " line \(line)" : "") \(what)",
            hint: "fix it (see 'quire help journals' for its form) or set QUIRE_CONFIG to another file", code: "config_invalid")
    }

    /// Parses the configuration `text` read from `path`.
    ///
    /// - Throws: ``CLIFailure`` (`config_invalid`).
    static func parse(_ text: String, path: String) throws(CLIFailure) -> Config {
        var config = Config(path: path)
        var section = ""
        let folder = Paths.parentFolder(of: path)
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = i + 1
            let line = stripComment(String(raw)).trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else { throw invalid(path, number, "has a section header without its ']'") }
                section = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                guard section == "journals" else {
                    throw invalid(path, number, "has an unknown section [\(section)]; the one section is [journals]")
                }
                continue
            }
            guard let eq = line.firstIndex(of: "=") else { throw invalid(path, number, "is not 'name = \"value\"'") }
            var key = String(line[..<eq]).trimmingCharacters(in: .whitespaces)
            let rawValue = String(line[line.index(after: eq)...]).trimmingCharacters(in: .whitespaces)
            if key.hasPrefix("\"") {
                guard let unquoted = unquote(key) else { throw invalid(path, number, "has a badly quoted name") }
                key = unquoted
            } else if key.isEmpty || !key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) {
                throw invalid(path, number, "has a name that is not letters, digits, '-' or '_': \(key)")
            }
            guard let value = unquote(rawValue) else {
                throw invalid(path, number, "gives \(key) a value that is not a double-quoted string")
            }
            switch section {
            case "":
                guard key == "default" else {
                    throw invalid(path, number, "has an unknown setting '\(key)'; settings are 'default' and the [journals] section")
                }
                config.defaultJournal = value
            default:
                guard config.journal(key) == nil else { throw invalid(path, number, "names the journal '\(key)' twice") }
                config.journals.append((key, expand(value, relativeTo: folder)))
            }
        }
        if let d = config.defaultJournal, config.journal(d) == nil {
            throw invalid(path, 0, "makes '\(d)' the default journal, but [journals] has no '\(d)'")
        }
        return config
    }

    /// `~/x` → `$HOME/x`; a relative path → from `folder`.
    static func expand(_ value: String, relativeTo folder: String) -> String {
        if value == "~" { return home() }
        if value.hasPrefix("~/") { return home() + value.dropFirst() }
        if value.hasPrefix("/") { return value }
        return folder == "." ? value : folder + "/" + value
    }

    /// The line without a `#` comment outside quotes.
    static func stripComment(_ line: String) -> String {
        var inString = false
        var escaped = false
        for (i, c) in zip(line.indices, line) {
            if escaped {
                escaped = false
                continue
            }
            if c == "\\" && inString {
                escaped = true
                continue
            }
            if c == "\"" { inString.toggle() }
            if c == "#" && !inString { return String(line[..<i]) }
        }
        return line
    }

    /// The content of a double-quoted TOML basic string, or nil.
    static func unquote(_ text: String) -> String? {
        guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return nil }
        let inner = Array(text.dropFirst().dropLast())
        var out = ""
        var i = 0
        while i < inner.count {
            let c = inner[i]
            if c == "\"" { return nil }
            guard c == "\\" else {
                out.append(c)
                i += 1
                continue
            }
            guard i + 1 < inner.count else { return nil }
            switch inner[i + 1] {
            case "\"": out.append("\"")
            case "\\": out.append("\\")
            case "t": out.append("\t")
            case "n": out.append("\n")
            case "u":
                guard i + 5 < inner.count, let v = UInt32(String(inner[(i + 2)...(i + 5)]), radix: 16), let s = Unicode.Scalar(v) else {
                    return nil
                }
                out.unicodeScalars.append(s)
                i += 6
                continue
            default: return nil
            }
            i += 2
        }
        return out
    }

    /// `value` as a TOML basic string.
    static func quote(_ value: String) -> String {
        var out = "\""
        for s in value.unicodeScalars {
            switch s {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if s.value < 0x20 || s.value == 0x7f { out += String(format: "\\u%04X", s.value) } else { out.unicodeScalars.append(s) }
            }
        }
        return out + "\""
    }

    /// The file's text with journal `name` set to `vaultPath` (replacing
    /// its line, or added to `[journals]`), and `default` set to it when
    /// `makeDefault`. Other lines and comments are kept as they are.
    static func updated(_ text: String, name: String, vaultPath: String, makeDefault: Bool) -> String {
        var lines = text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        let entry = "\(name) = \(quote(vaultPath))"
        var section = ""
        var lastInJournals: Int?
        var replaced = false
        var defaultLine: Int?
        for (i, raw) in lines.enumerated() {
            let line = stripComment(raw).trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                section = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                if section == "journals" { lastInJournals = i }
                continue
            }
            guard let eq = line.firstIndex(of: "=") else { continue }
            let key =
                unquote(String(line[..<eq]).trimmingCharacters(in: .whitespaces))
                ?? String(line[..<eq]).trimmingCharacters(in: .whitespaces)
            if section == "journals" {
                lastInJournals = i
                if key == name {
                    lines[i] = entry
                    replaced = true
                }
            } else if section == "" && key == "default" {
                defaultLine = i
            }
        }
        if !replaced {
            if let last = lastInJournals {
                lines.insert(entry, at: last + 1)
            } else {
                if !lines.isEmpty { lines.append("") }
                lines += ["[journals]", entry]
            }
        }
        if makeDefault {
            let line = "default = \(quote(name))"
            if let d = defaultLine { lines[d] = line } else { lines.insert(line, at: 0) }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Which vault a command works on: the VAULT operand (a path, or a
/// journal name from the configuration), else `$QUIRE_VAULT` (a path or a
/// name), else the configuration's default journal (or its only one).
final class VaultLocator {
    private var loaded: Config?

    /// The help for a VAULT operand.
    static let operandHelp = "a vault's path or a journal's name (default: $QUIRE_VAULT, else the config's default journal)"

    static let noDefaultHint =
        "give the vault's path, set QUIRE_VAULT to it, or name a default journal in \(Config.location()) (see 'quire help journals')"

    /// The configuration, read once.
    ///
    /// - Throws: ``CLIFailure`` when the file is invalid.
    func config() throws(CLIFailure) -> Config {
        if let loaded { return loaded }
        let c = try Config.load()
        loaded = c
        return c
    }

    /// True when `text`, as the first operand, is to be taken as the vault:
    /// a journal's name from the config, a path ending in `.quire`, or an
    /// existing file that starts like a vault.
    func looksLikeVault(_ text: String) -> Bool {
        if !text.contains("/"), (try? config())?.journal(text) != nil { return true }
        if text.lowercased().hasSuffix(".quire") { return true }
        guard FileSystem.isRegularFile(text), let file = try? SystemFile(path: text, mode: .readOnly),
            let head = try? file.read(count: 8, at: 0)
        else { return false }
        return head == [0x89, 0x51, 0x55, 0x49, 0x52, 0x45, 0x0d, 0x0a]
    }

    /// The vault path an operand names: a journal's path for its name (a
    /// name has no `/`), else the operand itself.
    func path(for operand: String) throws(CLIFailure) -> String {
        if !operand.contains("/"), !operand.isEmpty, let path = try config().journal(operand) { return path }
        return operand
    }

    /// The default journal's path, or nil when none is set.
    ///
    /// - Throws: ``CLIFailure`` when the configuration is invalid.
    func defaultPath() throws(CLIFailure) -> String? {
        if let env = FileSystem.environment("QUIRE_VAULT"), !env.isEmpty { return try path(for: env) }
        let c = try config()
        if let d = c.defaultJournal { return c.journal(d) }
        return c.journals.count == 1 ? c.journals[0].path : nil
    }
}
