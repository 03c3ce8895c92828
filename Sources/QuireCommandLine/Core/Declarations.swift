// The property wrappers commands declare their arguments with. Each holds
// its value in a ``Slot`` (a reference), so the parser can fill the values
// of a command found by reflection, and each describes itself as an
// ``ArgumentSpec`` for the parser, the help, the man page and completions.

import Foundation

/// The storage of one declaration, written by the parser.
final class Slot<Value> {
    var value: Value
    /// True once the command line gave a value.
    var isSet = false

    init(_ value: Value) { self.value = value }
}

/// How many operands an `@Argument` takes.
enum Arity: Sendable {
    /// Exactly one.
    case one
    /// None or one.
    case optional
    /// Any number.
    case zeroOrMore
    /// At least one.
    case oneOrMore
}

/// What one declaration is.
struct ArgumentSpec {
    enum Kind {
        /// `--name VALUE`; `many` when it may be given more than once,
        /// `listed` when one occurrence also takes the operands after it
        /// that this predicate accepts (`--attach a.jpg b.jpg`).
        case option(placeholder: String, many: Bool, listed: ((String) -> Bool)?)
        /// `--name` alone.
        case flag
        /// An operand.
        case operand(placeholder: String, arity: Arity)
        /// The vault operand: a path or a journal name; when `optional`,
        /// left out for the default journal (``VaultLocator``).
        case vault(placeholder: String, optional: Bool)
    }

    /// The long name (`date`, `recovery-key-file`), from the property's name.
    let name: String
    /// A one-letter alias (`o` for `-o`).
    let short: Character?
    let kind: Kind
    /// One line of help.
    let help: String
    let completion: Completion
    let isHidden: Bool
    /// Parses and stores one value (an option's, or an operand's).
    let assign: (String) throws(ValueError) -> Void
    /// True once a value was given.
    let isSet: () -> Bool

    var isOption: Bool {
        switch kind {
        case .option, .flag: true
        case .operand, .vault: false
        }
    }

    /// `--name VALUE`, `-o, --output FILE`, `--tag TAG...` as help shows it.
    var display: String {
        var s = short.map { "-\($0), " } ?? ""
        s += "--\(name)"
        if case .option(let placeholder, let many, _) = kind {
            s += " \(placeholder)"
            if many { s += "..." }
        }
        return s
    }

    /// The operand's placeholder as the usage line shows it: `ID`, `[TEXT | -]`, `QUERY...`.
    var usage: String {
        switch kind {
        case .operand(let p, .one): p
        case .operand(let p, .optional): "[\(p)]"
        case .operand(let p, .zeroOrMore): "[\(p)...]"
        case .operand(let p, .oneOrMore): "\(p)..."
        case .vault(let p, let optional): optional ? "[\(p)]" : p
        default: display
        }
    }
}

/// A property wrapper that can describe itself.
protocol DeclaredArgument {
    func spec(label: String) -> ArgumentSpec
}

/// A property wrapper holding a group of declarations (``OptionGroup``).
protocol DeclaredGroup {
    var members: any ParsableArguments { get }
}

/// `recoveryKeyFile` → `recovery-key-file` (the label without its `_`).
func optionName(fromLabel label: String) -> String {
    var out = ""
    for c in label.drop(while: { $0 == "_" }) {
        if c.isUppercase {
            out += "-" + c.lowercased()
        } else {
            out.append(c)
        }
    }
    return out
}

/// A named option with a value: `@Option(help: "…") var date: When?`,
/// `@Option var keepHistory: Int = 0`, `@Option var tag: [String]`.
@propertyWrapper
struct Option<Value>: DeclaredArgument {
    private let slot: Slot<Value>
    private let name: String?
    private let short: Character?
    private let placeholder: String
    private let many: Bool
    private let listed: ((String) -> Bool)?
    private let help: String
    private let completion: Completion
    private let hidden: Bool
    /// How one value's text changes the slot (set it, or append to it).
    private let store: (String, Slot<Value>) throws(ValueError) -> Void

