@_spi(Format) public import QuireFormat
import QuireSystem

/// Tells a damaged vault from a file that never was one, when neither
/// header copy starts with the magic (`Spec/format.md §3`): damage must be
/// reported as damage, not as "not a Quire vault".
enum DamagedHeader {
    /// How far past the header the frames of a vault whose start was
    /// overwritten are looked for, in bytes.
    static let searchByteCount = 1 << 20

    /// Why the file at `path`, refused as not a vault, is in fact a damaged
    /// vault; nil when nothing says it ever was one.
    static func diagnose(_ path: String) -> String? {
        guard let file = try? SystemFile(path: path, mode: .readOnly), let size = try? file.size(), size >= UInt64(FileHeader.byteCount),
            let bytes = try? file.read(count: Int(min(size, UInt64(FileHeader.byteCount + searchByteCount))), at: 0)
        else { return nil }
        let magic = FileHeader.magic
        // 0x89 "QUIRE" CR LF with the CR LF converted by a text-mode transfer.
        let crlfToLF = Array(magic.dropLast(2)) + [0x0a]
        let lfToCRLF = Array(magic.dropLast(2)) + [0x0d, 0x0d, 0x0a]
        if bytes.starts(with: lfToCRLF) {
            return "its line endings were converted (LF to CR LF, as a text-mode transfer does), which changed bytes throughout the file"
        }
        if bytes.starts(with: crlfToLF) {
            return "its line endings were converted (CR LF to LF, as a text-mode transfer does), which changed bytes throughout the file"
        }
        // The header overwritten (zeroed, say) and frames after it.
        if let offset = firstConfirmedFrame(bytes, fileSize: size) {
            return "no header copy is intact (its first bytes were overwritten), but the frames of a vault follow at byte \(offset)"
        }
        return nil
    }

    /// The first position after the header where a checked frame header
    /// starts whose frame ends at the end of the file or where another
    /// checked header starts (`Spec/format.md §10.2`: confirmed).
    static func firstConfirmedFrame(_ bytes: [UInt8], fileSize: UInt64) -> Int? {
        bytes.withUnsafeBytes { raw -> Int? in
            var p = FileHeader.byteCount
            while p + FrameHeader.byteCount <= raw.count {
                // A header's length bytes are never all zero: skip zero fill fast.
                if raw[p + 4] == 0 && raw[p + 5] == 0 && raw[p + 6] == 0 && raw[p + 7] == 0 {
                    p += 1
                    continue
                }
                if let header = FrameHeader.parseChecked(raw, at: p) {
                    let end = UInt64(p) + UInt64(FrameHeader.byteCount) + UInt64(header.bodyLength)
                    if end == fileSize { return p }
                    if end + UInt64(FrameHeader.byteCount) <= UInt64(raw.count), FrameHeader.parseChecked(raw, at: Int(end)) != nil {
                        return p
                    }
                }
                p += 1
            }
            return nil
        }
    }
}

extension VaultError {
    /// ``FormatError/notAVault`` for a file that is a damaged vault becomes
    /// ``damagedHeader(reason:)``; other errors are returned as they are.
    /// Reads at most the first MiB of the file at `path`.
    @_spi(Format) public static func diagnosing(_ error: FormatError, path: String) -> VaultError {
        if case .notAVault = error, let reason = DamagedHeader.diagnose(path) { return .damagedHeader(reason: reason) }
        return .format(error)
    }
}
