import Foundation
@_spi(Format) import Quire
import QuireSystem

/// `quire journals`: the named journals of the config file.
struct JournalsCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "journals", abstract: "the journals named in the config, and the default one",
        discussion: """
            The config file (\(Config.location()), or $QUIRE_CONFIG)
            names journals so that commands need no path:

                default = "diary"
                [journals]
                diary = "~/Sync/Journal.quire"
                work = "/home/me/Work.quire"

            'quire list' then lists diary; 'quire list work' lists work. Paths are
            absolute, ~/…, or relative to the config file's folder. $QUIRE_VAULT (a
            path or a name) overrides the default. With one journal and no
            default, that journal is the default.
            """,
        subcommands: [JournalsListCommand.self, JournalsAddCommand.self], defaultSubcommand: JournalsListCommand.self, section: .setup)
}

/// `quire journals list`.
struct JournalsListCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "journals list", abstract: "the journals named in the config; * marks the default", json: JournalsJSON.self)

    @Flag(help: "only the names, one a line (for shell completion)", hidden: true) var names: Bool
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        if names {
            for j in (try? c.locator.config().journals) ?? [] { c.out.line("\(j.name)") }
            return .success
        }
        let config = try c.locator.config()
        let defaultPath = try c.locator.defaultPath()
        let fromEnvironment = FileSystem.environment("QUIRE_VAULT").flatMap { $0.isEmpty ? nil : $0 }
        for j in config.journals {
            let mark = j.path == defaultPath ? "*" : " "
            let missing = FileSystem.exists(j.path) ? "" : "  (no file there yet)"
            c.out.line("\(mark) \(j.name)  \(j.path)\(missing)")
        }
        if let fromEnvironment {
            c.out.line("default from QUIRE_VAULT: \(fromEnvironment)\(defaultPath.map { $0 == fromEnvironment ? "" : " (\($0))" } ?? "")")
        }
        if config.journals.isEmpty && !c.out.json {
            c.out.note("no journals are named in \(config.path); add one with 'quire journals add NAME VAULT --default'")
        }
        c.out.emit(
            JournalsJSON(
                config: config.path, defaultPath: defaultPath,
                journals: config.journals.map {
                    .init(name: $0.name, path: $0.path, isDefault: $0.path == defaultPath, exists: FileSystem.exists($0.path))
                }))
        return .success
    }
}

/// What `quire journals --json` prints.
struct JournalsJSON: JSONShape {
    struct Journal: Encodable {
        let name: String
        let path: String
        let isDefault: Bool
        let exists: Bool

        enum CodingKeys: String, CodingKey {
            case name, path
            case isDefault = "default"
            case exists
        }
    }

    let config: String
    @OrNull var defaultPath: String?
    let journals: [Journal]

    enum CodingKeys: String, CodingKey {
        case config
        case defaultPath = "default"
        case journals
    }

    static var example: JournalsJSON {
        JournalsJSON(config: "", defaultPath: nil, journals: [Journal(name: "", path: "", isDefault: false, exists: false)])
    }
}

/// `quire journals add NAME VAULT [--default]`.
struct JournalsAddCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "journals add", abstract: "name a journal in the config (--default: use it when none is named)", json: JournalsJSON.self)

    @Argument(placeholder: "NAME", help: "a name: letters, digits, '-' and '_'") var name: JournalName
    @Argument(placeholder: "VAULT", help: "the vault's path") var path: FilePath
    @Flag(name: "default", help: "make it the default journal") var makeDefault: Bool
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let location = Config.location()
        var absolute = path.path.hasPrefix("/") ? path.path : FileManager.default.currentDirectoryPath + "/" + path.path
        if absolute.hasSuffix("/.") { absolute.removeLast(2) }
        let home = Config.home()
        let stored = absolute.hasPrefix(home + "/") ? "~" + absolute.dropFirst(home.count) : absolute
        if !FileSystem.exists(absolute) && !c.out.json {
            c.out.note("there is no vault at \(absolute) yet; 'quire init \(absolute)' makes one")
        }
        var text = ""
        if FileSystem.exists(location) {
            do {
                let file = try SystemFile(path: location, mode: .readOnly)
                text = String(decoding: try file.read(count: Int(try file.size()), at: 0), as: UTF8.self)
            } catch { throw CLIFailure("cannot read \(location): \(error)") }
            _ = try Config.parse(text, path: location)
        }
        let updated = Config.updated(text, name: name.name, vaultPath: String(stored), makeDefault: makeDefault)
        let config = try Config.parse(updated, path: location)
        let folder = Paths.parentFolder(of: location)
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let temp = location + ".tmp-\(FileSystem.processID)"
            let file = try SystemFile(path: temp, mode: .createExclusive(permissions: 0o600))
            try file.write(Array(updated.utf8), at: 0)
            try file.sync()
            try FileSystem.rename(temp, to: location)
        } catch {
            throw CLIFailure("cannot write \(location): \(Paths.describe(error))", hint: "check you may write to \(folder)")
        }
        c.out.line("\(name.name) = \(String(stored))\(makeDefault ? " (the default journal)" : "") in \(location)")
        let defaultPath =
            config.defaultJournal.flatMap { config.journal($0) } ?? (config.journals.count == 1 ? config.journals[0].path : nil)
        c.out.emit(
            JournalsJSON(
                config: location, defaultPath: defaultPath,
                journals: config.journals.map {
                    .init(name: $0.name, path: $0.path, isDefault: $0.path == defaultPath, exists: FileSystem.exists($0.path))
                }))
        return .success
    }
}

/// A journal's name in the config: letters, digits, `-` and `_`.
struct JournalName: ArgumentValue {
    let name: String

    init(argument text: String) throws(ValueError) {
        guard !text.isEmpty, text.count <= 64, text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw ValueError("'\(text)' is not a journal name: use letters, digits, '-' and '_'")
        }
        name = text
    }

    static var placeholder: String { "NAME" }
}
