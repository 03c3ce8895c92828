import CZip
import QuireCrypto
@_spi(Format) public import QuireFormat
import QuireSystem

/// Writes a ZIP archive through libzip (PKWARE APPNOTE), member by member
/// in the order added. Members are stored or deflated (level 6), carry the
/// same fixed DOS timestamp (so the same members give the same bytes on
/// every machine and in every time zone) and UTF-8 names.
///
/// The archive is written by ``close()``: libzip writes a temporary file
/// beside `path` and renames it over `path`; ``discard()`` (or releasing
/// the writer unclosed) writes nothing.
public final class ZipWriter {
    /// The archive's path.
    public let path: String
    /// The permission bits the closed archive gets (default `0o600`).
    public let permissions: UInt16
    private var archive: OpaquePointer?
    private var names = Set<String>()
    /// The DOS date and time every member carries: 1980-01-01 00:00:00 by default.
    private let dosDate: UInt16
    private let dosTime: UInt16
    /// The first error a member's source threw while ``close()`` ran.
    package private(set) var sourceError: FormatError?

    /// Starts a new archive at `path` (replaced when it exists).
    /// `modified` is the timestamp written for every member, as a UTC
    /// calendar date and time (years 1980…2107; others are clamped).
    /// `permissions` are set on the archive when ``close()`` has written it
    /// (libzip writes it under a private temporary name until then).
    ///
    /// - Throws: ``ZipError/cannotOpen(path:reason:)``.
    public init(
        path: String, modified: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) = (1980, 1, 1, 0, 0, 0),
        permissions: UInt16 = 0o600
    ) throws(ZipError) {
        self.path = path
        self.permissions = permissions
        // libzip writes the archive to a temporary file it creates with the
        // mode of the file it will replace (0666 under the umask when there
        // is none): the file gets `permissions` first, so that neither it nor
        // libzip's temporary file is ever readable by others.
        do {
            if FileSystem.nameExists(path) {
                try FileSystem.setPermissions(path, permissions)
            } else {
                _ = try SystemFile(path: path, mode: .createExclusive(permissions: permissions))
                createdEmpty = true
            }
        } catch {
            throw .cannotOpen(path: path, reason: "\(error)")
        }
        var code: Int32 = 0
        guard let za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code) else {
            if createdEmpty { try? FileSystem.remove(path) }
            var error = zip_error_t()
            zip_error_init_with_code(&error, code)
            defer { zip_error_fini(&error) }
            throw .cannotOpen(path: path, reason: String(cString: zip_error_strerror(&error)))
        }
        archive = za
        let y = min(2107, max(1980, modified.year))
        dosDate = UInt16((y - 1980) << 9 | min(12, max(1, modified.month)) << 5 | min(31, max(1, modified.day)))
        dosTime = UInt16(
            min(23, max(0, modified.hour)) << 11 | min(59, max(0, modified.minute)) << 5 | min(59, max(0, modified.second)) / 2)
    }

    deinit { discard() }

    /// Adds a member named `name` whose content `source` gives, from its
    /// first byte to its end, when the archive is written (during
    /// ``close()``, so members are streamed rather than held in memory);
    /// `compressed` deflates it, otherwise it is stored. `byteCount` is the
    /// content's size when known in advance: it lets libzip write the member
    /// without a Zip64 extra field (EPUB requires that of `mimetype`). A
    /// source is read once; libzip asking to read it again fails the archive.
    ///
    /// - Throws: ``ZipError/unsafeName(_:)`` for an empty, absolute, `..`
    ///   or NUL-holding name or a duplicate; ``ZipError/io(name:reason:)``.
    public func add(_ name: String, compressed: Bool, source: any ByteSource, byteCount: UInt64? = nil) throws(ZipError) {
        guard let za = archive else { throw .io(name: name, reason: "the archive is already closed") }
        guard Self.isSafe(name), !names.contains(name) else { throw .unsafeName(name) }
        let box = SourceBox(source: source, byteCount: byteCount, writer: self, name: name)
        let user = Unmanaged.passRetained(box).toOpaque()
        guard let zs = zip_source_function(za, sourceCallback, user) else {
            Unmanaged<SourceBox>.fromOpaque(user).release()
            throw .io(name: name, reason: String(cString: zip_strerror(za)))
        }
        let index = zip_file_add(za, name, zs, zip_flags_t(ZIP_FL_ENC_UTF_8))
        guard index >= 0 else {
            zip_source_free(zs)
            throw .io(name: name, reason: String(cString: zip_strerror(za)))
        }
        let method = compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE
        guard zip_set_file_compression(za, zip_uint64_t(index), method, compressed ? 6 : 0) == 0,
            zip_file_set_dostime(za, zip_uint64_t(index), dosTime, dosDate, 0) == 0,
            zip_file_set_external_attributes(za, zip_uint64_t(index), 0, UInt8(ZIP_OPSYS_UNIX), 0o100644 << 16) == 0
        else {
            throw .io(name: name, reason: String(cString: zip_strerror(za)))
        }
        names.insert(name)
    }

    /// Adds a member holding `bytes`.
    ///
    /// - Throws: as ``add(_:compressed:source:)``.
    public func add(_ name: String, compressed: Bool, bytes: [UInt8]) throws(ZipError) {
        try add(name, compressed: compressed, source: MemoryByteSource(bytes), byteCount: UInt64(bytes.count))
    }

    /// Writes the archive: every source is read now, in the order added.
    ///
    /// - Throws: ``ZipError/io(name:reason:)`` (libzip's reason, or the
    ///   member whose source failed; that error is in ``sourceError``).
    public func close() throws(ZipError) {
        guard let za = archive else { return }
        if zip_close(za) != 0 {
            let reason = String(cString: zip_strerror(za))
            zip_discard(za)
            archive = nil
            if createdEmpty { try? FileSystem.remove(path) }
            if let failed = failedMember, let e = sourceError { throw .io(name: failed, reason: "\(e)") }
            throw .io(name: "", reason: reason)
        }
        archive = nil
        // libzip gives a new archive the umask's mode (often 0644): an
        // archive of decrypted content must be readable by its owner only.
        do { try FileSystem.setPermissions(path, permissions) } catch { throw .io(name: "", reason: "\(error)") }
    }

    /// Abandons the archive: nothing is written.
    public func discard() {
        if let za = archive {
            zip_discard(za)
            if createdEmpty { try? FileSystem.remove(path) }
        }
        archive = nil
    }

    /// True when ``init(path:modified:permissions:)`` made the (empty) file
    /// at `path`: an abandoned archive removes it.
    private var createdEmpty = false

    private var failedMember: String?

    fileprivate func record(_ error: FormatError, member: String) {
        if sourceError == nil {
            sourceError = error
            failedMember = member
        }
    }

    static func isSafe(_ name: String) -> Bool {
        guard !name.isEmpty, !name.hasPrefix("/"), !name.contains("\0"), !name.contains("\\") else { return false }
        return !name.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == ".." || $0.isEmpty }
    }
}

