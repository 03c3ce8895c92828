/// Length padding for sealed payloads (`Spec/format.md §6.2`).
///
/// A payload of `n` bytes becomes `payload ‖ 0x80 ‖ 0x00…` (ISO/IEC 7816-4
/// padding) whose total length is `Padmé(n + 1)`. Padmé (Nikitin et al.,
/// "Reducing Metadata Leakage from Encrypted Files and Communication with
/// PURBs", PETS 2019) rounds a length `L` up so that only the top
/// ⌊log₂ ⌊log₂ L⌋⌋ + 1 bits after the leading one may be non-zero; it leaks
/// O(log log L) bits of the length and costs at most about 12 % (much less
/// for large payloads).
@_spi(Format) public enum Padding {
    /// The Padmé length for `length` bytes: `length` itself below 2.
    public static func padme(_ length: Int) -> Int {
        precondition(length >= 0)
        guard length >= 2 else { return length }
        let e = Int.bitWidth - 1 - length.leadingZeroBitCount  // ⌊log₂ L⌋
        let s = Int.bitWidth - e.leadingZeroBitCount  // ⌊log₂ E⌋ + 1
        let lastBits = e - s
        let mask = (1 << lastBits) - 1
        return (length + mask) & ~mask
    }

    /// The padded length for a payload of `payloadCount` bytes: Padmé of
    /// the payload plus its one-byte 0x80 marker.
    public static func paddedCount(forPayload payloadCount: Int) -> Int {
        padme(payloadCount + 1)
    }

    /// Appends the marker and zeros to `payload` in place.
    public static func pad(_ payload: inout [UInt8]) {
        let target = paddedCount(forPayload: payload.count)
        payload.reserveCapacity(target)
        payload.append(0x80)
        payload.append(contentsOf: repeatElement(0, count: target - payload.count))
    }

    /// The payload length inside `padded`, or nil when the padding is not
    /// exactly the canonical `0x80 0x00…` of length `Padmé(n + 1)`.
    public static func payloadCount(in padded: UnsafeRawBufferPointer) -> Int? {
        var i = padded.count - 1
        while i >= 0 && padded[i] == 0 { i -= 1 }
        guard i >= 0, padded[i] == 0x80 else { return nil }
        guard paddedCount(forPayload: i) == padded.count else { return nil }
        return i
    }

    /// The Padmé length for a 64-bit `length` (attachment streams).
    public static func padme(_ length: UInt64) -> UInt64 {
        guard length >= 2 else { return length }
        let e = UInt64.bitWidth - 1 - length.leadingZeroBitCount  // ⌊log₂ L⌋
        let s = Int.bitWidth - e.leadingZeroBitCount  // ⌊log₂ E⌋ + 1
        let mask: UInt64 = (1 << UInt64(e - s)) - 1
        return (length + mask) & ~mask
    }

    /// The length of the padded stream of an attachment of `contentByteCount`
    /// bytes: `Padmé(n + 1)` (`Spec/format.md §7.1`).
    public static func streamByteCount(contentByteCount n: UInt64) -> UInt64 { padme(n + 1) }

    /// How many chunks carry the padded stream of `contentByteCount` bytes.
    public static func chunkCount(contentByteCount n: UInt64) -> UInt64 {
        let total = streamByteCount(contentByteCount: n)
        return (total + UInt64(Limits.chunkByteCount) - 1) / UInt64(Limits.chunkByteCount)
    }
}
