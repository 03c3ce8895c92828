// quire: the command-line tool (issue 5). `quire help` lists the commands.

import Foundation
import QuireSystem

/// What every command gets: its spec, its parsed arguments and the output.
struct Context {
    let spec: CommandSpec
    let args: ParsedArguments
    let out: Output

    func operand(_ i: Int) -> String? { i < args.operands.count ? args.operands[i] : nil }

    func usage(_ message: String) -> CLIFailure { .usage(message, command: spec.name) }
}

/// Runs one command line; returns the exit code.
func run(_ arguments: [String]) -> ExitCode {
    let out = Output(json: arguments.contains("--json"))
    do throws(CLIFailure) {
        guard let first = arguments.first else {
            out.json = false
            Terminal.writeStandardError(Help.overview)
            return .usage
        }
        switch first {
        case "help", "--help", "-h":
            let rest = Array(arguments.dropFirst())
            if rest.isEmpty {
                writeStandardOutput(Data(Help.overview.utf8))
                return .success
            }
            if rest.count == 1, let group = Help.group(rest[0]) {
                writeStandardOutput(Data(group.utf8))
                return .success
            }
            guard let (spec, extra) = findCommand(rest), extra.isEmpty else {
                throw CLIFailure.usage("no command '\(rest.joined(separator: " "))'", command: nil)
            }
            writeStandardOutput(Data(Help.text(for: spec).utf8))
            return .success
        case "--version", "version":
            out.line("quire 0.1 (format version 1)")
            return .success
        default:
            break
        }
        guard let (spec, rest) = findCommand(arguments) else {
            let subs = commandTable.filter { $0.name.hasPrefix(first + " ") }.map { String($0.name.dropFirst(first.count + 1)) }
            if !subs.isEmpty {
                if arguments.count >= 2 && arguments[1] != "--help" && arguments[1] != "-h" {
                    throw CLIFailure.usage("unknown subcommand '\(arguments[1])' of 'quire \(first)'; it has: \(subs.joined(separator: ", "))", command: first)
                }
                if arguments.count >= 2 {
                    writeStandardOutput(Data(Help.group(first)!.utf8))
                    return .success
                }
                throw CLIFailure.usage("'quire \(first)' needs one of: \(subs.joined(separator: ", "))", command: first)
            }
            throw CLIFailure.usage("unknown command '\(first)'", command: nil)
        }
        let args = try parse(rest, for: spec)
        if args.wantsHelp {
            out.json = false
            writeStandardOutput(Data(Help.text(for: spec).utf8))
            return .success
        }
        out.json = args.flags.contains("json")
        let code = try dispatch(Context(spec: spec, args: args, out: out))
        Unlock.warnAboutWhatHappenedSinceOpening(out: out)
        return code
    } catch {
        Unlock.warnAboutWhatHappenedSinceOpening(out: out)
        var failure = error
        if failure.hint == nil { failure.hint = Paths.hint(forMessage: failure.message) }
        out.failure(failure)
        return failure.exit
    }
}

func dispatch(_ c: Context) throws(CLIFailure) -> ExitCode {
    switch c.spec.name {
    case "init": return try initCommand(c)
    case "add": return try addCommand(c)
    case "list": return try listCommand(c)
    case "show": return try showCommand(c)
    case "edit": return try editCommand(c)
    case "rm": return try removeCommand(c)
    case "search": return try searchCommand(c)
    case "attachments": return try attachmentsCommand(c)
    case "extract": return try extractCommand(c)
    case "verify": return try verifyCommand(c)
    case "info": return try infoCommand(c)
    case "merge": return try mergeCommand(c)
    case "resolve": return try resolveCommand(c)
    case "compact": return try compactCommand(c)
    case "import": return try importCommand(c)
    case "export": return try exportCommand(c)
    case "keys status": return try keysStatusCommand(c)
    case "keys rotate": return try keysRotateCommand(c)
    case "keys escrow-free": return try keysEscrowFreeCommand(c)
    case "keys passphrase": return try keysPassphraseCommand(c)
    case "device code": return try deviceCodeCommand(c)
    case "device add": return try deviceAddCommand(c)
    case "device remove": return try deviceRemoveCommand(c)
    case "device list": return try deviceListCommand(c)
    default: throw CLIFailure.usage("unknown command '\(c.spec.name)'", command: nil)
    }
}

// Decrypted entries and keys are in this process's memory: never in a core dump.
ProcessHardening.disableCoreDumps()
exit(run(Array(CommandLine.arguments.dropFirst())).rawValue)
