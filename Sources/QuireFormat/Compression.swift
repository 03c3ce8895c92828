internal import CZstd
@_spi(Crypto) import QuireCrypto

/// zstd compression of record payloads (`Spec/format.md §6.1`).
///
/// A compressed payload is exactly one zstd frame (RFC 8878) that declares
/// its decompressed size in the frame header. Readers check the declared
/// size against the limit before decompressing and then check that the
/// frame produced exactly that many bytes and nothing followed it.
package enum Compression {
    /// The zstd level writers use for a payload of more than
    /// ``shortByteCount`` bytes.
    public static let level: Int32 = 3
    /// The zstd level writers use for a payload of at most
    /// ``shortByteCount`` bytes, such as most entries: level 1 compresses
    /// them within half a percent of level 3's size in about three quarters
    /// of the time (`BENCHMARKS.md`, "Format 2 against format 1"), and
    /// decompresses them as fast.
    public static let shortLevel: Int32 = 1
    /// The largest payload compressed at ``shortLevel``, in bytes.
    public static let shortByteCount = 16_384

    /// The level writers use for `byteCount` bytes of payload.
    public static func level(forByteCount byteCount: Int) -> Int32 { byteCount <= shortByteCount ? shortLevel : level }

    /// Compresses `input` into one zstd frame with the content size declared,
    /// at ``level(forByteCount:)``.
    /// With `context`, its workspace is reused (the output is the same):
    /// setting up a fresh one cost more than compressing a typical entry.
    public static func compress(_ input: UnsafeRawBufferPointer, context: CompressionContext? = nil) -> [UInt8] {
        let bound = ZSTD_compressBound(input.count)
        // zstd writes the first n bytes; the rest are cut off unread.
        var out = [UInt8](unsafeUninitializedCapacity: bound) { _, count in count = bound }
        let n = out.withUnsafeMutableBytes { o in
            if let context {
                ZSTD_compressCCtx(context.pointer, o.baseAddress, bound, input.baseAddress, input.count, level(forByteCount: input.count))
            } else {
                ZSTD_compress(o.baseAddress, bound, input.baseAddress, input.count, level(forByteCount: input.count))
            }
        }
        precondition(ZSTD_isError(n) == 0, "zstd compression cannot fail with a bound-sized buffer")
        out.removeSubrange(n...)
        return out
    }

    /// Compresses `input`, reusing `context` when given.
    public static func compress(_ input: [UInt8], context: CompressionContext? = nil) -> [UInt8] {
        input.withUnsafeBytes { compress($0, context: context) }
    }

    /// Why a payload does not decompress.
    public enum Failure: Error, Sendable, Equatable {
        /// Not a single zstd frame with a declared size, or bytes after it.
        case invalid(String)
        /// The declared size is over `limit`.
        case tooLarge(declared: UInt64, limit: UInt64)
        /// The frame decompressed to another size than it declared.
        case sizeMismatch(declared: UInt64, actual: UInt64)
    }

    /// The decompressed size a zstd payload declares, checked against
    /// `limit` before any decompression work.
    ///
    /// - Throws: ``Failure``.
    public static func declaredSize(_ input: UnsafeRawBufferPointer, limit: Int) throws(Failure) -> Int {
        let size = ZSTD_getFrameContentSize(input.baseAddress, input.count)
        // ZSTD_CONTENTSIZE_UNKNOWN is (0ULL - 1), ZSTD_CONTENTSIZE_ERROR is (0ULL - 2).
        if size == UInt64.max { throw .invalid("the zstd frame does not declare its size") }
        if size == UInt64.max - 1 { throw .invalid("not a zstd frame") }
        guard size <= UInt64(limit) else { throw .tooLarge(declared: size, limit: UInt64(limit)) }
        let frameLength = ZSTD_findFrameCompressedSize(input.baseAddress, input.count)
        guard ZSTD_isError(frameLength) == 0 else { throw .invalid("the zstd frame is truncated or malformed") }
        guard frameLength == input.count else {
            throw .invalid("\(input.count - frameLength) bytes follow the zstd frame")
        }
        // The window the frame header declares (RFC 8878 §3.1.1.1.2): the
        // one-shot decoder never checks it (thirteenth review R13-3). A
        // single-segment frame's window is its content size, checked above.
        if input.count > 5, input[4] & 0x20 == 0 {
            let exponent = UInt64(input[5] >> 3)
            let mantissa = UInt64(input[5] & 7)
            let base = UInt64(1) << (10 + exponent)
            let window = base + (base / 8) * mantissa
            guard window <= UInt64(limit) else { throw .invalid("the zstd frame's window of \(window) bytes is over \(limit)") }
        }
        try checkBlocks(input, declared: size)
        return Int(size)
    }

    /// Walks the blocks of a zstd frame that ``declaredSize(_:limit:)`` has
    /// found whole, against Block_Maximum_Size = min(window, 128 KiB)
    /// (RFC 8878 §3.1.1.2.3; `Spec/format.md §6.1` step 4, fourteenth
    /// review R14-5). libzstd checks only a compressed block's size, and
    /// reports literals that regenerate to more than the maximum as
    /// corruption; the spec wants every block's size checked
    /// (``Failure/invalid(_:)``) and literals over the maximum reported
    /// like any block that decodes to more than it (``Failure/sizeMismatch(declared:actual:)``).
    static func checkBlocks(_ input: UnsafeRawBufferPointer, declared: UInt64) throws(Failure) {
        func byte(_ i: Int) -> UInt64 { i < input.count ? UInt64(input[i]) : 0 }
        let descriptor = input[4]
        let singleSegment = descriptor & 0x20 != 0
        var window = declared
        var position = 5
        if !singleSegment {
            let exponent = UInt64(input[5] >> 3)
            let base = UInt64(1) << (10 + exponent)
            window = base + (base / 8) * UInt64(input[5] & 7)
            position += 1
        }
        position += [0, 1, 2, 4][Int(descriptor & 3)]
        position += [singleSegment ? 1 : 0, 2, 4, 8][Int(descriptor >> 6)]
        let maximum = min(window, 128 * 1024)
        // ZSTD_findFrameCompressedSize has walked these headers: each lies
        // inside the frame, so the loop ends at the last block.
        while position + 3 <= input.count {
            let header = byte(position) | byte(position + 1) << 8 | byte(position + 2) << 16
            position += 3
            let type = (header >> 1) & 3
            let size = header >> 3
            guard size <= maximum else {
                throw .invalid("a zstd block of \(size) bytes is over the block maximum of \(maximum)")
            }
            if type == 2, size > 0 {
                // The Literals_Section_Header's Regenerated_Size (RFC 8878 §3.1.1.3.1.1).
                let b0 = byte(position)
                let regenerated: UInt64
                switch (b0 & 3, (b0 >> 2) & 3) {
                case (0...1, 0), (0...1, 2): regenerated = b0 >> 3
                case (0...1, 1): regenerated = b0 >> 4 | byte(position + 1) << 4
                case (0...1, _): regenerated = b0 >> 4 | byte(position + 1) << 4 | byte(position + 2) << 12
                case (_, 0...1): regenerated = (b0 >> 4 | byte(position + 1) << 4) & 0x3ff
                case (_, 2): regenerated = (b0 >> 4 | byte(position + 1) << 4 | byte(position + 2) << 12) & 0x3fff
                default: regenerated = (b0 >> 4 | byte(position + 1) << 4 | byte(position + 2) << 12) & 0x3ffff
                }
                if regenerated > maximum { throw .sizeMismatch(declared: declared, actual: declared + 1) }
            }
            position += type == 1 ? 1 : Int(size)
            if header & 1 != 0 { break }
        }
    }

    /// Decompresses one zstd frame into `output`, whose size must be the
    /// declared size from ``declaredSize(_:limit:)``.
    ///
    /// - Throws: ``Failure``.
    public static func decompress(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, context: DecompressionContext
    ) throws(Failure) {
        let n = ZSTD_decompressDCtx(context.pointer, output.baseAddress, output.count, input.baseAddress, input.count)
        if ZSTD_isError(n) != 0 {
            let name = String(cString: ZSTD_getErrorName(n))
            if ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall {
                throw .sizeMismatch(declared: UInt64(output.count), actual: UInt64(output.count) + 1)
            }
            throw .invalid(name)
        }
        guard n == output.count else { throw .sizeMismatch(declared: UInt64(output.count), actual: UInt64(n)) }
    }

    /// Decompresses a payload, checking the declared size against `limit`.
    ///
    /// - Throws: ``Failure``.
    public static func decompress(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        let context = DecompressionContext()
        let sized: Result<Int, Failure> = input.withUnsafeBytes { i in
            Result { () throws(Failure) -> Int in try declaredSize(i, limit: limit) }
        }
        var out = [UInt8](repeating: 0, count: try sized.get())
        let done: Result<Void, Failure> = input.withUnsafeBytes { i in
            out.withUnsafeMutableBytes { o in
                Result { () throws(Failure) in try decompress(i, into: o, context: context) }
            }
        }
        try done.get()
        return out
    }
}

