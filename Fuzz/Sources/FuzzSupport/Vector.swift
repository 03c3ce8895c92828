@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireKeys

/// Inputs in the `.qv` test vector format (`Vectors/README.md`): a text
/// header of `key: value` lines, an empty line, then the vault's bytes.
///
/// `make fuzz` passes `Vectors/files` as a corpus to every target. Fed raw,
/// a vector is not a vault (it starts with `expect: `) and would only ever
/// reach "not a vault". The file targets therefore skip a vector's text
/// header and read the vault after it; fuzz-vault also opens the vault with
/// the vector's own recovery key or device seed. Mutants keep the header, so
/// they keep the key.
public struct VectorInput {
    /// Number of bytes before the vault (the text header and its empty line).
    public let prefixCount: Int
    /// The header fields, in order.
    public let fields: [(key: String, value: String)]

    static let marker = Array("expect: ".utf8)
    static let maxHeaderByteCount = 8192

    /// The vector header of `bytes`, or nil when `bytes` is not a vector
    /// (then the whole input is the vault).
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> VectorInput? {
        let prefix = prefixCount(bytes)
        guard prefix > 0 else { return nil }
        var fields: [(String, String)] = []
        for line in bytes[0..<(prefix - 2)].split(separator: 0x0a) {
            let text = String(decoding: line, as: UTF8.self)
            guard let colon = text.firstIndex(of: ":") else { continue }
            let key = String(text[..<colon])
            let value = String(text[text.index(after: colon)...].drop(while: { $0 == " " }))
            fields.append((key, value))
        }
        return VectorInput(prefixCount: prefix, fields: fields)
    }

    /// Bytes before the vault in `bytes`: the vector header and its empty
    /// line, or 0 when `bytes` is not a vector.
    public static func prefixCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.count >= marker.count else { return 0 }
        for i in 0..<marker.count where bytes[i] != marker[i] { return 0 }
        let limit = min(bytes.count, maxHeaderByteCount)
        var i = marker.count
        while i + 1 < limit {
            if bytes[i] == 0x0a && bytes[i + 1] == 0x0a { return i + 2 }
            i += 1
        }
        return 0
    }

    /// The first value of `key`.
    public func value(_ key: String) -> String? { fields.first { $0.key == key }?.value }

    /// The credential the vector names, when it is a recovery key or a
    /// device seed. Passphrase vectors give nil: a mutated passphrase slot
    /// may ask Argon2id for up to 1 GiB and 8 passes, far too slow per input.
    public var credential: Credential? {
        if let code = value("recovery-key"), let key = try? RecoveryKey(code: code) { return .recoveryKey(key) }
        if let seedHex = value("device-seed"), let seed = bytes(fromHex: seedHex), seed.count == 32,
            let secure = try? SecureBytes(zeroedCount: 32)
        {
            secure.withUnsafeMutableBytes { p in for (i, b) in seed.enumerated() { p[i] = b } }
            if let pair = try? Ed25519.KeyPair(seed: secure) { return .device(pair) }
        }
        return nil
    }
}
