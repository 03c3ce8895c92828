import Foundation
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import QuireSystem
import Testing

/// Bytes from a hex literal in a test; traps on a typo in the literal.
func hexBytes(_ text: String) -> [UInt8] {
    guard let b = bytes(fromHex: text.filter { !$0.isWhitespace }) else { fatalError("bad hex literal in test: \(text)") }
    return b
}

/// The bytes start, start+1 … (wrapping at 256).
func counting(_ count: Int, from start: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: start + $0) }
}

/// A copy of `bytes` with bit `bit` of byte `index` flipped.
func flipped(_ bytes: [UInt8], at index: Int, bit: Int = 0) -> [UInt8] {
    var copy = bytes
    copy[index] ^= UInt8(1 << bit)
    return copy
}

/// The key 00 01 … 1f.
func countingKey() -> SymmetricKey { try! SymmetricKey(bytes: counting(32)) }

/// The epoch key `epoch` over `countingKey()`-style bytes starting at `from`.
func testEpochKey(epoch: UInt32 = 1, from start: Int = 0, blobKey: SymmetricKey? = nil) -> EpochKey {
    EpochKey(epoch: epoch, key: try! SymmetricKey(bytes: counting(32, from: start)), blobKey: blobKey)
}

/// Two epoch keys whose key commitments share their first six bytes, the
/// key id `1ce7db40bb82` (`Spec/format.md §5.1`: a 2⁻⁴⁸ accident). Found
/// offline by a distinguished-point search over keys `x ‖ 0²⁶`; the
/// commitments are
/// `1ce7db40bb82d717e1702fc2fe19b6259e46826275ba7f93441ce7380b65836e` and
/// `1ce7db40bb828a4e8f11b510493e82aa95f904f016dfe967fe0d413b77a6365b`.
enum CollidingKeys {
    static let id = KeyID(rawValue: 0x82bb_40db_e71c)
    /// Key `020b14fe4c7d ‖ 0²⁶`: the larger commitment.
    static func first(epoch: UInt32 = 1, blobKey: SymmetricKey? = nil) -> EpochKey {
        EpochKey(epoch: epoch, key: try! SymmetricKey(bytes: hexBytes("020b14fe4c7d") + [UInt8](repeating: 0, count: 26)), blobKey: blobKey)
    }
    /// Key `4350b2ca90fc ‖ 0²⁶`: the smaller commitment.
    static func second(epoch: UInt32 = 1, blobKey: SymmetricKey? = nil) -> EpochKey {
        EpochKey(epoch: epoch, key: try! SymmetricKey(bytes: hexBytes("4350b2ca90fc") + [UInt8](repeating: 0, count: 26)), blobKey: blobKey)
    }
}

/// The vault id 00 01 … 0f.
let countingVaultID = try! VaultID(bytes: counting(16))

/// Options that skip fsync: these tests check logic, not durability.
/// No flush, and torn tails cut at once (no sync tool writes into test files).
let fast = WriteOptions(synchronous: false, tornTailQuietSeconds: 0)

/// The Padmé length, written independently from the paper's definition.
func referencePadme(_ length: Int) -> Int {
    guard length >= 2 else { return length }
    var e = 0
    while (length >> (e + 1)) > 0 { e += 1 }      // ⌊log₂ L⌋
    var s = 0
    while (e >> s) > 0 { s += 1 }                  // ⌊log₂ E⌋ + 1
    let z = e - s
    let step = 1 << z
    return (length + step - 1) / step * step
}

/// A fresh temporary directory, removed when released.
final class TemporaryDirectory {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.path + "/quire-format-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The whole content of the file at `path`.
func fileBytes(_ path: String) throws -> [UInt8] {
    let file = try SystemFile(path: path, mode: .readOnly)
    return try file.read(count: Int(try file.size()), at: 0)
}

/// Appends `bytes` to the file at `path`.
func appendToFile(_ path: String, _ bytes: [UInt8]) throws {
    let file = try SystemFile(path: path, mode: .readWrite)
    try file.write(bytes, at: try file.size())
}

/// Overwrites bytes of the file at `path` at `offset`.
func overwrite(_ path: String, at offset: UInt64, with bytes: [UInt8]) throws {
    let file = try SystemFile(path: path, mode: .readWrite)
    try file.write(bytes, at: offset)
}

/// The size of a sealed, uncompressed frame for a payload of `n` bytes:
/// header (16) ‖ nonce (24) ‖ padded ciphertext ‖ tag (16) ‖ body hash (32).
func sealedFrameLength(payload n: Int) -> Int {
    16 + 24 + referencePadme(n + 1) + 16 + 32
}

/// A commit frame: header (16) ‖ head (32) ‖ nonce (24) ‖ sealed attestation (96 + 16).
let commitFrameLength = 16 + 32 + 24 + 96 + 16

/// The header at the start of `bytes`, if it is checked and plausible.
func parsedHeader(_ bytes: [UInt8], at offset: Int = 0) -> FrameHeader? {
    bytes.withUnsafeBytes { FrameHeader.parseChecked($0, at: offset) }
}

/// The 16 bytes of a frame header with these fields and a correct check,
/// built from `Spec/format.md §4.1` (not by the library).
func rawFrameHeader(kind: UInt8, flags: UInt8, keyID: [UInt8], length: UInt32) -> [UInt8] {
    precondition(keyID.count == 6)
    let fields = [kind, flags] + keyID + [UInt8(length & 0xff), UInt8(length >> 8 & 0xff), UInt8(length >> 16 & 0xff), UInt8(length >> 24)]
    return fields + BLAKE2b.hash(fields, byteCount: 16).prefix(4)
}

/// A plaintext frame of `kind`: `body ‖ BLAKE2b-256(body)` (or `trailer` in
/// its place), under `keyID`.
func plaintextFrame(kind: UInt8, keyID: [UInt8], body: [UInt8], trailer: [UInt8]? = nil) -> [UInt8] {
    let hash = trailer ?? BLAKE2b.hash(body, byteCount: 32)
    return rawFrameHeader(kind: kind, flags: 0, keyID: keyID, length: UInt32(body.count + hash.count)) + body + hash
}

/// Decodes hex into a CBOR value, or throws the decoder's error.
func decodeHex(_ text: String) throws(CBORError) -> CBOR {
    try CBORDecoder.decode(hexBytes(text))
}

/// The error decoding `bytes` throws, or nil if it succeeds.
func cborFailure(_ bytes: [UInt8], prefix: Bool = false) -> CBORError? {
    do {
        if prefix { _ = try CBORDecoder.decodePrefix(bytes) } else { _ = try CBORDecoder.decode(bytes) }
        return nil
    } catch {
        return error
    }
}

/// Expects decoding `bytes` to fail with exactly this offset and reason.
func expectCBORFailure(
    offset: Int, reason: String, _ bytes: [UInt8], prefix: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
) {
    let error = cborFailure(bytes, prefix: prefix)
    #expect(error?.offset == offset, "offset", sourceLocation: sourceLocation)
    #expect(error?.reason == reason, "reason", sourceLocation: sourceLocation)
}
