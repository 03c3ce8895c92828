@_spi(Crypto) import QuireCrypto

/// One test vector file (`Vectors/README.md`): a small text header of
/// `key: value` lines, an empty line, then the vault's bytes.
public struct VectorFile: Equatable, Sendable {
    /// The outcome class: `success`, `recovered`, `damaged` or `error`.
    public var expect: String
    /// For `expect: error`, the error code the reader must raise.
    public var error: String?
    /// The recovery code to open the vault with.
    public var recoveryKey: String?
    /// A passphrase to open the vault with instead.
    public var passphrase: String?
    /// A device's 32-byte Ed25519 seed (hex) to open the vault with instead.
    public var deviceSeed: String?
    /// Number of released records (entry revisions, manifests, profiles).
    public var records: Int?
    /// BLAKE2b-256 over the released records (see README).
    public var recordsHash: String?
    /// How many of the released records are unverified (their commit did
    /// not verify, `Spec/format.md §9.3`).
    public var unverified: Int?
    /// How many of the released records are unattested: their commit
    /// verified but no member attested it (`Spec/format.md §9.4`).
    public var unattested: Int?
    /// Number of attachments that read back whole.
    public var attachments: Int?
    /// BLAKE2b-256 over those attachments.
    public var attachmentsHash: String?
    /// Issues the reader must report: `code @ offset`.
    public var issues: [(code: String, offset: UInt64)]
    /// What the vector is about.
    public var comment: String
    /// The vault bytes.
    public var body: [UInt8]

    /// A vector with the given header fields and vault bytes.
    public init(
        expect: String, error: String? = nil, recoveryKey: String? = nil, passphrase: String? = nil, deviceSeed: String? = nil,
        records: Int? = nil, recordsHash: String? = nil, unverified: Int? = nil, unattested: Int? = nil, attachments: Int? = nil,
        attachmentsHash: String? = nil, issues: [(code: String, offset: UInt64)], comment: String, body: [UInt8]
    ) {
        self.unattested = unattested
        self.expect = expect
        self.error = error
        self.recoveryKey = recoveryKey
        self.passphrase = passphrase
        self.deviceSeed = deviceSeed
        self.records = records
        self.recordsHash = recordsHash
        self.unverified = unverified
        self.attachments = attachments
        self.attachmentsHash = attachmentsHash
        self.issues = issues
        self.comment = comment
        self.body = body
    }

    /// Two vectors are equal when their files are byte for byte equal.
    public static func == (a: VectorFile, b: VectorFile) -> Bool { a.serialized() == b.serialized() }

    /// The file's bytes: header lines, an empty line, the vault.
    public func serialized() -> [UInt8] {
        var lines = ["expect: \(expect)"]
        if let error { lines.append("error: \(error)") }
        if let recoveryKey { lines.append("recovery-key: \(recoveryKey)") }
        if let passphrase { lines.append("passphrase: \(passphrase)") }
        if let deviceSeed { lines.append("device-seed: \(deviceSeed)") }
        if let records { lines.append("records: \(records)") }
        if let recordsHash { lines.append("records-hash: \(recordsHash)") }
        if let unverified { lines.append("unverified: \(unverified)") }
        if let unattested { lines.append("unattested: \(unattested)") }
        if let attachments { lines.append("attachments: \(attachments)") }
        if let attachmentsHash { lines.append("attachments-hash: \(attachmentsHash)") }
        for i in issues { lines.append("issue: \(i.code) @ \(i.offset)") }
        lines.append("comment: \(comment)")
        return Array((lines.joined(separator: "\n") + "\n\n").utf8) + body
    }

    /// Why a vector file does not parse.
    public struct ParseError: Error, CustomStringConvertible {
        /// What is wrong.
        public let description: String
    }

    /// Parses a vector file.
    ///
    /// - Throws: ``ParseError``.
    public static func parse(_ bytes: [UInt8]) throws -> VectorFile {
        var v = VectorFile(expect: "", issues: [], comment: "", body: [])
        var i = 0
        while true {
            guard let end = bytes[i...].firstIndex(of: 0x0a) else { throw ParseError(description: "no empty line ends the header") }
            let line = String(decoding: bytes[i..<end], as: UTF8.self)
            i = end + 1
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw ParseError(description: "header line without a colon: \(line)") }
            let key = String(line[..<colon])
            let value = line[line.index(after: colon)...].drop(while: { $0 == " " })
            switch key {
            case "expect": v.expect = String(value)
            case "error": v.error = String(value)
            case "recovery-key": v.recoveryKey = String(value)
            case "passphrase": v.passphrase = String(value)
            case "device-seed": v.deviceSeed = String(value)
            case "records": v.records = Int(value)
            case "records-hash": v.recordsHash = String(value)
            case "unverified": v.unverified = Int(value)
            case "unattested": v.unattested = Int(value)
            case "attachments": v.attachments = Int(value)
            case "attachments-hash": v.attachmentsHash = String(value)
            case "issue":
                let parts = value.split(separator: "@").map { $0.trimmingCharacters(in: " ") }
                guard parts.count == 2, let offset = UInt64(parts[1]) else { throw ParseError(description: "bad issue line: \(line)") }
                v.issues.append((String(parts[0]), offset))
            case "comment": v.comment = String(value)
            default: throw ParseError(description: "unknown header key \(key)")
            }
        }
        v.body = Array(bytes[i...])
        return v
    }
}

extension String {
    func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String { String(self).trimmingCharacters(in: set) }
}

/// The digests a vector records (`Vectors/README.md`).
public enum VectorDigest {
    /// BLAKE2b-256 over `kind (1) ‖ length (u32 LE) ‖ payload` of each record.
    public static func records(_ list: [(UInt8, [UInt8])]) -> String {
        var h = BLAKE2b.Hasher(byteCount: 32)
        for (kind, payload) in list {
            h.update([kind])
            let n = UInt32(payload.count)
            h.update([
                UInt8(truncatingIfNeeded: n), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n >> 16),
                UInt8(truncatingIfNeeded: n >> 24),
            ])
            h.update(payload)
        }
        return hex(h.finalize())
    }

    /// BLAKE2b-256 over `blob id (32) ‖ size (u64 LE) ‖ content` of each attachment.
    public static func attachments(_ list: [([UInt8], [UInt8])]) -> String {
        var h = BLAKE2b.Hasher(byteCount: 32)
        for (id, content) in list {
            h.update(id)
            let n = UInt64(content.count)
            h.update((0..<8).map { UInt8(truncatingIfNeeded: n >> (8 * UInt64($0))) })
            h.update(content)
        }
        return hex(h.finalize())
    }
}
