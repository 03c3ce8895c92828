import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireExport
import QuireImport
import QuireSystem

/// A mood from 1 (very bad) to 5 (very good).
struct Mood: ArgumentValue {
    let value: Int64

    init(argument text: String) throws(ValueError) {
        guard let n = Int64(text), (1...5).contains(n) else { throw ValueError("must be a whole number from 1 to 5, not '\(text)'") }
        value = n
    }

    static var placeholder: String { "N" }
}

/// Moods to select: `4`, or a range `3-5`.
struct MoodRange: ArgumentValue {
    let range: ClosedRange<Int64>

    init(argument text: String) throws(ValueError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let low = Int64(parts[0]), let high = Int64(parts.last!), (1...5).contains(low),
            (1...5).contains(high),
            low <= high
        else { throw ValueError("must be a mood from 1 to 5 or a range such as 4-5, not '\(text)'") }
        range = low...high
    }

    static var placeholder: String { "N[-M]" }
}

/// A positive count (`--limit`).
struct Count: ArgumentValue {
    let value: Int

    init(argument text: String) throws(ValueError) {
        guard let n = Int(text), n >= 1 else { throw ValueError("must be a whole number of 1 or more, not '\(text)'") }
        value = n
    }

    static var placeholder: String { "N" }
}

/// How many earlier revisions to keep (`--keep-history`).
struct HistoryDepth: ArgumentValue {
    let value: Int

    init(argument text: String) throws(ValueError) {
        guard let k = Int(text), k >= 0, k <= 1000 else { throw ValueError("must be a whole number from 0 to 1000, not '\(text)'") }
        value = k
    }

    static var placeholder: String { "N" }
}

/// An entry id or a unique prefix of 4 or more of its hex digits.
struct EntryIDPrefix: ArgumentValue {
    let prefix: String
    /// The bits the prefix fixes in a 16-byte id read as two big-endian
    /// words, and their masks: an id matches when its words agree with
    /// these under the masks (``matches(_:)``), with no array made per id.
    private let high: UInt64
    private let low: UInt64
    private let highMask: UInt64
    private let lowMask: UInt64

    init(argument text: String) throws(ValueError) {
        let p = text.lowercased()
        guard p.count >= 4, p.count <= 32, p.allSatisfy({ $0.isHexDigit && $0.isASCII }) else {
            throw ValueError("'\(text)' is not an entry id", hint: "give 4 or more hex digits of an id 'quire list' shows")
        }
        prefix = p
        var words: [UInt64] = [0, 0]
        var masks: [UInt64] = [0, 0]
        for (i, c) in p.utf8.enumerated() {
            let nibble = UInt64(c <= 0x39 ? c - 0x30 : c - 0x61 + 10)
            let shift = UInt64(60 - 4 * (i % 16))
            words[i / 16] |= nibble << shift
            masks[i / 16] |= 0xF << shift
        }
        (high, low, highMask, lowMask) = (words[0], words[1], masks[0], masks[1])
    }

    /// The lowest id that starts with ``prefix`` (the rest zeros): every
    /// id that does is not below it, bytewise.
    var lowest: EntryID { Self.id(high, low) }
    /// The highest id that starts with ``prefix`` (the rest 0xff): every
    /// id that does is not above it, bytewise.
    var highest: EntryID { Self.id(high | ~highMask, low | ~lowMask) }

    /// The id whose bytes are the big-endian words `high`, `low`.
    private static func id(_ high: UInt64, _ low: UInt64) -> EntryID {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for word in [high, low] { for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: word >> (56 - 8 * i))) } }
        return EntryID(unchecked: bytes)
    }

    /// True when the lower-case hex digits of `id` start with ``prefix``
    /// (as ``EntryFormat/hasHexPrefix(_:_:)`` says of its bytes).
    func matches(_ id: EntryID) -> Bool {
        if case .words(let h, let l) = id.storage { return h & highMask == high && l & lowMask == low }
        return EntryFormat.hasHexPrefix(id.bytes, prefix)
    }

    static var placeholder: String { "ID" }
}

/// An attachment id (as the entry's text links to it), or a prefix of 4 or
/// more of its hex digits; a whole id may be shorter.
struct AttachmentIDPrefix: ArgumentValue {
    let prefix: String