/// What libzip's callback holds for one member.
private final class SourceBox {
    let source: any ByteSource
    let byteCount: UInt64?
    unowned let writer: ZipWriter
    let name: String
    var failed = false
    var opened = false

    init(source: any ByteSource, byteCount: UInt64?, writer: ZipWriter, name: String) {
        self.source = source
        self.byteCount = byteCount
        self.writer = writer
        self.name = name
    }
}

private let supportedCommands: zip_int64_t = {
    let commands = [
        ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, ZIP_SOURCE_SUPPORTS,
    ]
    return commands.reduce(0) { $0 | (zip_int64_t(1) << zip_int64_t($1.rawValue)) }
}()

/// libzip's source callback (`zip_source_function(3)`).
private func sourceCallback(
    _ user: UnsafeMutableRawPointer?, _ data: UnsafeMutableRawPointer?, _ length: zip_uint64_t, _ command: zip_source_cmd_t
) -> zip_int64_t {
    guard let user else { return -1 }
    let box = Unmanaged<SourceBox>.fromOpaque(user).takeUnretainedValue()
    switch command {
    case ZIP_SOURCE_SUPPORTS:
        return supportedCommands
    case ZIP_SOURCE_OPEN:
        // A ByteSource cannot rewind: a second open would write the member
        // from the middle, so it fails the archive instead.
        guard !box.opened else {
            box.failed = true
            box.writer.record(.notWritable(reason: "libzip asked to read the member \(box.name) twice"), member: box.name)
            return -1
        }
        box.opened = true
        return 0
    case ZIP_SOURCE_READ:
        guard let data else { return -1 }
        do {
            return zip_int64_t(try box.source.read(into: UnsafeMutableRawBufferPointer(start: data, count: Int(min(length, 1 << 30)))))
        } catch {
            box.failed = true
            box.writer.record((error.layer as? FormatError) ?? .source(error), member: box.name)
            return -1
        }
    case ZIP_SOURCE_CLOSE:
        return 0
    case ZIP_SOURCE_STAT:
        guard let data, length >= MemoryLayout<zip_stat_t>.size else { return -1 }
        let st = data.assumingMemoryBound(to: zip_stat_t.self)
        zip_stat_init(st)
        if let size = box.byteCount {
            st.pointee.size = size
            st.pointee.valid |= zip_uint64_t(ZIP_STAT_SIZE)
        }
        return zip_int64_t(MemoryLayout<zip_stat_t>.size)
    case ZIP_SOURCE_ERROR:
        guard let data, length >= 2 * MemoryLayout<Int32>.size else { return -1 }
        let codes = data.assumingMemoryBound(to: Int32.self)
        codes[0] = box.failed ? ZIP_ER_READ : ZIP_ER_OK
        codes[1] = 0
        return zip_int64_t(2 * MemoryLayout<Int32>.size)
    case ZIP_SOURCE_FREE:
        Unmanaged<SourceBox>.fromOpaque(user).release()
        return 0
    default:
        return -1
    }
}
