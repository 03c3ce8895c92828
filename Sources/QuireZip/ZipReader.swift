import CZip
public import QuireCrypto
@_spi(Format) public import QuireFormat
import QuireSystem

/// Reads a ZIP archive through libzip, with limits, for importing
/// (`Spec/import.md §7`).
///
/// Nothing is ever extracted to disk: members are listed and streamed in
/// bounded chunks. Members with unsafe names are refused (listed in
/// ``refused``, never readable). Every read is bounded by
/// ``maxMemberByteCount`` per member, ``maxTotalByteCount`` for the whole
/// archive and ``maxCompressionRatio`` (zip-bomb guard), each checked
/// against the bytes actually produced, not only the sizes the archive
/// declares.
///
/// A reader is not thread-safe: use it from one thread at a time.
public final class ZipReader {
    /// Largest uncompressed member, in bytes (4 GiB): a long video fits,
    /// an endless stream does not.
    public static let maxMemberByteCount: UInt64 = 4 << 30
    /// Largest total of uncompressed bytes read from one archive, in bytes
    /// (16 GiB), counting every member read (a member read twice counts twice).
    public static let maxTotalByteCount: UInt64 = 16 << 30
    /// Largest ratio of uncompressed to compressed bytes a member may
    /// reach once it has produced more than ``compressionRatioAllowanceByteCount``
    /// (250:1; DEFLATE's own ceiling is about 1032:1, real journals and
    /// photos stay far below 20:1).
    public static let maxCompressionRatio: UInt64 = 250
    /// Uncompressed bytes (1 MiB) a member may produce before the ratio guard
    /// applies, so tiny, very compressible files are not refused.
    public static let compressionRatioAllowanceByteCount: UInt64 = 1 << 20
    /// Most members an archive may list (1,000,000).
    public static let maxMemberCount = 1_000_000

    /// One member of the archive.
    public struct Member: Sendable, Equatable {
        /// libzip's index of the member.
        public let index: UInt64
        /// The member's path inside the archive, `/`-separated, UTF-8
        /// (names not flagged UTF-8 are read as CP437, libzip's guess).
        public let name: String
        /// The uncompressed size the archive declares, in bytes.
        public let declaredByteCount: UInt64
        /// The compressed size the archive declares, in bytes.
        public let compressedByteCount: UInt64
        /// True for a directory entry (a name ending in `/`).
        public var isDirectory: Bool { name.hasSuffix("/") }
    }

    /// A member refused because of its name: the name as libzip gave it, and why.
    public struct RefusedMember: Sendable, Equatable {
        /// The raw name (may hold the characters that made it unsafe).
        public let name: String
        /// The reason, such as ``ZipError/unsafeName(_:)``.
        public let error: ZipError
    }

    private let archive: OpaquePointer
    /// The archive's path.
    public let path: String
    /// Members with safe names, in archive order.
    public let members: [Member]
    /// Members refused because of their names; they cannot be read.
    public let refused: [RefusedMember]
    /// Uncompressed bytes read so far from all members.
    public private(set) var totalBytesRead: UInt64 = 0