    init(argument text: String) throws(ValueError) {
        let p = text.lowercased()
        guard !p.isEmpty, p.count <= 64, p.allSatisfy({ $0.isHexDigit && $0.isASCII }) else {
            throw ValueError("'\(text)' is not an attachment id", hint: "give the hex digits of an id 'quire attachments ID' shows")
        }
        prefix = p
    }

    static var placeholder: String { "ATTACHMENT" }
}

/// A path to a file (completed with file names).
struct FilePath: ArgumentValue {
    let path: String

    init(argument text: String) throws(ValueError) {
        guard !text.isEmpty else { throw ValueError("is empty: give the path of a file") }
        path = text
    }

    static var placeholder: String { "FILE" }
    static var completion: Completion { .file }
}

/// A device's name in a vault: 1–64 printable characters (``DeviceIdentity/validateName(_:)``).
struct DeviceName: ArgumentValue {
    let name: String

    init(argument text: String) throws(ValueError) {
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ValueError("is empty: give the device a name (1–64 characters)")
        }
        do { try DeviceIdentity.validateName(text) } catch {
            throw ValueError("is not a device name: \(error)", hint: "device names are 1–64 printable characters")
        }
        name = text
    }

    static var placeholder: String { "NAME" }
}

/// An escrow custodian's X25519 public key: 64 hex digits.
struct EscrowKey: ArgumentValue {
    let bytes: [UInt8]

    init(argument text: String) throws(ValueError) {
        let hex = Array(text.utf8)
        var out: [UInt8] = []
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        guard hex.count == 64 else { throw ValueError("must be 64 hex digits (an X25519 public key)") }
        for i in stride(from: 0, to: 64, by: 2) {
            guard let a = nibble(hex[i]), let b = nibble(hex[i + 1]) else {
                throw ValueError("must be 64 hex digits (an X25519 public key)")
            }
            out.append(a << 4 | b)
        }
        bytes = out
    }

    static var placeholder: String { "KEY" }
}

/// An IANA time zone name.
struct ZoneName: ArgumentValue {
    let identifier: String

    init(argument text: String) throws(ValueError) {
        guard TimeZone(identifier: text) != nil else {
            throw ValueError("'\(text)' is not a time zone I know; give an IANA name such as Europe/London")
        }
        identifier = text
    }

    static var placeholder: String { "ZONE" }
}

extension ImportFormat: ArgumentValue {
    init(argument text: String) throws(ValueError) {
        guard let f = ImportFormat(rawValue: text.lowercased()) else {
            throw ValueError(
                "unknown import format '\(text)'; the formats are \(ImportFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self = f
    }

    static var placeholder: String { "FORMAT" }
    static var completion: Completion { .choices(ImportFormat.allCases.map(\.rawValue)) }
}

/// An export format: one of ``ExportFormat`` or `pdf`.
struct ExportFormatName: ArgumentValue, Equatable {
    let name: String
    static let names = ["md", "json", "dayone", "html", "epub", "pdf"]

    init(argument text: String) throws(ValueError) {
        let lower = text.lowercased() == "markdown" ? "md" : text.lowercased()
        guard Self.names.contains(lower) else {
            throw ValueError("'\(text)' is not an export format; the formats are md, json, dayone, html, epub and pdf")
        }
        name = lower
    }

    /// The format a file name's extension names (`book.pdf` → pdf), if any.
    static func forOutput(_ path: String) -> ExportFormatName? {
        switch Paths.pathExtension(of: path).lowercased() {
        case "pdf": try? ExportFormatName(argument: "pdf")
        case "epub": try? ExportFormatName(argument: "epub")
        case "html", "htm": try? ExportFormatName(argument: "html")
        case "json": try? ExportFormatName(argument: "json")
        case "zip": try? ExportFormatName(argument: "dayone")
        default: nil
        }
    }

    static var placeholder: String { "FORMAT" }
    static var completion: Completion { .choices(names) }
}

/// A shell quire writes completions for.
enum Shell: String, ArgumentValue, CaseIterable {
    case bash, zsh, fish

    init(argument text: String) throws(ValueError) {
        guard let s = Shell(rawValue: text) else { throw ValueError("'\(text)' is not a shell I write completions for: bash, zsh or fish") }
        self = s
    }

    static var placeholder: String { "SHELL" }
    static var completion: Completion { .choices(allCases.map(\.rawValue)) }
}
