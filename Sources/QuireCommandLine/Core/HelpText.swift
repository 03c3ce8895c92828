import Foundation

/// `quire help`, `quire help GROUP` and `quire help CMD`, written from the
/// commands' declarations (their configuration and their properties).
enum HelpText {
    static let tagline = "quire: an encrypted journal in one file, readable only by your devices."

    static let unlocking = """
        Unlocking: --recovery-key-file if given; else this device's key; else --passphrase-file;
        else, on a terminal, a prompt for the recovery key or the passphrase.
        """

    /// The environment variables quire reads, with one line each.
    static let environment: [(String, String)] = [
        ("QUIRE_VAULT", "the default journal: a vault's path, or a journal's name from the config"),
        ("QUIRE_HOME", "this device's key store (default: $XDG_DATA_HOME/quire, else ~/.local/share/quire)"),
        ("QUIRE_CONFIG", "the config file (default: $XDG_CONFIG_HOME/quire/config.toml, else ~/.config/quire/config.toml)"),
        ("VISUAL, EDITOR", "the editor 'add' and 'edit' open"),
        ("PAGER", "the pager for long output on a terminal (default: less; empty or cat: none)"),
        ("NO_COLOR", "no colour (there is none when stdout is not a terminal)"),
        ("TZ", "the time zone dates are read and shown in"),
    ]

    static let exitCodes = "Exit codes: 0 success, 1 failure, 2 damage found by 'verify', 64 usage error."

    /// A command's operands as the usage line shows them: `[VAULT] ID`.
    static func operands(_ type: any QuireCommand.Type) -> String {
        declarations(of: type.init()).filter { !$0.isOption }.map(\.usage).joined(separator: " ")
    }

    /// `name operands` for lists.
    static func synopsis(_ type: any QuireCommand.Type) -> String {
        let ops = operands(type)
        return type.configuration.name + (ops.isEmpty ? "" : " " + ops)
    }

    /// `quire help`.
    static func overview() -> String {
        var rows: [(HelpSection, String, String)] = []
        for type in QuireCLI.commands where !type.configuration.isHidden {
            guard let section = type.configuration.section else { continue }
            let c = type.configuration
            let subs = c.subcommands.filter { !$0.configuration.isHidden }
            if subs.isEmpty {
                rows.append((section, synopsis(type), c.abstract))
                continue
            }
            let defaultID = c.defaultSubcommand.map { ObjectIdentifier($0) }
            if let d = c.defaultSubcommand {
                let ops = operands(d)
                rows.append((section, c.name + (ops.isEmpty ? "" : " " + ops), c.abstract))
            }
            for sub in subs where ObjectIdentifier(sub) != defaultID {
                rows.append((section, synopsis(sub), sub.configuration.abstract))
            }
        }
        let width = min(32, (rows.map(\.1.count).max() ?? 0) + 2)
        var s = tagline + "\n\nUsage: quire COMMAND [ARGUMENTS] [OPTIONS]\n"
        for section in HelpSection.allCases {
            let inSection = rows.filter { $0.0 == section }
            guard !inSection.isEmpty else { continue }
            s += "\n\(section.rawValue):\n"
            for (_, left, right) in inSection { s += row(left, right, width: width) }
        }
        s += """

            VAULT is a vault's path or a journal's name from the config; left out,
            the default journal ($QUIRE_VAULT, else the config's) is used.

            \(unlocking)

            Environment:

            """
        for (name, text) in environment { s += row(name, text, width: 18) }
        s += """

            \(exitCodes)
            Run 'quire help COMMAND' (or 'quire COMMAND --help') for its options.

            """
        return s
    }

    /// `quire help keys`: a group's subcommands.
    static func group(_ type: any QuireCommand.Type) -> String {
        let c = type.configuration
        let subs = c.subcommands.filter { !$0.configuration.isHidden }
        var s = "Usage: quire \(c.name) SUBCOMMAND [ARGUMENTS] [OPTIONS]\n\n"
        s += capitalized(c.abstract) + ".\n\nSubcommands:\n"
        let width = min(32, (subs.map { synopsis($0).count }.max() ?? 0) + 2)
        for sub in subs { s += row(synopsis(sub), sub.configuration.abstract, width: width) }
        if let d = c.defaultSubcommand { s += "\n'quire \(c.name)' alone runs 'quire \(d.configuration.name)'.\n" }
        if !c.discussion.isEmpty { s += "\n" + c.discussion + "\n" }
        s += "\nRun 'quire help \(c.name) SUBCOMMAND' for its options.\n"
        return s
    }

    /// `quire help CMD`.
    static func command(_ type: any QuireCommand.Type) -> String {
        let c = type.configuration
        let specs = declarations(of: type.init()).filter { !$0.isHidden }
        let ops = specs.filter { !$0.isOption }
        var s = "Usage: quire \(c.name)\(ops.isEmpty ? "" : " " + ops.map(\.usage).joined(separator: " ")) [OPTIONS]\n\n"
        s += capitalized(c.abstract) + ".\n"
        if !ops.isEmpty {
            s += "\nArguments:\n"
            let rows = ops.map { ($0.usage.trimmingCharacters(in: ["[", "]"]), $0.help) }
            let width = min(30, (rows.map(\.0.count).max() ?? 0) + 2)
            for (left, right) in rows { s += row(left, right, width: width) }
        }
        s += "\nOptions:\n"
        let rows = specs.filter(\.isOption).map { ($0.display, $0.help) } + [("-h, --help", "show this help")]
        let width = min(30, (rows.map(\.0.count).max() ?? 0) + 2)
        for (left, right) in rows { s += row(left, right, width: width) }
        if !c.discussion.isEmpty { s += "\n" + c.discussion + "\n" }
        if let json = c.json {
            s += "\n" + JSONOutline.wrapped(json) + "\n"
            if !c.jsonNote.isEmpty { s += c.jsonNote + "\n" }
        }
        if c.unlocks { s += "\n" + unlocking + "\n" }
        return s
    }

    /// `  left   right`, `right` wrapped at 80 columns under itself; `left`
    /// alone on its line when it is too wide.
    static func row(_ left: String, _ right: String, width: Int) -> String {
        let indent = String(repeating: " ", count: 2 + width)
        let lines = wrap(right, width: max(30, 80 - 2 - width))
        var s = left.count + 2 > width ? "  \(left)\n" + indent : "  " + left + String(repeating: " ", count: width - left.count)
        s += lines.joined(separator: "\n" + indent) + "\n"
        return s
    }

    /// `text` in lines of at most `width` characters, broken at spaces.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if !current.isEmpty && current.count + 1 + word.count > width {
                lines.append(current)
                current = String(word)
            } else {
                current += (current.isEmpty ? "" : " ") + word
            }
        }
        lines.append(current)
        return lines
    }

    static func capitalized(_ s: String) -> String {
        guard let first = s.first else { return s }
        return first.uppercased() + s.dropFirst()
    }
}