    /// Opens the archive at `path` read-only and lists its members.
    ///
    /// - Throws: ``ZipError/cannotOpen(path:reason:)`` when the file is
    ///   missing or not a ZIP archive (libzip's consistency checks are on);
    ///   ``ZipError/tooLarge(name:limit:)`` (name `""`) when it lists more
    ///   than ``maxMemberCount`` members.
    public init(path: String) throws(ZipError) {
        self.path = path
        var code: Int32 = 0
        guard let za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &code) else {
            throw .cannotOpen(path: path, reason: Self.message(code: code))
        }
        archive = za
        let count = zip_get_num_entries(za, 0)
        guard count >= 0, count <= Int64(Self.maxMemberCount) else {
            zip_discard(za)
            throw .tooLarge(name: "", limit: UInt64(Self.maxMemberCount))
        }
        var safe: [Member] = []
        var unsafe: [RefusedMember] = []
        for i in 0..<UInt64(count) {
            var st = zip_stat_t()
            zip_stat_init(&st)
            guard zip_stat_index(za, i, 0, &st) == 0, let cName = st.name else {
                unsafe.append(RefusedMember(name: "#\(i)", error: .io(name: "#\(i)", reason: String(cString: zip_strerror(za)))))
                continue
            }
            let name = String(decoding: Self.bytes(of: cName), as: UTF8.self)
            if let reason = Self.unsafeReason(name) {
                unsafe.append(RefusedMember(name: name, error: .unsafeName("\(name) (\(reason))")))
                continue
            }
            let declared = st.valid & UInt64(ZIP_STAT_SIZE) != 0 ? st.size : 0
            let compressed = st.valid & UInt64(ZIP_STAT_COMP_SIZE) != 0 ? st.comp_size : 0
            safe.append(Member(index: i, name: name, declaredByteCount: declared, compressedByteCount: compressed))
        }
        members = safe
        refused = unsafe
    }

    deinit { zip_discard(archive) }

    /// The member named `name` exactly, if it is listed and safe.
    public func member(named name: String) -> Member? { members.first { $0.name == name } }

    /// Why `name` is unsafe to use as a path, or nil when it is safe: empty,
    /// absolute (`/…`, `C:…`), a `..` or `.` component, an empty component,
    /// a backslash (a Windows separator that could hide `..\`), or a NUL or
    /// other control character.
    public static func unsafeReason(_ name: String) -> String? {
        if name.isEmpty { return "empty name" }
        if name.hasPrefix("/") { return "absolute path" }
        let scalars = name.unicodeScalars
        if scalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) { return "control character or NUL" }
        if name.contains("\\") { return "backslash" }
        if scalars.count >= 2, scalars.dropFirst().first == ":" { return "drive letter" }
        var components = name.split(separator: "/", omittingEmptySubsequences: false)
        if name.hasSuffix("/") { components.removeLast() }
        for c in components {
            if c.isEmpty { return "empty path component" }
            if c == ".." || c == "." { return "\(c) component" }
        }
        return nil
    }

    /// Opens `member` for streaming.
    ///
    /// - Throws: ``ZipError/tooLarge(name:limit:)`` when its declared size is
    ///   over ``maxMemberByteCount``; ``ZipError/io(name:reason:)`` when
    ///   libzip cannot open it (encrypted, unsupported compression).
    public func open(_ member: Member) throws(ZipError) -> ZipMemberReader {
        guard member.declaredByteCount <= Self.maxMemberByteCount else {
            throw .tooLarge(name: member.name, limit: Self.maxMemberByteCount)
        }
        guard let file = zip_fopen_index(archive, member.index, 0) else {
            throw .io(name: member.name, reason: String(cString: zip_strerror(archive)))
        }
        return ZipMemberReader(reader: self, file: file, member: member)
    }

    /// Reads all of a small member into memory.
    ///
    /// - Parameter limit: refuse a member producing more than this many bytes.
    /// - Throws: the errors of ``open(_:)`` and ``ZipMemberReader/read(into:)``;
    ///   ``ZipError/tooLarge(name:limit:)`` above `limit`.
    public func readAll(_ member: Member, limit: UInt64) throws(ZipError) -> [UInt8] {
        let stream = try open(member)
        var out: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = try stream.readMember(into: buffer)
            if n == 0 { break }
            guard UInt64(out.count + n) <= limit else { throw .tooLarge(name: member.name, limit: limit) }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        return out
    }

    func account(_ n: Int, member: Member) throws(ZipError) {
        totalBytesRead += UInt64(n)
        guard totalBytesRead <= Self.maxTotalByteCount else { throw .tooLarge(name: "", limit: Self.maxTotalByteCount) }
    }

    static func bytes(of cString: UnsafePointer<CChar>) -> [UInt8] {
        var out: [UInt8] = []
        var p = cString
        while p.pointee != 0 {
            out.append(UInt8(bitPattern: p.pointee))
            p += 1
        }
        return out
    }

    static func message(code: Int32) -> String {
        var error = zip_error_t()
        zip_error_init_with_code(&error, code)
        defer { zip_error_fini(&error) }
        return String(cString: zip_error_strerror(&error))
    }
}

