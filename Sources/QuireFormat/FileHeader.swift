@_spi(Crypto) import QuireCrypto

/// The 64-byte file header: two identical 32-byte copies, so that damage to
/// one leaves the vault readable (`Spec/format.md §3`).
///
/// One copy:
///
/// ```
///  0               8      10     12                              28      32
/// +---------------+------+------+-------------------------------+-------+
/// | magic (8)     | ver  | flags| vault id (16)                 | check |
/// | 89 51 55 49   | u16  | u16  |                               | (4)   |
/// | 52 45 0D 0A   | =2   | =0   |                               |       |
/// +---------------+------+------+-------------------------------+-------+
/// ```
///
/// `check` is the first 4 bytes of BLAKE2b-128 over bytes 0..<28 of the copy.
@_spi(Format) public struct FileHeader: Sendable, Equatable {
    /// The magic bytes: `0x89 "QUIRE" CR LF`. The high byte catches 7-bit
    /// transfers; CR LF catches line-ending conversion.
    public static let magic: [UInt8] = [0x89, 0x51, 0x55, 0x49, 0x52, 0x45, 0x0d, 0x0a]
    /// The format version this library reads and writes.
    public static let currentVersion: UInt16 = 2
    /// Length of one copy, in bytes.
    public static let copyByteCount = 32
    /// Length of the whole header (two copies), in bytes; frames start here.
    public static let byteCount = 64

    /// The format version.
    public let version: UInt16
    /// Feature flags; none are defined in version 2.
    public let flags: UInt16
    /// The vault id.
    public let vaultID: VaultID

    /// A header of the current version (2) for `vaultID`.
    public init(vaultID: VaultID) {
        version = Self.currentVersion
        flags = 0
        self.vaultID = vaultID
    }

    /// The 64 bytes to write at the start of a new vault.
    public func encoded() -> [UInt8] {
        var copy = ByteWriter(capacity: Self.copyByteCount)
        copy.writeBytes(Self.magic)
        copy.writeUInt16(version)
        copy.writeUInt16(flags)
        copy.writeBytes(vaultID.bytes)
        let check = Self.check(copy.bytes)
        copy.writeBytes(check)
        return copy.bytes + copy.bytes
    }

    static func check(_ first28: some Collection<UInt8>) -> [UInt8] {
        Array(BLAKE2b.hash(Array(first28), byteCount: 16).prefix(4))
    }

    /// What reading the header found besides the header itself.
    public enum Damage: Sendable, Equatable {
        /// Both copies were intact.
        case none
        /// Copy `index` (0 or 1) was damaged; the other was used.
        case copyDamaged(index: Int)
    }

    /// Parses the first 64 bytes of a vault file.
    ///
    /// A copy is intact when its check value verifies. The first intact copy
    /// is used; if both are intact they must be identical.
    ///
    /// - Throws: ``FormatError/truncatedHeader(fileByteCount:)``,
    ///   ``FormatError/notAVault``, ``FormatError/headerDamaged``,
    ///   ``FormatError/headerCopiesDiffer``,
    ///   ``FormatError/unsupportedVersion(_:)``,
    ///   ``FormatError/unsupportedFeature(flags:)``.
    public static func parse(_ bytes: [UInt8]) throws(FormatError) -> (FileHeader, Damage) {
        guard bytes.count >= byteCount else { throw .truncatedHeader(fileByteCount: UInt64(bytes.count)) }
        let copies = [Array(bytes[0..<32]), Array(bytes[32..<64])]
        let intact = copies.map { c in c[28..<32].elementsEqual(check(c[0..<28])) }
        guard intact[0] || intact[1] else {
            if !copies[0].starts(with: magic) && !copies[1].starts(with: magic) { throw .notAVault }
            throw .headerDamaged
        }
        if intact[0] && intact[1] && copies[0] != copies[1] { throw .headerCopiesDiffer }
        let chosen = intact[0] ? copies[0] : copies[1]
        guard chosen.starts(with: magic) else { throw .notAVault }
        var r = ByteReader(chosen)
        do {
            try r.skip(8)
            let version = try r.readUInt16()
            let flags = try r.readUInt16()
            let id = try r.readBytes(16)
            guard version == currentVersion else { throw FormatError.unsupportedVersion(version) }
            guard flags == 0 else { throw FormatError.unsupportedFeature(flags: flags) }
            let header = FileHeader(vaultID: try VaultID(bytes: id))
            let damage: Damage = intact[0] && intact[1] ? .none : .copyDamaged(index: intact[0] ? 1 : 0)
            return (header, damage)
        } catch let error as FormatError {
            throw error
        } catch {
            throw .truncatedHeader(fileByteCount: UInt64(bytes.count))
        }
    }
}
