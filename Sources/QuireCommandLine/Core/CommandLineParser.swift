import Foundation

/// Fills a command's declarations from its command line, strictly:
/// anything the command does not declare is a usage error (exit 64).
///
/// `--name=value` and `--name value` are both accepted, `-o FILE` and
/// `-oFILE` too; `--` ends the options; a lone `-` is an operand (standard
/// input). An option declared `listed` (`--attach a.jpg b.jpg`) also takes
/// the operands right after its value that it accepts. Operands are given
/// to the declared operands in order; an optional vault operand that comes
/// first is resolved by ``VaultLocator``.
struct CommandLineParser {
    /// The command's full name, for messages (`keys status`).
    let command: String
    let specs: [ArgumentSpec]
    let locator: VaultLocator

    /// An operand as typed, and the repeatable option whose value it
    /// directly follows, if any (`rain` in `--tag reading rain`).
    struct Operand {
        let text: String
        let follows: (option: ArgumentSpec, value: String)?
    }

    func usage(_ message: String, hint: String? = nil) -> CLIFailure {
        var f = CLIFailure.usage(message, command: command)
        if let hint { f.hint = hint }
        return f
    }

    /// True when the command line asks for help (`-h`, `--help` before `--`).
    static func wantsHelp(_ tokens: [String]) -> Bool {
        for t in tokens {
            if t == "--" { return false }
            if t == "--help" || t == "-h" { return true }
        }
        return false
    }