/// A reusable zstd decompression context (one per reading thread).
// @unchecked Sendable: a zstd context pointer, used by one thread at a time (each reader
// makes its own); the type crosses threads only to be freed.
package final class DecompressionContext: @unchecked Sendable {
    let pointer: OpaquePointer
    /// Where a compressed record's plaintext is opened, reused from record
    /// to record (``withScratch(_:_:)``).
    private var scratch: UnsafeMutableRawBufferPointer?

    /// A fresh context.
    public init() {
        pointer = ZSTD_createDCtx()
    }

    deinit {
        ZSTD_freeDCtx(pointer)
        scratch?.deallocate()
    }

    /// Calls `body` with `count` bytes of this context's buffer (grown when
    /// needed), then wipes them: the plaintext a record is opened into
    /// before it is decompressed.
    /// Over 1 MiB the buffer is not kept (a context lives as long as its
    /// vault handle).
    func withScratch<R, E: Error>(_ count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        if count > 1 << 20 {
            let once = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
            defer {
                wipe(once)
                once.deallocate()
            }
            return try body(once)
        }
        if (scratch?.count ?? 0) < count {
            scratch?.deallocate()
            scratch = .allocate(byteCount: max(count, 4096), alignment: 16)
        }
        let part = UnsafeMutableRawBufferPointer(rebasing: scratch![0..<count])
        defer { wipe(part) }
        return try body(part)
    }
}

/// A reusable zstd compression context (one per writing thread; a writer
/// uses it under its vault's lock).
package final class CompressionContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// A fresh context.
    public init() {
        pointer = ZSTD_createCCtx()
    }

    deinit { ZSTD_freeCCtx(pointer) }
}