    var wrappedValue: Value { slot.value }

    func spec(label: String) -> ArgumentSpec {
        let slot = slot
        let store = store
        return ArgumentSpec(
            name: name ?? optionName(fromLabel: label), short: short, kind: .option(placeholder: placeholder, many: many, listed: listed),
            help: help,
            completion: completion, isHidden: hidden,
            assign: { (text: String) throws(ValueError) in
                try store(text, slot)
                slot.isSet = true
            }, isSet: { slot.isSet })
    }

    private init(
        slot: Slot<Value>, name: String?, short: Character?, placeholder: String, many: Bool = false, listed: ((String) -> Bool)? = nil,
        help: String, completion: Completion, hidden: Bool, store: @escaping (String, Slot<Value>) throws(ValueError) -> Void
    ) {
        self.slot = slot
        self.name = name
        self.short = short
        self.placeholder = placeholder
        self.many = many
        self.listed = listed
        self.help = help
        self.completion = completion
        self.hidden = hidden
        self.store = store
    }

    /// An option that may be left out (nil).
    init<T: ArgumentValue>(name: String? = nil, short: Character? = nil, placeholder: String? = nil, help: String, hidden: Bool = false)
    where Value == T? {
        self.init(
            slot: Slot(nil), name: name, short: short, placeholder: placeholder ?? T.placeholder, help: help, completion: T.completion,
            hidden: hidden,
            store: { (text: String, slot: Slot<Value>) throws(ValueError) in slot.value = try T(argument: text) })
    }

    /// An option with a default value.
    init(wrappedValue: Value, name: String? = nil, short: Character? = nil, placeholder: String? = nil, help: String, hidden: Bool = false)
    where Value: ArgumentValue {
        self.init(
            slot: Slot(wrappedValue), name: name, short: short, placeholder: placeholder ?? Value.placeholder, help: help,
            completion: Value.completion, hidden: hidden,
            store: { (text: String, slot: Slot<Value>) throws(ValueError) in slot.value = try Value(argument: text) })
    }

    /// An option given any number of times, each value appended. With
    /// `listed`, one occurrence also takes the operands right after it
    /// that `listed` accepts (`--attach a.jpg b.jpg`).
    init<T: ArgumentValue>(
        name: String? = nil, short: Character? = nil, placeholder: String? = nil, help: String, listed: ((String) -> Bool)? = nil,
        hidden: Bool = false
    ) where Value == [T] {
        self.init(
            slot: Slot([]), name: name, short: short, placeholder: placeholder ?? T.placeholder, many: true, listed: listed, help: help,
            completion: T.completion, hidden: hidden,
            store: { (text: String, slot: Slot<Value>) throws(ValueError) in slot.value.append(try T(argument: text)) })
    }
}

/// A named flag without a value: `@Flag(help: "…") var json: Bool`.
@propertyWrapper
struct Flag: DeclaredArgument {
    private let slot = Slot(false)
    private let name: String?
    private let short: Character?
    private let help: String
    private let hidden: Bool

    var wrappedValue: Bool { slot.value }

    init(name: String? = nil, short: Character? = nil, help: String, hidden: Bool = false) {
        self.name = name
        self.short = short
        self.help = help
        self.hidden = hidden
    }

    func spec(label: String) -> ArgumentSpec {
        let slot = slot
        return ArgumentSpec(
            name: name ?? optionName(fromLabel: label), short: short, kind: .flag, help: help, completion: .none, isHidden: hidden,
            assign: { (_: String) throws(ValueError) in
                slot.value = true
                slot.isSet = true
            }, isSet: { slot.isSet })
    }
}

/// An operand: `@Argument(placeholder: "ID", help: "…") var id: EntryIDPrefix`,
/// optional (`String?`) or several (`[String]`).
@propertyWrapper
struct Argument<Value>: DeclaredArgument {
    private let slot: Slot<Value?>
    private let make: (String, Slot<Value?>) -> ArgumentSpec

