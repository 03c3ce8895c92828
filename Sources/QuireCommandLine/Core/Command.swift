// The command layer, typed in the way swift-argument-parser teaches: a type
// per command, its operands and options declared as properties with
// property wrappers (`@Argument`, `@Option`, `@Flag`, `@OptionGroup`),
// and a configuration naming it. The parser, the help, the man page and
// the shell completions all read the same declarations.

import Foundation

/// A type whose stored properties declare command-line arguments.
///
/// The declarations are found by reflection (`Mirror`), in declaration
/// order; an ``OptionGroup`` contributes its own declarations in place.
protocol ParsableArguments {
    /// A fresh value whose declarations hold their defaults.
    init()
}

/// A `quire` command: its configuration, its declared arguments and what it does.
protocol QuireCommand: ParsableArguments {
    /// The command's name, summary, details and subcommands.
    static var configuration: CommandConfiguration { get }

    /// Runs the command after its arguments were parsed into its properties.
    ///
    /// - Returns: the exit code.
    /// - Throws: ``CLIFailure``, printed as `quire: error: …` (and as JSON with `--json`).
    func run(_ context: CommandContext) throws(CLIFailure) -> ExitCode
}

extension QuireCommand {
    func run(_ context: CommandContext) throws(CLIFailure) -> ExitCode {
        throw CLIFailure.usage("'quire \(Self.configuration.name)' needs a subcommand", command: Self.configuration.name)
    }
}

/// Where a command is listed in `quire help`.
enum HelpSection: String, CaseIterable, Sendable {
    case journal = "Journal"
    case browse = "Reading and finding"
    case file = "The file"
    case keys = "Keys and devices"
    case setup = "Setting up"
}

/// What names a command and describes it (after ArgumentParser's
/// `CommandConfiguration`). `@unchecked Sendable`: it holds strings and
/// metatypes only, is built once per command type and never mutated.
struct CommandConfiguration: @unchecked Sendable {
    /// The words that select it after `quire`: `"add"`, `"keys status"`.
    var name: String
    /// One line, lower case, no final period (shown in `quire help`).
    var abstract: String
    /// Paragraphs shown after the options in `quire help CMD` and the man page.
    var discussion: String = ""
    /// The JSON `--json` prints, when the command has a shape of its own.
    var json: (any JSONShape.Type)? = nil
    /// A note after the JSON outline (what a field means, when it is null).
    var jsonNote: String = ""
    /// Subcommands, for a group (`keys`, `device`).
    var subcommands: [any QuireCommand.Type] = []
    /// The subcommand run when the group is given none.
    var defaultSubcommand: (any QuireCommand.Type)? = nil
    /// Where `quire help` lists it; nil for a subcommand or a hidden command.
    var section: HelpSection? = nil
    /// Left out of `quire help`, the man page and completions.
    var isHidden = false
    /// Whether the unlocking paragraph follows its help.
    var unlocks = false

    /// The last word of the name.
    var leafName: String { String(name.split(separator: " ").last ?? "") }
}
