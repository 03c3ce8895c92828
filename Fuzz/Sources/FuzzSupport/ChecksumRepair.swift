@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat

/// Recomputes the unkeyed check values of a vault image in place, so that a
/// mutated input still gets past them and reaches the parsers behind them.
///
/// A random mutation almost never keeps a 4-byte BLAKE2b check value valid,
/// so without this the fuzzer would only ever explore the damage paths
/// (header repair, resynchronisation) and never the keyring parser, the
/// chunk header parser or the commit grouping. The custom mutators apply it
/// to most (not all) mutants, so the damage paths stay covered too.
///
/// Keyed values (AEAD tags, commit MACs) cannot be repaired without the keys
/// and are left alone.
public enum ChecksumRepair {
    /// Repairs `bytes`:
    /// - when `headerAt` is given and 64 bytes follow it, both header copies'
    ///   check values (bytes 28..<32 of each copy);
    /// - walking frames from `framesFrom`, each 16-byte frame header's check
    ///   value (bytes 12..<16, over bytes 0..<12), and for every frame but a
    ///   chunk (`0x12`) and a commit (`0x02`) the 32-byte body hash that ends
    ///   its body (`Spec/format.md §4.2`; a sealed frame's too, so mutants
    ///   of a sealed body reach the AEAD). The walk stops at the first frame
    ///   that is implausible or runs past the end.
    public static func repair(_ bytes: UnsafeMutableRawBufferPointer, headerAt: Int?, framesFrom: Int) {
        if let h = headerAt, h >= 0, bytes.count - h >= FileHeader.byteCount {
            for copy in [h, h + FileHeader.copyByteCount] {
                let check = BLAKE2b.hash(UnsafeRawBufferPointer(rebasing: bytes[copy..<copy + 28]), byteCount: 16)
                for i in 0..<4 { bytes[copy + 28 + i] = check[i] }
            }
        }
        var pos = framesFrom
        while pos >= 0, bytes.count - pos >= FrameHeader.byteCount {
            let kind = RecordKind(rawValue: bytes[pos])
            let flags = bytes[pos + 1]
            let length = Int(bytes[pos + 8]) | Int(bytes[pos + 9]) << 8 | Int(bytes[pos + 10]) << 16 | Int(bytes[pos + 11]) << 24
            let check = BLAKE2b.hash(UnsafeRawBufferPointer(rebasing: bytes[pos..<pos + FrameHeader.fieldByteCount]), byteCount: 16)
            for i in 0..<4 { bytes[pos + FrameHeader.fieldByteCount + i] = check[i] }
            let header = FrameHeader(kind: kind, flags: flags, keyID: KeyID(rawValue: 0), bodyLength: UInt32(length))
            guard header.isPlausible else { return }
            let body = pos + FrameHeader.byteCount
            guard bytes.count - body >= length else { return }
            if kind != .blobChunk && kind != .commit {
                let n = FrameHeader.bodyHashByteCount
                let sum = BLAKE2b.hash(UnsafeRawBufferPointer(rebasing: bytes[body..<body + length - n]), byteCount: n)
                for i in 0..<n { bytes[body + length - n + i] = sum[i] }
            }
            pos = body + length
        }
    }
}
