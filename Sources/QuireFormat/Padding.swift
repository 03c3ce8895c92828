/// Length padding for sealed payloads (`Spec/format.md §6.2`).
///
/// A payload of `n` bytes becomes `payload ‖ 0x80 ‖ 0x00…` (ISO/IEC 7816-4
/// padding) whose total length is `Padmé(n + 1)`. Padmé (Nikitin et al.,
/// "Reducing Metadata Leakage from Encrypted Files and Communication with
/// PURBs", PETS 2019) rounds a length `L` up so that only the top
/// ⌊log₂ ⌊log₂ L⌋⌋ + 1 bits after the leading one may be non-zero; it leaks
/// O(log log L) bits of the length and costs at most about 12 % (much less
/// for large payloads).
public enum Padding {
    /// The Padmé length for `length` bytes: `length` itself below 2.
    public static func padme(_ length: Int) -> Int {
        precondition(length >= 0)
        guard length >= 2 else { return length }
        let e = Int.bitWidth - 1 - length.leadingZeroBitCount  // ⌊log₂ L⌋
        let s = Int.bitWidth - e.leadingZeroBitCount            // ⌊log₂ E⌋ + 1
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
}
