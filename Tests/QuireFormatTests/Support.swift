import Foundation
import QuireCrypto
import QuireFormat
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
func testEpochKey(epoch: UInt16 = 1, from start: Int = 0) -> EpochKey {
    EpochKey(epoch: epoch, key: try! SymmetricKey(bytes: counting(32, from: start)))
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

/// The size of a sealed, uncompressed frame for a payload of `n` bytes.
func sealedFrameLength(payload n: Int) -> Int {
    FrameHeader.byteCount + 24 + Padding.paddedCount(forPayload: n) + 16
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