/// A stream over one member's uncompressed bytes, read in order: a
/// ``ByteSource``, so a member can be stored in a vault or parsed as it is
/// read, with nothing extracted to disk.
///
/// Each read checks the bytes produced so far against the member's declared
/// size, ``ZipReader/maxMemberByteCount``, the archive's
/// ``ZipReader/maxTotalByteCount`` and the compression-ratio guard; libzip
/// checks the CRC at the end.
public final class ZipMemberReader: ByteSource {
    private let reader: ZipReader
    private var file: OpaquePointer?
    /// The member being read.
    public let member: ZipReader.Member
    /// Uncompressed bytes produced so far.
    public private(set) var bytesRead: UInt64 = 0
    /// The error that stopped the stream, with libzip's reason or the limit
    /// passed; nil while the stream is good.
    public private(set) var failure: ZipError?

    init(reader: ZipReader, file: OpaquePointer, member: ZipReader.Member) {
        self.reader = reader
        self.file = file
        self.member = member
    }

    deinit { if let file { zip_fclose(file) } }

    /// Reads up to `buffer.count` bytes; returns 0 at the end of the member.
    /// The ``ZipError`` behind a failure is kept in ``failure``.
    ///
    /// - Throws: ``FormatError/sizeLimitExceeded(_:what:size:limit:)`` past a
    ///   limit (the member's declared size, ``ZipReader/maxMemberByteCount``,
    ///   the ratio guard's allowance, or ``ZipReader/maxTotalByteCount``);
    ///   ``FormatError/io(_:)`` (`EIO`) for damaged data or a CRC mismatch,
    ///   as ``QuireError``. After an error the stream stays failed.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(QuireError) -> Int {
        do { return try readMember(into: buffer) } catch {
            failure = failure ?? error
            switch error {
            case .tooLarge(let name, let limit):
                throw .fromFormat(
                    .sizeLimitExceeded(
                        nil, what: name.isEmpty ? "ZIP archive \(reader.path)" : "ZIP member \(name)", size: bytesRead, limit: limit))
            default:
                throw .fromFormat(
                    .io(SystemError(operation: "read ZIP member \(member.name) (\(error.description))", path: reader.path, code: 5)))
            }
        }
    }

    /// ``read(into:)`` with the ZIP error itself.
    func readMember(into buffer: UnsafeMutableRawBufferPointer) throws(ZipError) -> Int {
        guard let file else { throw .io(name: member.name, reason: "the stream already failed or was closed") }
        guard buffer.count > 0 else { return 0 }
        let n = zip_fread(file, buffer.baseAddress!, UInt64(buffer.count))
        if n < 0 {
            let reason = String(cString: zip_file_strerror(file))
            close()
            throw .io(name: member.name, reason: reason)
        }
        bytesRead += UInt64(n)
        do throws(ZipError) {
            try check()
            try reader.account(Int(n), member: member)
        } catch {
            close()
            throw error
        }
        return Int(n)
    }

    private func check() throws(ZipError) {
        if bytesRead > member.declaredByteCount {
            // More bytes than the archive declared: a lying header.
            throw .tooLarge(name: member.name, limit: member.declaredByteCount)
        }
        if bytesRead > ZipReader.maxMemberByteCount { throw .tooLarge(name: member.name, limit: ZipReader.maxMemberByteCount) }
        if bytesRead > ZipReader.compressionRatioAllowanceByteCount {
            let (allowed, overflow) = max(member.compressedByteCount, 1).multipliedReportingOverflow(by: ZipReader.maxCompressionRatio)
            if !overflow, bytesRead > allowed { throw .tooLarge(name: member.name, limit: allowed) }
        }
    }

    /// Closes the stream early; further reads fail.
    public func close() {
        if let file { zip_fclose(file) }
        file = nil
    }
}
