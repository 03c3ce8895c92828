// A small, strict argument parser: every command declares its options and how
// many operands it takes; anything else is a usage error (exit 64).

/// One option a command accepts.
struct OptionSpec: Sendable {
    /// The long name without dashes, such as `"date"`.
    let name: String
    /// A one-letter alias without the dash, such as `"o"`.
    var short: Character? = nil
    /// The value's placeholder in help (`"WHEN"`); nil for a flag.
    var value: String? = nil
    /// May be given more than once.
    var repeatable = false
    /// One line of help.
    let help: String

    var isFlag: Bool { value == nil }
    var display: String {
        var s = short.map { "-\($0), " } ?? ""
        s += "--\(name)"
        if let value { s += " \(value)" }
        if repeatable { s += "..." }
        return s
    }
}

/// A command: its name, usage line, operands, options and help.
struct CommandSpec: Sendable {
    /// The name as typed: `"add"`, `"keys status"`.
    let name: String
    /// Operands in the usage line, such as `"VAULT [TEXT | -]"`.
    let operands: String
    /// What it does, in one line (shown in `quire help`).
    let summary: String
    /// How many operands it takes.
    let operandCount: ClosedRange<Int>
    /// Its options (`--help` is implicit).
    let options: [OptionSpec]
    /// Paragraphs after the options: details, the JSON shape, examples.
    var details: String = ""

    func option(named name: String) -> OptionSpec? { options.first { $0.name == name } }
    func option(short: Character) -> OptionSpec? { options.first { $0.short == short } }
}

/// What the parser found.
struct ParsedArguments: Sendable {
    var operands: [String] = []
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var wantsHelp = false

    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ name: String) -> Bool { flags.contains(name) || values[name] != nil }
}

/// Parses `arguments` (after the command name) against `spec`.
///
/// `--name=value` and `--name value` are both accepted; `--` ends the
/// options; a lone `-` is an operand (standard input).
///
/// - Throws: ``CLIFailure`` with exit 64 for an unknown option, a missing
///   value, a repeated single option, or the wrong number of operands.
func parse(_ arguments: [String], for spec: CommandSpec) throws(CLIFailure) -> ParsedArguments {
    var parsed = ParsedArguments()
    var index = 0
    var optionsEnded = false
    func usage(_ message: String) -> CLIFailure { .usage(message, command: spec.name) }
    func record(_ option: OptionSpec, _ value: String?) throws(CLIFailure) {
        if option.isFlag {
            if parsed.flags.contains(option.name) { throw usage("--\(option.name) is given twice") }
            parsed.flags.insert(option.name)
        } else {
            guard let value else { throw usage("--\(option.name) needs a value (\(option.value!))") }
            if parsed.values[option.name] != nil && !option.repeatable { throw usage("--\(option.name) is given twice") }
            parsed.values[option.name, default: []].append(value)
        }
    }
    while index < arguments.count {
        let arg = arguments[index]
        index += 1
        if optionsEnded || arg == "-" || !arg.hasPrefix("-") {
            parsed.operands.append(arg)
            continue
        }
        if arg == "--" { optionsEnded = true; continue }
        if arg == "--help" || arg == "-h" { parsed.wantsHelp = true; continue }
        if arg.hasPrefix("--") {
            let body = arg.dropFirst(2)
            let name: String, inline: String?
            if let eq = body.firstIndex(of: "=") {
                name = String(body[..<eq])
                inline = String(body[body.index(after: eq)...])
            } else {
                name = String(body)
                inline = nil
            }
            guard let option = spec.option(named: name) else { throw usage("unknown option --\(name) for 'quire \(spec.name)'") }
            if option.isFlag {
                if inline != nil { throw usage("--\(name) takes no value") }
                try record(option, nil)
            } else if let inline {
                try record(option, inline)
            } else {
                guard index < arguments.count else { throw usage("--\(name) needs a value (\(option.value!))") }
                try record(option, arguments[index])
                index += 1
            }
            continue
        }
        // Short options: `-o FILE`, `-oFILE`.
        let letters = Array(arg.dropFirst())
        guard let first = letters.first, let option = spec.option(short: first) else {
            throw usage("unknown option \(arg) for 'quire \(spec.name)'")
        }
        if option.isFlag {
            guard letters.count == 1 else { throw usage("unknown option \(arg) for 'quire \(spec.name)'") }
            try record(option, nil)
        } else if letters.count > 1 {
            try record(option, String(letters.dropFirst()))
        } else {
            guard index < arguments.count else { throw usage("-\(first) needs a value (\(option.value!))") }
            try record(option, arguments[index])
            index += 1
        }
    }
    if parsed.wantsHelp { return parsed }
    let n = parsed.operands.count
    if n < spec.operandCount.lowerBound {
        throw usage("'quire \(spec.name)' needs \(spec.operands.isEmpty ? "no operands" : spec.operands); got \(n == 0 ? "none" : "\(n)")")
    }
    if n > spec.operandCount.upperBound {
        let extra = parsed.operands[spec.operandCount.upperBound...].map { "'\($0)'" }.joined(separator: " ")
        throw usage("unexpected \(extra) for 'quire \(spec.name)' (usage: quire \(spec.name)\(spec.operands.isEmpty ? "" : " " + spec.operands))")
    }
    return parsed
}
