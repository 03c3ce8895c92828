import Foundation
@_spi(Format) import Quire
import QuireSystem

/// What a running command gets besides its own properties.
struct CommandContext {
    /// Where results, warnings and errors go.
    let out: Output
    /// The configuration and the default journal.
    let locator: VaultLocator
    /// The command's full name (`keys status`).
    let command: String
    /// Writes the PDF book, in the `quire-book` helper only (nil in `quire`,
    /// which runs that helper for `export --format pdf`: ``BookRenderer``).
    var book: BookRenderer? = nil

    /// A usage error (exit 64) pointing at this command's help.
    func usage(_ message: String) -> CLIFailure { .usage(message, command: command) }
}

/// The `quire` command: its commands, and how a command line reaches one.
package enum QuireCLI {
    /// The version line `quire --version` prints: the format version is the
    /// one the library reads and writes.
    static let version = "quire 0.1 (format version \(FileHeader.currentVersion))"

    /// Every top-level command, in the order `quire help` lists them.
    static var commands: [any QuireCommand.Type] {
        [
            InitCommand.self, AddCommand.self, EditCommand.self, RemoveCommand.self, RestoreCommand.self, StarCommand.self,
            UnstarCommand.self,
            AttachmentsCommand.self, ExtractCommand.self,
            ListCommand.self, ShowCommand.self, VersionsCommand.self, SearchCommand.self, OnThisDayCommand.self, StatsCommand.self,
            TagsCommand.self,
            VerifyCommand.self, InfoCommand.self, MergeCommand.self, ResolveCommand.self, CompactCommand.self, ImportCommand.self,
            ExportCommand.self,
            KeysCommand.self, DeviceCommand.self,
            JournalsCommand.self, CompletionCommand.self, ManualCommand.self,
        ]
    }

    /// Every runnable command, subcommands included, hidden ones left out
    /// unless `hidden` (for the man page and completions).
    static func allCommands(hidden: Bool = false) -> [any QuireCommand.Type] {
        var out: [any QuireCommand.Type] = []
        func visit(_ t: any QuireCommand.Type) {
            guard hidden || !t.configuration.isHidden else { return }
            out.append(t)
            for sub in t.configuration.subcommands { visit(sub) }
        }
        for t in commands { visit(t) }
        return out
    }

    /// The command named by the first words of `arguments`, and the rest.
    enum Lookup {
        case command(any QuireCommand.Type, rest: [String])
        /// A group given no subcommand it knows.
        case group(any QuireCommand.Type, unknown: String?)
        case none
    }

    static func find(_ arguments: [String]) -> Lookup {
        guard let first = arguments.first, let top = commands.first(where: { $0.configuration.name == first }) else { return .none }
        var type = top
        var rest = Array(arguments.dropFirst())
        while !type.configuration.subcommands.isEmpty {
            if let word = rest.first, let sub = type.configuration.subcommands.first(where: { $0.configuration.leafName == word }) {
                type = sub
                rest.removeFirst()
                continue
            }
            if let d = type.configuration.defaultSubcommand, rest.first.map({ $0.hasPrefix("-") && $0 != "-h" && $0 != "--help" }) ?? true {
                return .command(d, rest: rest)
            }
            let word = rest.first
            return .group(type, unknown: word.flatMap { $0 == "-h" || $0 == "--help" ? nil : $0 })
        }
        return .command(type, rest: rest)
    }

    /// Runs one command line; returns the exit code. `book` writes the PDF
    /// book: given by the `quire-book` helper, nil in `quire` (``BookRenderer``).
    package static func run(_ arguments: [String], book: BookRenderer? = nil) -> ExitCode {
        let out = Output(json: arguments.contains("--json"))
        do throws(CLIFailure) {
            let code = try dispatch(arguments, out: out, book: book)
            // Device memory once, after every commit of the command.
            Unlock.saveDeviceMemory(out: out)
            // Warnings raised during a write (after opening) reach the user too.
            Unlock.warnAboutWhatHappenedSinceOpening(out: out)
            out.finish()
            return code
        } catch {
            Unlock.saveDeviceMemory(out: out)
            Unlock.warnAboutWhatHappenedSinceOpening(out: out)
            out.finish()
            out.failure(error)
            return error.exit
        }
    }

    static func dispatch(_ arguments: [String], out: Output, book: BookRenderer? = nil) throws(CLIFailure) -> ExitCode {
        guard let first = arguments.first else {
            out.json = false
            Terminal.writeStandardError(HelpText.overview())
            return .usage
        }
        switch first {
        case "help", "--help", "-h":
            out.json = false
            return try help(Array(arguments.dropFirst()), out: out)
        case "--version", "version":
            out.json = false
            out.line("\(QuireCLI.version)")
            return .success
        default:
            break
        }
        switch find(arguments) {
        case .none:
            throw CLIFailure.usage("unknown command '\(first)'", command: nil)
        case .group(let type, let unknown):
            let names = type.configuration.subcommands.filter { !$0.configuration.isHidden }.map { $0.configuration.leafName }
            if let unknown {
                throw CLIFailure.usage(
                    "unknown subcommand '\(unknown)' of 'quire \(type.configuration.name)'; it has: \(names.joined(separator: ", "))",
                    command: type.configuration.name)
            }
            if arguments.count >= 2 {
                out.json = false
                out.line("\(multiline: HelpText.group(type))")
                return .success
            }
            throw CLIFailure.usage(
                "'quire \(type.configuration.name)' needs one of: \(names.joined(separator: ", "))", command: type.configuration.name)
        case .command(let type, let rest):
            return try run(type, rest, out: out, book: book)
        }
    }

    /// Parses `tokens` into a fresh `type` and runs it.
    static func run(
        _ type: any QuireCommand.Type, _ tokens: [String], out: Output, book: BookRenderer? = nil
    ) throws(CLIFailure) -> ExitCode {
        let name = type.configuration.name
        if CommandLineParser.wantsHelp(tokens) {
            out.json = false
            out.line("\(multiline: String(HelpText.command(type).dropLast()))")
            return .success
        }
        let command = type.init()
        let specs = declarations(of: command)
        let locator = VaultLocator()
        try CommandLineParser(command: name, specs: specs, locator: locator).parse(tokens)
        out.json = specs.contains { $0.name == "json" && $0.isSet() }
        // Editing sessions a killed quire left behind are wiped first.
        EditorScratch.sweep()
        return try command.run(CommandContext(out: out, locator: locator, command: name, book: book))
    }

    /// `quire help [WORDS…]`.
    static func help(_ words: [String], out: Output) throws(CLIFailure) -> ExitCode {
        if words.isEmpty {
            out.line("\(multiline: String(HelpText.overview().dropLast()))")
            return .success
        }
        switch find(words) {
        case .command(let type, let rest) where rest.isEmpty:
            out.line("\(multiline: String(HelpText.command(type).dropLast()))")
        case .group(let type, nil):
            out.line("\(multiline: String(HelpText.group(type).dropLast()))")
        default:
            throw CLIFailure.usage("no command '\(words.joined(separator: " "))'", command: nil)
        }
        return .success
    }
}