    /// The parsed value. Read only in `run`, after parsing (the parser
    /// refuses a command line that leaves a required operand out).
    var wrappedValue: Value { slot.value! }

    func spec(label: String) -> ArgumentSpec { make(label, slot) }

    /// A required operand.
    init(placeholder: String? = nil, help: String) where Value: ArgumentValue {
        slot = Slot(nil)
        make = { label, slot in
            ArgumentSpec(
                name: optionName(fromLabel: label), short: nil, kind: .operand(placeholder: placeholder ?? Value.placeholder, arity: .one),
                help: help, completion: Value.completion, isHidden: false,
                assign: { (text: String) throws(ValueError) in
                    slot.value = try Value(argument: text)
                }, isSet: { slot.value != nil })
        }
    }

    /// An operand that may be left out.
    init<T: ArgumentValue>(placeholder: String? = nil, help: String) where Value == T? {
        slot = Slot(.some(nil))
        make = { label, slot in
            ArgumentSpec(
                name: optionName(fromLabel: label), short: nil, kind: .operand(placeholder: placeholder ?? T.placeholder, arity: .optional),
                help: help, completion: T.completion, isHidden: false,
                assign: { (text: String) throws(ValueError) in
                    slot.value = .some(try T(argument: text))
                }, isSet: { slot.value! != nil })
        }
    }

    /// Several operands (`oneOrMore`: at least one).
    init<T: ArgumentValue>(placeholder: String? = nil, oneOrMore: Bool, help: String) where Value == [T] {
        slot = Slot([])
        make = { label, slot in
            ArgumentSpec(
                name: optionName(fromLabel: label), short: nil,
                kind: .operand(placeholder: placeholder ?? T.placeholder, arity: oneOrMore ? .oneOrMore : .zeroOrMore),
                help: help, completion: T.completion, isHidden: false,
                assign: { (text: String) throws(ValueError) in
                    slot.value!.append(try T(argument: text))
                }, isSet: { !(slot.value ?? []).isEmpty })
        }
    }
}

/// The vault operand: a path or a journal name from the config. When
/// `optional`, it may be left out for the default journal, and a first
/// operand is taken as the vault only when it cannot be anything else or
/// looks like one (``VaultLocator``). Its value is the vault's path.
@propertyWrapper
struct VaultArgument: DeclaredArgument {
    private let slot = Slot<String?>(nil)
    private let placeholder: String
    private let optional: Bool
    private let help: String

    /// The vault's path, as typed or as the config names it.
    var wrappedValue: String { slot.value ?? "" }

    init(placeholder: String = "VAULT", optional: Bool = true, help: String = VaultLocator.operandHelp) {
        self.placeholder = placeholder
        self.optional = optional
        self.help = help
    }

    func spec(label: String) -> ArgumentSpec {
        let slot = slot
        return ArgumentSpec(
            name: optionName(fromLabel: label), short: nil, kind: .vault(placeholder: placeholder, optional: optional), help: help,
            completion: .vault, isHidden: false,
            assign: { (text: String) throws(ValueError) in slot.value = text }, isSet: { slot.value != nil })
    }
}

/// Declarations shared by several commands, grouped in their own type:
/// `@OptionGroup var unlock: UnlockOptions`.
@propertyWrapper
struct OptionGroup<Value: ParsableArguments>: DeclaredGroup {
    let wrappedValue: Value

    init() { wrappedValue = Value() }

    var members: any ParsableArguments { wrappedValue }
}

/// The declarations of `value`, in declaration order, groups expanded.
func declarations(of value: any ParsableArguments) -> [ArgumentSpec] {
    var out: [ArgumentSpec] = []
    for child in Mirror(reflecting: value).children {
        guard let label = child.label else { continue }
        if let declared = child.value as? any DeclaredArgument {
            out.append(declared.spec(label: label))
        } else if let group = child.value as? any DeclaredGroup {
            out += declarations(of: group.members)
        }
    }
    return out
}
