import Foundation

/// A value an option or an operand takes, parsed from its text (after
/// ArgumentParser's `ExpressibleByArgument`). A type per kind of value
/// (a mood, a date, an entry id…) keeps the checks in one place and
/// gives help and completion their placeholder and their candidates.
protocol ArgumentValue {
    /// Parses `text`.
    ///
    /// - Throws: ``ValueError`` saying what is wrong, as a phrase that reads
    ///   after the option's name (`--mood` "must be a whole number…").
    init(argument text: String) throws(ValueError)
    /// The placeholder in help and usage lines: `N`, `WHEN`, `FILE`.
    static var placeholder: String { get }
    /// What shells complete the value with.
    static var completion: Completion { get }
}

extension ArgumentValue {
    static var placeholder: String { "VALUE" }
    static var completion: Completion { .none }
}

/// Why a value does not parse: a phrase that follows the option's name
/// (`--date` "'2026-02-30' is not a date I read"), or a sentence of its own
/// for an operand, and what to do.
struct ValueError: Error, Sendable {
    let message: String
    let hint: String?

    init(_ message: String, hint: String? = nil) {
        self.message = message
        self.hint = hint
    }
}

/// What a shell offers when completing a value.
enum Completion: Sendable, Equatable {
    /// Nothing in particular.
    case none
    /// File names.
    case file
    /// Folder names.
    case folder
    /// One of these words.
    case choices([String])
    /// A vault file, or a journal name from the config.
    case vault
}

extension String: ArgumentValue {
    init(argument text: String) throws(ValueError) { self = text }
}

extension Int: ArgumentValue {
    init(argument text: String) throws(ValueError) {
        guard let n = Int(text) else { throw ValueError("must be a whole number, not '\(text)'") }
        self = n
    }
    static var placeholder: String { "N" }
}