    /// Parses `tokens` (the words after the command's name) into the declarations.
    ///
    /// - Throws: ``CLIFailure`` with exit 64 for an unknown option, a missing
    ///   or malformed value, a repeated single option, or the wrong operands.
    func parse(_ tokens: [String]) throws(CLIFailure) {
        var operands: [Operand] = []
        var given: [String: Int] = [:]
        var index = 0
        var optionsEnded = false
        var lastRepeatable: (option: ArgumentSpec, value: String)?
        func take(_ spec: ArgumentSpec, _ value: String) throws(CLIFailure) {
            given[spec.name, default: 0] += 1
            if given[spec.name]! > 1, case .option(_, false, _) = spec.kind { throw usage("--\(spec.name) is given twice") }
            if given[spec.name]! > 1, case .flag = spec.kind { throw usage("--\(spec.name) is given twice") }
            do { try spec.assign(value) } catch {
                var message = "--\(spec.name) \(error.message)"
                if case .flag = spec.kind { message = error.message }
                throw usage(message, hint: error.hint)
            }
        }
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            if optionsEnded || token == "-" || !token.hasPrefix("-") {
                operands.append(Operand(text: token, follows: lastRepeatable))
                lastRepeatable = nil
                continue
            }
            lastRepeatable = nil
            if token == "--" {
                optionsEnded = true
                continue
            }
            let spec: ArgumentSpec
            var inline: String?
            if token.hasPrefix("--") {
                let body = token.dropFirst(2)
                let name: String
                if let eq = body.firstIndex(of: "=") {
                    name = String(body[..<eq])
                    inline = String(body[body.index(after: eq)...])
                } else {
                    name = String(body)
                }
                guard let found = specs.first(where: { $0.isOption && $0.name == name }) else {
                    throw usage("unknown option --\(name) for 'quire \(command)'")
                }
                spec = found
            } else {
                let letters = Array(token.dropFirst())
                guard let first = letters.first, let found = specs.first(where: { $0.isOption && $0.short == first }) else {
                    throw usage("unknown option \(token) for 'quire \(command)'")
                }
                if case .flag = found.kind, letters.count > 1 { throw usage("unknown option \(token) for 'quire \(command)'") }
                if letters.count > 1 { inline = String(letters.dropFirst()) }
                spec = found
            }
            switch spec.kind {
            case .flag:
                if inline != nil { throw usage("--\(spec.name) takes no value") }
                try take(spec, "")
            case .option(let placeholder, let many, let listed):
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard index < tokens.count else { throw usage("--\(spec.name) needs a value (\(placeholder))") }
                    value = tokens[index]
                    index += 1
                }
                try take(spec, value)
                var last = value
                if let listed, inline == nil {
                    while index < tokens.count, tokens[index] != "-", !tokens[index].hasPrefix("-"), listed(tokens[index]) {
                        last = tokens[index]
                        try take(spec, last)
                        index += 1
                    }
                }
                if many { lastRepeatable = (spec, last) }
            case .operand, .vault:
                break
            }
        }
        try assign(operands)
    }

    /// Gives the operands to the declared operands in order.
    func assign(_ operands: [Operand]) throws(CLIFailure) {
        let positions = specs.filter { !$0.isOption }
        var queue = operands[...]
        // A leading optional vault: taken when the other operands cannot
        // absorb every operand given, or when the first looks like a vault.
        var vaultFromOperand: Operand?
        var rest = positions[...]
        if let first = positions.first, case .vault(_, true) = first.kind {
            rest = positions.dropFirst()
            let (minimum, maximum) = Self.capacity(of: Array(rest))
            let n = operands.count
            let take: Bool
            if n == 0 || n - 1 < minimum {
                take = false
            } else if let maximum, n > maximum {
                take = true
            } else {
                take = locator.looksLikeVault(operands[0].text)
            }
            if take {
                vaultFromOperand = queue.removeFirst()
            }
            try fillVault(first, from: vaultFromOperand, operandCount: operands.count)
        }
        let (minimum, maximum) = Self.capacity(of: Array(rest))
        if queue.count < minimum {
            let missing = rest.filter {
                if case .operand(_, let arity) = $0.kind { return arity == .one || arity == .oneOrMore }
                if case .vault(_, false) = $0.kind { return true }
                return false
            }
            let got = operands.count
            throw usage("'quire \(command)' needs \(missing.map(\.usage).joined(separator: " ")); got \(got == 0 ? "none" : "\(got)")")
        }
        if let maximum, queue.count > maximum {
            let extra = Array(queue.dropFirst(maximum))
            if let stray = operands.first(where: { $0.follows != nil }) { throw strayAfterOption(stray) }
            let shown = extra.map { "'\($0.text)'" }.joined(separator: " ")
            throw usage("unexpected \(shown) for 'quire \(command)' (usage: \(usageLine))")
        }
        var extras = queue.count - minimum
        for spec in rest {
            switch spec.kind {
            case .operand(_, .one):
                try give(spec, queue.removeFirst())
            case .operand(_, .optional):
                if extras > 0 {
                    try give(spec, queue.removeFirst())
                    extras -= 1
                }
            case .operand(_, .zeroOrMore), .operand(_, .oneOrMore):
                let count = queue.count - Self.capacity(of: Array(rest.drop { $0.name != spec.name }.dropFirst())).minimum
                for _ in 0..<max(0, count) { try give(spec, queue.removeFirst()) }
                extras = 0
            case .vault(_, let optional):
                if !optional || extras > 0 {
                    if optional { extras -= 1 }
                    try fillVault(spec, from: queue.removeFirst(), operandCount: operands.count)
                } else {
                    try fillVault(spec, from: nil, operandCount: operands.count)
                }
            case .option, .flag:
                break
            }
        }
    }

    /// The least and the most operands `positions` take (nil: no limit).
    static func capacity(of positions: [ArgumentSpec]) -> (minimum: Int, maximum: Int?) {
        var minimum = 0
        var maximum: Int? = 0
        for p in positions {
            switch p.kind {
            case .operand(_, .one):
                minimum += 1
                maximum = maximum.map { $0 + 1 }
            case .operand(_, .optional), .vault(_, true):
                maximum = maximum.map { $0 + 1 }
            case .vault(_, false):
                minimum += 1
                maximum = maximum.map { $0 + 1 }
            case .operand(_, .zeroOrMore):
                maximum = nil
            case .operand(_, .oneOrMore):
                minimum += 1
                maximum = nil
            case .option, .flag:
                break
            }
        }
        return (minimum, maximum)
    }

    /// The usage line: `quire add [VAULT] [TEXT | -] [OPTIONS]`.
    var usageLine: String {
        let operands = specs.filter { !$0.isOption }.map(\.usage)
        return (["quire", command] + operands).joined(separator: " ")
    }

    private func give(_ spec: ArgumentSpec, _ operand: Operand) throws(CLIFailure) {
        do { try spec.assign(operand.text) } catch {
            throw CLIFailure(error.message, hint: error.hint ?? "see 'quire help \(command)'", code: "usage", exit: .usage)
        }
    }

    /// Resolves the vault: the operand (a path or a journal name) or the default journal.
    private func fillVault(_ spec: ArgumentSpec, from operand: Operand?, operandCount: Int) throws(CLIFailure) {
        if let operand {
            if operand.follows != nil && !locator.looksLikeVault(operand.text) { throw strayAfterOption(operand) }
            try? spec.assign(try locator.path(for: operand.text))
            return
        }
        guard let path = try locator.defaultPath() else {
            // Every operand the command needs, the vault included.
            let needed = specs.filter {
                switch $0.kind {
                case .vault: true
                case .operand(_, let arity): arity == .one || arity == .oneOrMore
                default: false
                }
            }.map { $0.usage.trimmingCharacters(in: ["[", "]"]) }
            throw usage(
                "'quire \(command)' needs \(needed.joined(separator: " ")); got \(operandCount == 0 ? "none" : "\(operandCount)") (no default journal is set)",
                hint: VaultLocator.noDefaultHint)
        }
        try? spec.assign(path)
    }

    /// The error for an operand typed right after a repeatable option's
    /// value, which the option did not take: it says exactly which form to use.
    private func strayAfterOption(_ operand: Operand) -> CLIFailure {
        guard let (option, value) = operand.follows, case .option(let placeholder, _, let listed) = option.kind else {
            return usage("unexpected '\(operand.text)' for 'quire \(command)' (usage: \(usageLine))")
        }
        var message = "'\(operand.text)' follows --\(option.name) \(value): give each \(placeholder) its own --\(option.name)"
        message += " (--\(option.name) \(value) --\(option.name) \(operand.text))"
        if listed != nil { message += "; '\(operand.text)' was not taken as another \(placeholder): no such file" }
        return usage(message)
    }
}
