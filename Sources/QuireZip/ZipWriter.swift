import CZip
import QuireSystem

/// Content for one archive member, read when the archive is written
/// (during ``ZipWriter/close()``), so that members are streamed rather
/// than held in memory.
public protocol ZipMemberSource: AnyObject {
    /// Called once before the first read.
    ///
    /// - Throws: any error; it stops the archive (see ``ZipWriter/sourceError``).
    func open() throws
    /// Fills the start of `buffer` with the next bytes; returns how many,
    /// 0 at the end.
    ///
    /// - Throws: any error; it stops the archive (see ``ZipWriter/sourceError``).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// The content's size in bytes when known in advance, else nil. A
    /// known size lets libzip write the member without a Zip64 extra
    /// field (EPUB requires that of `mimetype`).
    var byteCount: UInt64? { get }
}

extension ZipMemberSource {
    /// Unknown by default.
    public var byteCount: UInt64? { nil }
}

/// A member held in memory (small files: `mimetype`, the package document).
public final class ZipBytesSource: ZipMemberSource {
    private let bytes: [UInt8]
    private var offset = 0

    /// A source of `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// A source of the UTF-8 bytes of `text`.
    public convenience init(text: String) { self.init(Array(text.utf8)) }

    /// Starts again from the first byte.
    public func open() { offset = 0 }

    /// The number of bytes held.
    public var byteCount: UInt64? { UInt64(bytes.count) }

    /// Copies the next bytes into `buffer`; 0 at the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let n = min(buffer.count, bytes.count - offset)
        if n > 0 { bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) } }
        offset += n
        return n
    }
}

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
    /// The first error a ``ZipMemberSource`` threw while ``close()`` ran.
    public private(set) var sourceError: (any Error)?

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
        dosTime = UInt16(min(23, max(0, modified.hour)) << 11 | min(59, max(0, modified.minute)) << 5 | min(59, max(0, modified.second)) / 2)
    }

    deinit { discard() }

    /// Adds a member named `name` whose content `source` gives when the
    /// archive is written; `compressed` deflates it, otherwise it is stored.
    ///
    /// - Throws: ``ZipError/unsafeName(_:)`` for an empty, absolute, `..`
    ///   or NUL-holding name or a duplicate; ``ZipError/io(name:reason:)``.
    public func add(_ name: String, compressed: Bool, source: any ZipMemberSource) throws(ZipError) {
        guard let za = archive else { throw .io(name: name, reason: "the archive is already closed") }
        guard Self.isSafe(name), !names.contains(name) else { throw .unsafeName(name) }
        let box = SourceBox(source: source, writer: self, name: name)
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
        try add(name, compressed: compressed, source: ZipBytesSource(bytes))
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

    fileprivate func record(_ error: any Error, member: String) {
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
    let source: any ZipMemberSource
    unowned let writer: ZipWriter
    let name: String
    var failed = false

    init(source: any ZipMemberSource, writer: ZipWriter, name: String) {
        self.source = source
        self.writer = writer
        self.name = name
    }
}

private let supportedCommands: zip_int64_t = {
    let commands = [ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, ZIP_SOURCE_SUPPORTS]
    return commands.reduce(0) { $0 | (zip_int64_t(1) << zip_int64_t($1.rawValue)) }
}()

/// libzip's source callback (`zip_source_function(3)`).
private func sourceCallback(_ user: UnsafeMutableRawPointer?, _ data: UnsafeMutableRawPointer?, _ length: zip_uint64_t, _ command: zip_source_cmd_t) -> zip_int64_t {
    guard let user else { return -1 }
    let box = Unmanaged<SourceBox>.fromOpaque(user).takeUnretainedValue()
    switch command {
    case ZIP_SOURCE_SUPPORTS:
        return supportedCommands
    case ZIP_SOURCE_OPEN:
        do { try box.source.open() } catch {
            box.failed = true
            box.writer.record(error, member: box.name)
            return -1
        }
        return 0
    case ZIP_SOURCE_READ:
        guard let data else { return -1 }
        do {
            return zip_int64_t(try box.source.read(into: UnsafeMutableRawBufferPointer(start: data, count: Int(min(length, 1 << 30)))))
        } catch {
            box.failed = true
            box.writer.record(error, member: box.name)
            return -1
        }
    case ZIP_SOURCE_CLOSE:
        return 0
    case ZIP_SOURCE_STAT:
        guard let data, length >= MemoryLayout<zip_stat_t>.size else { return -1 }
        let st = data.assumingMemoryBound(to: zip_stat_t.self)
        zip_stat_init(st)
        if let size = box.source.byteCount {
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
