@_spi(Crypto) import QuireCrypto
import Testing

/// Bytes from a hex literal in a test; traps on a typo in the literal.
func hexBytes(_ text: String) -> [UInt8] {
    guard let b = bytes(fromHex: text.filter { !$0.isWhitespace }) else { fatalError("bad hex literal in test: \(text)") }
    return b
}

/// The bytes 0, 1, 2 … count-1 (wrapping at 256).
func counting(_ count: Int, from start: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: start + $0) }
}

/// A 32-byte key whose bytes are 0x00…0x1f.
func countingKey() -> SymmetricKey {
    try! SymmetricKey(bytes: counting(32))
}

/// A copy of `bytes` with bit `bit` of byte `index` flipped.
func flipped(_ bytes: [UInt8], at index: Int, bit: Int = 0) -> [UInt8] {
    var copy = bytes
    copy[index] ^= UInt8(1 << bit)
    return copy
}

/// Guarded bytes holding `bytes`.
func secure(_ bytes: [UInt8]) -> SecureBytes {
    var copy = bytes
    return try! SecureBytes(consuming: &copy)
}
