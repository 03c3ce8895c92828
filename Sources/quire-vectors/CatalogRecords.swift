@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireVectors

/// Record payloads (compression, padding, CBOR), epochs and attachments.
extension Catalog {
    // MARK: - Compression

    static var compression: [Make] {
        [
            {
                let b = try VectorBuilder("damaged-zstd-declared-over-limit")
                let huge = Compression.compress([UInt8](repeating: 0x41, count: Limits.maxRecordByteCount + 1))
                var plain = huge
                Padding.pad(&plain)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: plain, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged", comment: "a zstd frame declaring 16 MiB + 1 bytes is refused before decompressing",
                    issues: [("size_limit_exceeded", b.offset(idx[0]!))])
            },
            {
                // Pins format.md §6.1: a window over 16 MiB is checked after
                // steps 1 and 2, so a frame that also declares more than
                // 16 MiB is size_limit_exceeded (Python README item 13).
                let b = try VectorBuilder("damaged-zstd-window-and-size-over-limit")
                let declared = UInt64(Limits.maxRecordByteCount + 1)
                // Frame header: magic; descriptor 0xc0 (an 8-byte content
                // size, not single-segment, no checksum, no dictionary);
                // window descriptor 0x78 (exponent 15: a 2^25-byte window,
                // 32 MiB); the content size; then one last raw block of 1 byte.
                var z: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0xc0, 0x78]
                z += (0..<8).map { UInt8(truncatingIfNeeded: declared >> (8 * UInt64($0))) }
                z += [0x09, 0x00, 0x00, 0x41]
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "a zstd frame with a 32 MiB window that declares 16 MiB + 1 bytes: the declared size is checked first (format.md §6.1 step 2), the window after it, so it is size_limit_exceeded, not decompression_failed",
                    issues: [("size_limit_exceeded", b.offset(idx[0]!))])
            },
            {
                // Thirteenth review R13-3: a window over 16 MiB alone, which
                // a one-shot decoder does not check (format.md §6.1 step 3).
                let b = try VectorBuilder("damaged-zstd-window-over-limit")
                // Frame header: magic; descriptor 0xc0 (an 8-byte content
                // size, not single-segment); window descriptor 0x78 (a
                // 2^25-byte window, 32 MiB); the content size, 100; then one
                // last raw block of 100 bytes.
                var z: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0xc0, 0x78]
                z += (0..<8).map { UInt8(truncatingIfNeeded: UInt64(100) >> (8 * UInt64($0))) }
                z += [0x21, 0x03, 0x00] + [UInt8](repeating: 0x41, count: 100)
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "a zstd frame that declares 100 bytes with a 32 MiB window (thirteenth review R13-3): a one-shot decoder (ZSTD_decompressDCtx) decodes it whatever its window, so readers differed; a reader MUST reject a window over 16 MiB from the frame header (format.md §6.1 step 3): decompression_failed",
                    issues: [("decompression_failed", b.offset(idx[0]!))])
            },
            {
                // Fourteenth review R14-5: a single-segment frame's window,
                // so its Block_Maximum_Size, is its declared size (format.md
                // §6.1 step 4). libzstd refuses the block ("Src size is
                // incorrect"); a reader decoding under a header of its own did not.
                let b = try VectorBuilder("damaged-zstd-block-over-single-segment-size")
                let content = [UInt8](String(repeating: "quire ", count: 16).utf8) + [UInt8]("test".utf8)
                // Descriptor 0xa0: a 4-byte content size, single segment. One
                // last compressed block: raw literals (2-byte header), the
                // 100 bytes, no sequences: Block_Size 103, over 100.
                var z: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0xa0] + le(UInt64(content.count), 4)
                z += zstdCompressedBlockOfRawLiterals(content)
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "a single-segment zstd frame that declares 100 bytes and holds one compressed block of 103 bytes (fourteenth review R14-5): a single-segment frame's window is its declared size, so the block is over Block_Maximum_Size = min(window, 128 KiB) (format.md §6.1 step 4): decompression_failed",
                    issues: [("decompression_failed", b.offset(idx[0]!))])
            },
            {
                // R14-5 with a Window_Descriptor: one raw block larger than
                // the window, which libzstd does not check for raw blocks.
                let b = try VectorBuilder("damaged-zstd-block-over-window")
                // Descriptor 0x80: a 4-byte content size, not single-segment;
                // window descriptor 0x00: 1 KiB; one last raw block of 4096 bytes.
                var z: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x00] + le(4096, 4)
                z += le(4096 << 3 | 1, 3) + [UInt8](repeating: 0x41, count: 4096)
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "a zstd frame with a 1 KiB window that declares 4096 bytes and holds them in one raw block (fourteenth review R14-5): the block is over Block_Maximum_Size = min(window, 128 KiB), whatever its type (format.md §6.1 step 4), although libzstd decodes it (it checks only compressed blocks): decompression_failed",
                    issues: [("decompression_failed", b.offset(idx[0]!))])
            },
            {
                // R14-5: literals that regenerate to more than the block
                // maximum, which libzstd reports as corruption.
                let b = try VectorBuilder("damaged-zstd-literals-over-window")
                // Descriptor 0x80, window 1 KiB, 2000 bytes declared; one last
                // compressed block: RLE literals (2-byte header, Regenerated_Size
                // 2000) of 0x41, no sequences.
                var z: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x00] + le(2000, 4)
                let body = le(2000 << 4 | 0b0101, 2) + [0x41, 0x00]
                z += le(UInt64(body.count) << 3 | 2 << 1 | 1, 3) + body
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "a zstd frame with a 1 KiB window, 2000 bytes declared, one compressed block whose RLE literals regenerate 2000 bytes (fourteenth review R14-5): the block decodes to more than Block_Maximum_Size, read from its Literals_Section_Header (format.md §6.1 step 4), which libzstd reports as corruption: decompressed_size_mismatch",
                    issues: [("decompressed_size_mismatch", b.offset(idx[0]!))])
            },
            {
                // R14-5: a compressed block whose sequences decode to more
                // than the window; libzstd runs out of room ("Destination
                // buffer is too small").
                let b = try VectorBuilder("damaged-zstd-block-decodes-over-window")
                let content = [UInt8](String(repeating: "a journal line, ", count: 375).utf8)
                let made = Compression.compress(content)
                // zstd writes a single-segment frame with a 2-byte size (descriptor 0x60):
                // keep its blocks, under a 1 KiB window and a 4-byte size.
                precondition(made[4] == 0x60, "expected a single-segment frame with a 2-byte size")
                var z: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x00] + le(UInt64(content.count), 4) + made[7...]
                precondition(z[10] >> 1 & 3 == 2 && z[10] & 1 == 1 && content.count == 6000, "expected one compressed block")
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "a zstd frame with a 1 KiB window that declares its 6000 bytes, in one small compressed block whose sequences decode all 6000 (fourteenth review R14-5): the block decodes to more than Block_Maximum_Size = min(window, 128 KiB), the decoder runs out of room (format.md §6.1): decompressed_size_mismatch",
                    issues: [("decompressed_size_mismatch", b.offset(idx[0]!))])
            },
            {
                // Fifteenth review R15-3: a match offset beyond the window
                // but within the output. A one-pass decoder into the
                // declared-size buffer (ZSTD_decompressDCtx) resolves it from
                // the output; a streaming decoder keeps a ring of about the
                // window and returned other bytes, or failed.
                let b = try VectorBuilder("success-zstd-offset-beyond-window")
                let repeated = [UInt8]("a line the window cannot reach.".utf8)
                let payload = b.entry(
                    String(decoding: repeated, as: UTF8.self) + String(repeating: "filler for the journal page. ", count: 300)
                        + String(decoding: repeated, as: UTF8.self) + " end"
                ).encoded()
                // The first and the last copy of `repeated` in the payload.
                let n = repeated.count
                let first = (0...(payload.count - n)).first { Array(payload[$0..<($0 + n)]) == repeated }!
                let last = (0...(payload.count - n)).last { Array(payload[$0..<($0 + n)]) == repeated }!
                let distance = last - first
                let tail = Array(payload[(last + n)...])
                precondition(distance > 2048 && (3...34).contains(n) && n + tail.count <= 2048, "expected a match beyond a 2 KiB window")
                // Descriptor 0x80: a 4-byte content size, not single-segment;
                // window descriptor 0x08: 2 KiB. The bytes before the last copy
                // as raw blocks of at most 2 KiB.
                var z: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x08] + le(UInt64(payload.count), 4)
                for start in stride(from: 0, to: last, by: 2048) {
                    let chunk = Array(payload[start..<min(start + 2048, last)])
                    z += le(UInt64(chunk.count) << 3, 3) + chunk
                }
                // One last compressed block: the tail as raw literals
                // (2-byte header), then one sequence in RLE modes (RFC 8878
                // §3.1.1.3.2): literal length 0 (code 0), match length n
                // (code n - 3), Offset_Value distance + 3 (code its log2, and
                // that many extra bits, the only bits of the bitstream, under
                // its end marker).
                let offsetValue = UInt64(distance + 3)
                let offsetCode = 63 - offsetValue.leadingZeroBitCount
                let bits = UInt64(1) << offsetCode | (offsetValue - (UInt64(1) << offsetCode))
                var body = le(UInt64(tail.count) << 4 | 0b0100, 2) + tail
                body += [0x01, 0x54, 0x00, UInt8(offsetCode), UInt8(n - 3)]
                body += le(bits, (offsetCode + 1 + 7) / 8)
                z += le(UInt64(body.count) << 3 | 2 << 1 | 1, 3) + body
                let decoded = try Compression.decompress(z, limit: Limits.maxRecordByteCount)
                precondition(decoded == payload, "the frame must decode to the payload")
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                try b.commit([.raw(frame, release: (RecordKind.entryRevision.rawValue, payload))])
                return try b.vector(
                    "success",
                    comment:
                        "a zstd frame with a 2 KiB window whose blocks each decode to at most 2 KiB, the last one a match \(distance) bytes back, beyond the window but within the output (fifteenth review R15-3): a reader decodes the frame in one pass into the buffer of the declared size, the whole output being the history, so the match resolves (format.md §6.1); a streaming decoder that keeps only a window of history returns other bytes or fails, and MUST NOT be used"
                )
            },
            {
                let b = try VectorBuilder("damaged-zstd-real-size-exceeds-declared")
                let payload = b.entry(String(repeating: english, count: 10)).encoded()
                var z = Compression.compress(payload)
                // Frame header: magic (4), descriptor (1); a single-segment frame
                // then has its content size field; lower it by one.
                let descriptor = z[4]
                precondition(descriptor & 0x20 != 0 && descriptor >> 6 == 1, "expected a single-segment frame with a 2-byte size")
                let declared = Int(z[5]) | Int(z[6]) << 8
                z[5] = UInt8((declared - 1) & 0xff)
                z[6] = UInt8((declared - 1) >> 8)
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "a zstd frame whose content is one byte longer than it declares: decompressed into exactly the declared size, the decoder runs out of room",
                    issues: [("decompressed_size_mismatch", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-zstd-trailing-bytes")
                var z = Compression.compress(b.entry(english).encoded()) + [1, 2, 3]
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil)])
                return try b.vector(
                    "damaged", comment: "bytes after the zstd frame inside the payload are refused",
                    issues: [("decompression_failed", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-zstd-two-frames")
                let half = b.entry(english).encoded()
                var z = Compression.compress(Array(half[0..<20])) + Compression.compress(Array(half[20...]))
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil)])
                return try b.vector(
                    "damaged", comment: "two concatenated zstd frames (which zstd's streaming API would join): only one frame is allowed",
                    issues: [("decompression_failed", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-zstd-skippable-frame")
                let payload = b.entry(english).encoded()
                // A skippable frame (magic 0x184D2A50, length 4) before a real one.
                var z: [UInt8] = [0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4] + Compression.compress(payload)
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil)])
                return try b.vector(
                    "damaged", comment: "a skippable zstd frame before the real one is refused (format.md §6.1: no skippable frames)",
                    issues: [("decompression_failed", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-zstd-not-a-frame")
                var z = b.random.bytes(200)
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil)])
                return try b.vector(
                    "damaged", comment: "the compressed flag on a payload that is not a zstd frame",
                    issues: [("decompression_failed", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-zstd-size-not-declared")
                let payload = b.entry("no declared size").encoded()
                // A zstd frame built by hand: magic, descriptor 0 (no size, not
                // single segment), window descriptor 0, one raw last block.
                var z: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00]
                let blockHeader = UInt32(payload.count) << 3 | 1
                z += [UInt8(blockHeader & 0xff), UInt8((blockHeader >> 8) & 0xff), UInt8(blockHeader >> 16)]
                z += payload
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil)])
                return try b.vector(
                    "damaged", comment: "a valid zstd frame that does not declare its decompressed size is refused",
                    issues: [("decompression_failed", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("success-zstd-padded-after-compression")
                let payload = b.entry(String(repeating: "padded after compression ", count: 40)).encoded()
                var z = Compression.compress(payload)
                Padding.pad(&z)
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                try b.commit([.raw(frame, release: (RecordKind.entryRevision.rawValue, payload))])
                return try b.vector(
                    "success",
                    comment:
                        "compression comes first, padding second: the padded plaintext is the zstd frame, 0x80 and zeros to Padmé(|zstd| + 1)"
                )
            },
        ]
    }

    // MARK: - Padding

    static var padding: [Make] {
        let cases: [(String, String, ([UInt8]) -> [UInt8])] = [
            (
                "no-marker", "a plaintext with no 0x80 marker",
                { p in p + [UInt8](repeating: 0, count: Padding.paddedCount(forPayload: p.count) - p.count) }
            ),
            (
                "nonzero-after-marker", "a non-zero byte after the marker",
                { p in
                    var x = p
                    Padding.pad(&x)
                    x[x.count - 1] = 1
                    return x
                }
            ),
            (
                "wrong-length", "marker present but the total is not Padmé(n + 1)",
                { p in p + [0x80] + [UInt8](repeating: 0, count: Padding.paddedCount(forPayload: p.count) - p.count + 3) }
            ),
            ("none", "no padding at all (the bare payload)", { p in p }),
            (
                "marker-only-short", "0x80 right after the payload but the plaintext one byte short of Padmé(n + 1)",
                { p in
                    var x = p
                    Padding.pad(&x)
                    x.removeLast()
                    return x.count > p.count + 1 ? x : x + [0]
                }
            ),
        ]
        return cases.map { (name, comment, pad) in
            {
                let b = try VectorBuilder("damaged-padding-\(name)")
                let plain = pad(b.entry(english + " padding").encoded())
                let frame = try Edit.sealedFrame(
                    kind: .entryRevision, flags: 0x01, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: plain, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged", comment: "a record's padding is not canonical: \(comment)", issues: [("bad_padding", b.offset(idx[0]!))])
            }
        }
    }

    // MARK: - Record bodies

    static var records: [Make] {
        let cases: [(String, String, (VectorBuilder) -> [UInt8])] = [
            (
                "keys-unsorted", "map keys out of canonical order",
                { b in
                    // {"revision": …, "entry": …}: "revision" sorts after "entry".
                    [0xa2, 0x68] + Array("revision".utf8) + [0x50] + b.random.bytes(16) + [0x65] + Array("entry".utf8) + [0x50]
                        + b.random.bytes(16)
                }
            ),
            (
                "int-not-shortest", "an integer not in its shortest form",
                { b in
                    [0xa3, 0x65] + Array("clock".utf8) + [0x18, 0x05]
                        + [0x65] + Array("entry".utf8) + [0x50] + b.random.bytes(16) + [0x68] + Array("revision".utf8) + [0x50]
                        + b.random.bytes(16)
                }
            ),
            (
                "missing-entry-id", "a revision without its entry id",
                { b in
                    CBOREncoder.encode(.map(CBORMap(text: [("revision", .bytes(b.random.bytes(16)))])))
                }
            ),
            (
                "wrong-type", "a text field holding an integer",
                { b in
                    CBOREncoder.encode(
                        .map(
                            CBORMap(text: [
                                ("entry", .bytes(b.random.bytes(16))), ("revision", .bytes(b.random.bytes(16))),
                                ("body", .map(CBORMap(text: [("text", .unsigned(5))]))),
                            ])))
                }
            ),
            ("not-cbor", "a payload that is not CBOR at all", { b in [0xff] + b.random.bytes(40) }),
            (
                "too-deep", "an item at depth 17 (one past the limit)",
                { b in
                    var v = CBOR.null
                    for _ in 0..<16 { v = .array([v]) }
                    return CBOREncoder.encode(
                        .map(CBORMap(text: [("entry", .bytes(b.random.bytes(16))), ("revision", .bytes(b.random.bytes(16))), ("deep", v)])))
                }
            ),
            (
                "float-half", "a 2-byte float (floats must be 8 bytes)",
                { b in
                    [0xa3, 0x61, 0x7a, 0xf9, 0x3c, 0x00]
                        + CBOREncoder.encode(
                            .map(CBORMap(text: [("entry", .bytes(b.random.bytes(16))), ("revision", .bytes(b.random.bytes(16)))]))
                        ).dropFirst()
                }
            ),
            (
                "duplicate-key", "the same key twice in one map",
                { b in
                    [0xa3, 0x65] + Array("entry".utf8) + [0x50] + b.random.bytes(16) + [0x65] + Array("entry".utf8) + [0x50]
                        + b.random.bytes(16)
                        + [0x68] + Array("revision".utf8) + [0x50] + b.random.bytes(16)
                }
            ),
            (
                "indefinite-length", "an indefinite-length array",
                { b in
                    [0xa3, 0x61, 0x61, 0x9f, 0x01, 0xff]
                        + CBOREncoder.encode(
                            .map(CBORMap(text: [("entry", .bytes(b.random.bytes(16))), ("revision", .bytes(b.random.bytes(16)))]))
                        ).dropFirst()
                }
            ),
            (
                "trailing-bytes", "bytes after the record's map",
                { b in
                    CBOREncoder.encode(
                        .map(CBORMap(text: [("entry", .bytes(b.random.bytes(16))), ("revision", .bytes(b.random.bytes(16)))]))) + [0x00]
                }
            ),
            (
                "invalid-utf8", "a text string that is not UTF-8",
                { b in
                    CBOREncoder.encode(
                        .map(CBORMap(text: [("entry", .bytes(b.random.bytes(16))), ("revision", .bytes(b.random.bytes(16)))]))
                    ).dropFirst()
                        .reduce(into: [0xa3, 0x61, 0x79, 0x62, 0xc3, 0x28]) { $0.append($1) }
                }
            ),
            (
                "id-wrong-length", "an entry id of 15 bytes",
                { b in
                    CBOREncoder.encode(
                        .map(CBORMap(text: [("entry", .bytes(b.random.bytes(15))), ("revision", .bytes(b.random.bytes(16)))])))
                }
            ),
        ]
        var list: [Make] = cases.map { (name, comment, make) in
            {
                let b = try VectorBuilder("damaged-malformed-\(name)")
                let idx = try b.commit([.sealed(.entryRevision, make(b), compress: false), .entry(b.entry("after"))])
                b.lose(frame: idx[0]!)
                return try b.vector(
                    "damaged", comment: "a record body that is not valid: \(comment)", issues: [("malformed_record", b.offset(idx[0]!))])
            }
        }
        list += [
            {
                let b = try VectorBuilder("damaged-malformed-manifest")
                let idx = try b.commit([
                    .sealed(
                        .blobManifest, CBOREncoder.encode(.map(CBORMap(text: [("blob", .bytes(b.random.bytes(32)))]))), compress: false),
                    .entry(b.entry("after")),
                ])
                b.lose(frame: idx[0]!)
                return try b.vector(
                    "damaged", comment: "an attachment manifest without its stream id", issues: [("malformed_record", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-malformed-profile")
                let idx = try b.commit([
                    .sealed(.profile, CBOREncoder.encode(.map(CBORMap(text: [("name", .unsigned(3))]))), compress: false)
                ])
                b.lose(frame: idx[0]!)
                return try b.vector(
                    "damaged", comment: "a profile whose name is an integer", issues: [("malformed_record", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-manifest-too-many-aliases")
                let m = BlobManifest(
                    blob: BlobID(unchecked: b.random.bytes(32)), stream: StreamID(using: b.random), byteCount: 10,
                    aliases: (0..<65).map { _ in BlobID(unchecked: b.random.bytes(32)) })
                let idx = try b.commit([.sealed(.blobManifest, m.encoded(), compress: false), .entry(b.entry("after"))])
                b.lose(frame: idx[0]!)
                return try b.vector(
                    "damaged", comment: "a manifest with 65 aliases, one over the limit of 64",
                    issues: [("size_limit_exceeded", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-manifest-size-over-limit")
                let m = BlobManifest(
                    blob: BlobID(unchecked: b.random.bytes(32)), stream: StreamID(using: b.random), byteCount: Limits.maxBlobByteCount + 1)
                let idx = try b.commit([.sealed(.blobManifest, m.encoded(), compress: false), .entry(b.entry("after"))])
                b.lose(frame: idx[0]!)
                return try b.vector(
                    "damaged", comment: "a manifest declaring 2⁴⁰ + 1 bytes, over the attachment limit",
                    issues: [("size_limit_exceeded", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-profile-flip-ciphertext")
                let idx = try b.commit([
                    .profile(Profile(name: "second", clock: HybridLogicalClock(milliseconds: 1_767_225_700_000, counter: 0))),
                    .entry(b.entry("after")),
                ])
                var bytes = try b.bytes()
                Edit.flipBit(&bytes, byte: Int(b.offset(idx[0]!)) + 50, bit: 0)
                b.lose(frame: idx[0]!)
                return try b.vector(
                    "damaged", comment: "a flipped bit in a profile's ciphertext: that profile is lost, the earlier one stands",
                    body: bytes, issues: [("authentication_failed", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("success-unknown-kind-body-hash-not-checked")
                let idx = try b.commit([
                    .plaintext(RecordKind(rawValue: 0xbe), Array("plain future record".utf8)), .entry(b.entry("after")),
                ])
                var bytes = try b.bytes()
                Edit.flipBit(&bytes, byte: Int(b.offset(idx[0]!)) + 18, bit: 3)
                return try b.vector(
                    "success",
                    comment:
                        "a flipped bit in the body of a record of an unknown non-critical kind: a reader skips the kind without checking its body hash (merge and compaction check it); the chain covers the stored hash, so the commit verifies",
                    body: bytes)
            },
        ]
        return list
    }

    // MARK: - Keys and epochs of records

    static var epochs: [Make] {
        [
            {
                let b = try VectorBuilder("damaged-unknown-key")
                let stranger = try b.freshKey(7)
                let frame = try SealedFrame.seal(
                    kind: .entryRevision, payload: b.entry("sealed under a key no keyring defines").encoded(), key: stranger,
                    vaultID: b.vaultID, compress: true, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("epoch 1"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "a record sealed under a key whose key id matches no key the reader holds (replaces version 1's unknown_epoch)",
                    issues: [("unknown_key", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-key-id-of-held-key-wrong-key")
                let stranger = try b.freshKey(1)
                var frame = try SealedFrame.seal(
                    kind: .entryRevision, payload: b.entry("a key id borrowed from the vault's key").encoded(), key: stranger,
                    vaultID: b.vaultID, compress: true, random: b.random)
                for (i, v) in b.keys.writeKey!.id.bytes.enumerated() { frame[2 + i] = v }
                Edit.fixCheck(&frame, frameAt: 0)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("epoch 1"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "a record sealed under another key but labelled with the held key's id: the reader tries the held key, which does not open it",
                    issues: [("authentication_failed", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-stale-epoch-commit")
                let old = b.keys.writeKey!
                try b.commit([.entry(b.entry("epoch 1"))])
                try b.rotate(to: 2)
                try b.commit([.entry(b.entry("epoch 2"))])
                b.writeWith(old)
                let idx = try b.commit([.entry(b.entry("written with the old key after the rotation"))], expectReleased: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "after epoch 2 began, a valid commit under epoch 1 (what a removed device could still make) is stale: the commit and its record are distrusted",
                    issues: [("stale_epoch", b.offset(idx[0]!)), ("stale_epoch", b.offset(idx[0]! + 1))])
            },
            {
                let b = try VectorBuilder("damaged-stale-epoch-record")
                let old = b.keys.writeKey!
                try b.rotate(to: 2)
                try b.commit([.entry(b.entry("epoch 2"))])
                var bytes = try b.bytes()
                let frame = try SealedFrame.seal(
                    kind: .entryRevision, payload: b.entry("old key, forged commit").encoded(), key: old, vaultID: b.vaultID,
                    compress: true, random: b.random)
                let at = UInt64(bytes.count)
                bytes += frame + CommitChain.commitHeader(keyID: old.id).encoded() + b.random.bytes(CommitChain.bodyByteCount)
                return try b.vector(
                    "damaged",
                    comment:
                        "an epoch-1 record after epoch 2 began, under a commit that does not verify, is not released: older than the floor",
                    body: bytes,
                    issues: [("stale_epoch", at), ("commit_mismatch", UInt64(bytes.count - commitLength))])
            },
            {
                let b = try VectorBuilder("damaged-current-record-unverified-commit")
                try b.commit([.entry(b.entry("verified"))])
                var bytes = try b.bytes()
                let r = b.entry("current key, commit that does not verify")
                let frame = try SealedFrame.seal(
                    kind: .entryRevision, payload: r.encoded(), key: b.keys.writeKey!, vaultID: b.vaultID, compress: true, random: b.random)
                bytes += frame + CommitChain.commitHeader(keyID: b.keys.writeKey!.id).encoded() + b.random.bytes(CommitChain.bodyByteCount)
                b.released.append((frame: -1, kind: RecordKind.entryRevision.rawValue, payload: r.encoded()))
                return try b.vector(
                    "damaged",
                    comment: "a record of the current epoch under a commit whose head does not verify is released, counted unverified",
                    body: bytes,
                    issues: [("commit_mismatch", UInt64(bytes.count - commitLength))])
            },
            {
                let b = try VectorBuilder("damaged-stale-commit-key-of-keyring-in-it")
                let old = b.keys.writeKey!
                try b.rotate(to: 2)
                b.writeWith(old)
                let idx = try b.commit([.entry(b.entry("the floor counts commits before this one only"))], expectReleased: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "a commit under epoch 1 right after the commit holding the epoch-2 keyring is stale: the floor is the highest trusted keyring in the commits before it",
                    issues: [("stale_epoch", b.offset(idx[0]!)), ("stale_epoch", b.offset(idx[0]! + 1))])
            },
        ]
    }

    // MARK: - Attachments: chunk structure

    /// A vector whose attachment's chunks follow `plan`: `(index, isFinal,
    /// range of the padded stream)` for each chunk frame, in file order.
    static func chunkVector(
        _ name: String, comment: String, issues: [(String, String)], content: [UInt8]? = nil,
        plan: @escaping (_ stream: [UInt8]) -> [(UInt32, Bool, Range<Int>)],
        manifestSize: ((Int) -> UInt64)? = nil, blobID: ((BlobID) -> BlobID)? = nil,
        streamEdit: ((inout [UInt8]) -> Void)? = nil, releasedWhole: Bool = false
    ) -> Make {
        {
            let b = try VectorBuilder("damaged-\(name)")
            let data = content ?? b.random.bytes(150_000)
            var s = Edit.stream(data)
            streamEdit?(&s)
            let stream = StreamID(using: b.random)
            var items: [Item] = []
            for (index, isFinal, range) in plan(s) {
                items.append(
                    .raw(
                        try Edit.chunkFrame(
                            stream: stream, index: index, isFinal: isFinal, plaintext: Array(s[range]), key: b.keys.writeKey!,
                            vaultID: b.vaultID, random: b.random), release: nil))
            }
            var id = BlobID(content: data, blobKey: b.blobKey)
            if let blobID { id = blobID(id) }
            let manifest = BlobManifest(
                blob: id, stream: stream, byteCount: manifestSize?(data.count) ?? UInt64(data.count), mediaType: "image/jpeg")
            items.append(.sealed(.blobManifest, manifest.encoded(), compress: false))
            let idx = try b.commit(items)
            let manifestFrame = idx.last!!
            var found: [(String, UInt64)] = []
            for (code, at) in issues {
                if at == "manifest" {
                    found.append((code, b.offset(manifestFrame)))
                } else {
                    found.append((code, b.offset(idx[Int(at)!]!)))
                }
            }
            if releasedWhole { b.blobs.append((manifestFrame, id.bytes, data)) }
            return try b.vector("damaged", comment: comment, issues: found)
        }
    }

    static var chunks: [Make] {
        let c = Limits.chunkByteCount
        return [
            chunkVector("chunk-missing", comment: "chunk 1 of 3 is missing", issues: [("chunk_missing", "manifest")]) { s in
                [(0, false, 0..<c), (2, true, 2 * c..<s.count)]
            },
            chunkVector("chunk-duplicated", comment: "chunk 1 appears twice", issues: [("chunk_duplicate", "manifest")]) { s in
                [(0, false, 0..<c), (1, false, c..<2 * c), (1, false, c..<2 * c), (2, true, 2 * c..<s.count)]
            },
            chunkVector("chunk-reordered", comment: "chunks 0 and 1 in the wrong order", issues: [("chunk_out_of_order", "manifest")]) {
                s in [(1, false, c..<2 * c), (0, false, 0..<c), (2, true, 2 * c..<s.count)]
            },
            chunkVector(
                "chunk-final-missing",
                comment: "no chunk carries the final flag (a truncated stream): 196,607 bytes pad to exactly three full chunks",
                issues: [("chunk_final_missing", "manifest")], content: [UInt8](repeating: 8, count: 3 * c - 1)
            ) { _ in [(0, false, 0..<c), (1, false, c..<2 * c), (2, false, 2 * c..<3 * c)] },
            chunkVector(
                "chunk-final-twice", comment: "chunk 0 and chunk 2 both carry the final flag",
                issues: [("chunk_final_repeated", "manifest")], content: [UInt8](repeating: 9, count: 2 * c + 10)
            ) { s in [(0, true, 0..<c), (1, false, c..<2 * c), (2, true, 2 * c..<s.count)] },
            chunkVector(
                "chunk-empty-final",
                comment:
                    "a full chunk followed by an empty final chunk: a chunk body of 61 bytes breaks the chunk row (at least 62: every chunk holds at least one stream byte), so the stream has no final chunk",
                issues: [("malformed_frame", "1"), ("chunk_final_missing", "manifest")], content: [UInt8](repeating: 3, count: c - 1)
            ) { _ in [(0, false, 0..<c), (1, true, c..<c)] },
            chunkVector(
                "chunk-short-nonfinal",
                comment:
                    "a non-final chunk of 1,000 bytes: every non-final chunk body is 65,597 bytes (checked from frame lengths, before any key)",
                issues: [("chunk_noncanonical", "manifest")], content: [UInt8](repeating: 4, count: 70_000)
            ) { s in [(0, false, 0..<1000), (1, false, 1000..<(1000 + c)), (2, true, (1000 + c)..<s.count)] },
            chunkVector(
                "chunk-oversized",
                comment: "a chunk body of 65,598 bytes (65,537 stream bytes) breaks the chunk row, so the stream lacks its only chunk",
                issues: [("malformed_frame", "0"), ("chunk_missing", "manifest")],
                content: [UInt8](repeating: 2, count: c), plan: { s in [(0, true, 0..<(c + 1))] }),
            chunkVector(
                "blob-size-mismatch",
                comment: "the manifest says 100,000 bytes more than the one chunk holds: ⌈Padmé(N + 1) / 65,536⌉ is 2, not 1",
                issues: [("blob_size_mismatch", "manifest")], content: [UInt8](repeating: 5, count: 2000),
                plan: { s in [(0, true, 0..<s.count)] }, manifestSize: { UInt64($0 + 100_000) }),
            chunkVector(
                "blob-stream-truncated", comment: "the manifest says 150,000 bytes (3 chunks) but the stream ends, final, after 2",
                issues: [("blob_size_mismatch", "manifest")], plan: { _ in [(0, false, 0..<c), (1, true, c..<2 * c)] }),
            chunkVector(
                "blob-id-mismatch", comment: "the content does not hash to the manifest's blob id under the blob key",
                issues: [("blob_id_mismatch", "manifest")], content: [UInt8](repeating: 6, count: 3000),
                plan: { s in [(0, true, 0..<s.count)] },
                blobID: { id in
                    var x = id.bytes
                    x[0] ^= 1
                    return BlobID(unchecked: x)
                }),
            chunkVector(
                "blob-without-chunks", comment: "a manifest whose stream has no chunks at all", issues: [("chunk_missing", "manifest")],
                content: [UInt8](repeating: 7, count: 10)
            ) { _ in [] },
            chunkVector(
                "chunk-index-gap",
                comment: "chunks 0, 1 and then 3 (of a 3-chunk stream): indices must be exactly 0…n'−1, so chunk 2 is missing",
                issues: [("chunk_missing", "manifest")]
            ) { s in [(0, false, 0..<c), (1, false, c..<2 * c), (3, true, 2 * c..<s.count)] },
            {
                let b = try VectorBuilder("damaged-two-manifests-one-stream")
                let data = b.random.bytes(100_000)
                try b.commit([.blob(data, mediaType: "image/png")])
                let m = try BlobManifest(decoding: b.released.last!.payload)
                var wrong = m
                wrong.byteCount += 1
                let second = try b.commit([.sealed(.blobManifest, wrong.encoded(), compress: false)])
                return try b.vector(
                    "damaged",
                    comment:
                        "a second manifest names the same stream with a size one byte larger: the chunk count still fits, but S[N] is not the 0x80 marker; every released manifest is checked, only the second is reported",
                    issues: [("bad_padding", b.offset(second[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-two-manifests-one-stream-size")
                let data = b.random.bytes(100_000)
                try b.commit([.blob(data, mediaType: "image/png")])
                let m = try BlobManifest(decoding: b.released.last!.payload)
                var wrong = m
                wrong.byteCount = 300_000
                let second = try b.commit([.sealed(.blobManifest, wrong.encoded(), compress: false)])
                return try b.vector(
                    "damaged",
                    comment:
                        "a second manifest names the same stream with a size that needs 5 chunks: reported at the second manifest only",
                    issues: [("blob_size_mismatch", b.offset(second[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-stale-chunk-ignored")
                let data = b.random.bytes(100_000)
                let old = b.keys.writeKey!
                try b.commit([.blob(data, mediaType: "image/png")])
                let stream = try BlobManifest(decoding: b.released.last!.payload).stream
                try b.rotate(to: 2)
                b.writeWith(old)
                // A removed device, which holds epoch 1, adds a duplicate chunk 0.
                let forged = try Edit.chunkFrame(
                    stream: stream, index: 0, isFinal: false, plaintext: b.random.bytes(c), key: old, vaultID: b.vaultID, random: b.random)
                let stale = try b.commit([.raw(forged, release: nil)])
                return try b.vector(
                    "damaged",
                    comment:
                        "a stale chunk (an epoch-1 chunk in a stale commit after epoch 2 began) neither joins nor breaks the stream: the attachment still reads whole; only the commit is reported",
                    issues: [("stale_epoch", b.offset(stale[0]! + 1))])
            },
            {
                // Pins format.md §7.4 (Python README item 10): a chunk's
                // candidate keys are limited as release step 2 limits them,
                // so in an unverified commit an epoch-1 chunk after epoch 2
                // began is stale and in no stream.
                let b = try VectorBuilder("damaged-chunk-below-floor-in-unverified-commit")
                let old = b.keys.writeKey!
                try b.rotate(to: 2)
                let current = b.keys.writeKey!
                let data = b.random.bytes(1000)
                let stream = StreamID(using: b.random)
                let chunk = try Edit.chunkFrame(
                    stream: stream, index: 0, isFinal: true, plaintext: Edit.stream(data), key: old, vaultID: b.vaultID, random: b.random)
                let manifest = BlobManifest(blob: BlobID(content: data, blobKey: b.blobKey), stream: stream, byteCount: 1000)
                var plain = manifest.encoded()
                Padding.pad(&plain)
                let sealed = try Edit.sealedFrame(
                    kind: .blobManifest, flags: FrameHeader.sealedFlag, key: current, vaultID: b.vaultID, plaintext: plain, random: b.random
                )
                var bytes = try b.bytes()
                let manifestAt = UInt64(bytes.count + chunk.count)
                let commitAt = manifestAt + UInt64(sealed.count)
                // A junk commit under the current key's id: its head does not verify.
                bytes += chunk + sealed + CommitChain.commitHeader(keyID: current.id).encoded() + b.random.bytes(CommitChain.bodyByteCount)
                b.released.append((frame: -1, kind: RecordKind.blobManifest.rawValue, payload: manifest.encoded()))
                return try b.vector(
                    "damaged",
                    comment:
                        "after epoch 2 began, a chunk sealed under epoch 1 and its manifest under epoch 2, in a commit whose head does not verify: the manifest is released unverified, but the chunk's only candidate key is below the floor, so it is stale and in no stream (format.md §7.4, §9.3 release step 2; a chunk is not reported stale_epoch) and the attachment does not read",
                    body: bytes,
                    issues: [("chunk_missing", manifestAt), ("commit_mismatch", commitAt)])
            },
            {
                let b = try VectorBuilder("damaged-chunk-ciphertext-flip")
                let idx = try b.commit([.blob(b.random.bytes(150_000), mediaType: "video/mp4"), .entry(b.entry("with a video"))])
                var bytes = try b.bytes()
                let manifest = idx[0]!
                let chunk1 = b.frame(manifest - 2)
                Edit.flipBit(&bytes, byte: Int(chunk1.location.offset) + 200, bit: 0)
                b.loseBlob(manifest: manifest)
                return try b.vector(
                    "damaged",
                    comment:
                        "a flipped bit in the ciphertext of chunk 1 of 3: that chunk (so the attachment) fails; the chain covers a chunk's tag, not its ciphertext, so the commit verifies",
                    body: bytes,
                    issues: [("authentication_failed", chunk1.location.offset)])
            },
            {
                // Pins format.md §7.4: the reader stops at a stream's first
                // chunk that does not open (Python README item 11).
                let b = try VectorBuilder("damaged-chunk-two-fail-first-reported")
                let idx = try b.commit([.blob(b.random.bytes(150_000), mediaType: "video/mp4"), .entry(b.entry("with a video"))])
                var bytes = try b.bytes()
                let manifest = idx[0]!
                let chunk0 = b.frame(manifest - 3)
                let chunk1 = b.frame(manifest - 2)
                Edit.flipBit(&bytes, byte: Int(chunk0.location.offset) + 200, bit: 0)
                Edit.flipBit(&bytes, byte: Int(chunk1.location.offset) + 200, bit: 0)
                b.loseBlob(manifest: manifest)
                return try b.vector(
                    "damaged",
                    comment:
                        "a flipped bit in the ciphertext of chunks 0 and 1 of 3: the reader stops at the stream's first chunk that does not open, so only chunk 0 is reported; chunk 1 is neither opened nor reported (format.md §7.4)",
                    body: bytes,
                    issues: [("authentication_failed", chunk0.location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-chunk-tag-flip")
                let idx = try b.commit([.blob(b.random.bytes(150_000), mediaType: "video/mp4"), .entry(b.entry("with a video"))])
                var bytes = try b.bytes()
                let manifest = idx[0]!
                let chunk = b.frame(manifest - 1)
                Edit.flipBit(&bytes, byte: Int(chunk.end) - 5, bit: 6)
                b.loseBlob(manifest: manifest)
                return try b.vector(
                    "damaged",
                    comment:
                        "a flipped bit in the tag of the last chunk: the chunk fails, and the tag is the chunk's summary in the chain, so the commit does not verify",
                    body: bytes,
                    issues: [
                        ("authentication_failed", chunk.location.offset), ("commit_mismatch", b.commitFrame(of: manifest).location.offset),
                    ])
            },
            {
                let b = try VectorBuilder("damaged-chunk-compressed-flag")
                let data = b.random.bytes(1000)
                let stream = StreamID(using: b.random)
                var frame = try Edit.chunkFrame(
                    stream: stream, index: 0, isFinal: true, plaintext: Edit.stream(data), key: b.keys.writeKey!, vaultID: b.vaultID,
                    random: b.random)
                frame[1] = 0x03
                Edit.fixCheck(&frame, frameAt: 0)
                let manifest = BlobManifest(blob: BlobID(content: data, blobKey: b.blobKey), stream: stream, byteCount: 1000)
                let idx = try b.commit([.raw(frame, release: nil), .sealed(.blobManifest, manifest.encoded(), compress: false)])
                return try b.vector(
                    "damaged",
                    comment:
                        "attachment chunks are never compressed: a chunk frame with the compressed flag is malformed, so its stream lacks chunk 0",
                    issues: [("malformed_frame", b.offset(idx[0]!)), ("chunk_missing", b.offset(idx[1]!))])
            },
            {
                let b = try VectorBuilder("damaged-chunk-final-byte-invalid")
                let data = b.random.bytes(1000)
                let stream = StreamID(using: b.random)
                var frame = try Edit.chunkFrame(
                    stream: stream, index: 0, isFinal: true, plaintext: Edit.stream(data), key: b.keys.writeKey!, vaultID: b.vaultID,
                    random: b.random)
                frame[16 + 24 + 20] = 2
                let manifest = BlobManifest(blob: BlobID(content: data, blobKey: b.blobKey), stream: stream, byteCount: 1000)
                let idx = try b.commit([.raw(frame, release: nil), .sealed(.blobManifest, manifest.encoded(), compress: false)])
                return try b.vector(
                    "damaged",
                    comment: "a chunk header whose final byte is 2 (only 0 or 1 are allowed) is malformed, so its stream lacks chunk 0",
                    issues: [("malformed_frame", b.offset(idx[0]!)), ("chunk_missing", b.offset(idx[1]!))])
            },
            {
                let b = try VectorBuilder("damaged-chunk-unknown-key")
                let data = b.random.bytes(1000)
                let stream = StreamID(using: b.random)
                let stranger = try b.freshKey(9)
                let frame = try Edit.chunkFrame(
                    stream: stream, index: 0, isFinal: true, plaintext: Edit.stream(data), key: stranger, vaultID: b.vaultID,
                    random: b.random)
                let manifest = BlobManifest(blob: BlobID(content: data, blobKey: b.blobKey), stream: stream, byteCount: 1000)
                let idx = try b.commit([.raw(frame, release: nil), .sealed(.blobManifest, manifest.encoded(), compress: false)])
                return try b.vector(
                    "damaged",
                    comment:
                        "a chunk sealed under a key the reader does not hold: the stream's structure is fine, the chunk is reported at the chunk",
                    issues: [("unknown_key", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-chunk-from-other-stream")
                let data = b.random.bytes(1000)
                let stream = StreamID(using: b.random)
                let other = StreamID(using: b.random)
                var frame = try Edit.chunkFrame(
                    stream: other, index: 0, isFinal: true, plaintext: Edit.stream(data), key: b.keys.writeKey!, vaultID: b.vaultID,
                    random: b.random)
                for (i, v) in stream.bytes.enumerated() { frame[16 + 24 + i] = v }
                let manifest = BlobManifest(blob: BlobID(content: data, blobKey: b.blobKey), stream: stream, byteCount: 1000)
                let idx = try b.commit([.raw(frame, release: nil), .sealed(.blobManifest, manifest.encoded(), compress: false)])
                return try b.vector(
                    "damaged",
                    comment:
                        "a chunk sealed for another stream id and relabelled: the chunk header is associated data, so it does not authenticate",
                    issues: [("authentication_failed", b.offset(idx[0]!))])
            },
        ]
    }

    // MARK: - Attachments: the padded stream

    static var streams: [Make] {
        let c = Limits.chunkByteCount
        return [
            chunkVector(
                "blob-padding-nonzero", comment: "the padded stream has a non-zero byte after the 0x80 marker",
                issues: [("bad_padding", "manifest")], content: [UInt8](repeating: 0x11, count: 3000),
                plan: { s in [(0, true, 0..<s.count)] }, streamEdit: { s in s[s.count - 1] = 1 }),
            chunkVector(
                "blob-padding-no-marker", comment: "the padded stream has no 0x80 after the content", issues: [("bad_padding", "manifest")],
                content: [UInt8](repeating: 0x12, count: 3000),
                plan: { s in [(0, true, 0..<s.count)] }, streamEdit: { s in s[3000] = 0 }),
            chunkVector(
                "blob-stream-too-long",
                comment:
                    "the final chunk holds 16 bytes more than Padmé(N + 1): same chunk count, but the stream is not the canonical length",
                issues: [("bad_padding", "manifest")], content: [UInt8](repeating: 0x13, count: 3000),
                plan: { s in [(0, true, 0..<s.count)] }, streamEdit: { s in s += [UInt8](repeating: 0, count: 16) }),
            chunkVector(
                "blob-stream-too-short", comment: "the final chunk stops 16 bytes before Padmé(N + 1)",
                issues: [("bad_padding", "manifest")], content: [UInt8](repeating: 0x14, count: 3000),
                plan: { s in [(0, true, 0..<s.count)] }, streamEdit: { s in s.removeLast(16) }),
            chunkVector(
                "blob-unpadded-stream",
                comment: "a stream that is the bare content (version 1 padded the final chunk only; version 2 pads the whole stream)",
                issues: [("bad_padding", "manifest")], content: [UInt8](repeating: 0x15, count: 3000),
                plan: { s in [(0, true, 0..<3000)] }),
            chunkVector(
                "blob-stream-shorter-than-size",
                comment:
                    "3,000 bytes in one chunk under a manifest of 65,000 bytes: one chunk either way (check 6 passes), but the stream ends before byte N (check 7)",
                issues: [("bad_padding", "manifest")], content: [UInt8](repeating: 0x18, count: 3000),
                plan: { s in [(0, true, 0..<s.count)] }, manifestSize: { _ in 65_000 }),
            chunkVector(
                "blob-manifest-size-one-short",
                comment: "the manifest says one byte less than the content: then S[N] is content, not the marker",
                issues: [("bad_padding", "manifest")], content: [UInt8](repeating: 0x16, count: 3000),
                plan: { s in [(0, true, 0..<s.count)] }, manifestSize: { UInt64($0 - 1) }),
            chunkVector(
                "blob-padding-chunk-only",
                comment:
                    "70,000 bytes of content fill chunk 0 and part of chunk 1; a forged chunk 1 of zeros (no marker) breaks the padding",
                issues: [("bad_padding", "manifest")], content: [UInt8](repeating: 0x17, count: 70_000),
                plan: { s in [(0, false, 0..<c), (1, true, c..<s.count)] }, streamEdit: { s in for i in 70_000..<s.count { s[i] = 0 } }),
            {
                let b = try VectorBuilder("success-attachment-padding-only-chunk")
                let content = b.random.bytes(c)
                try b.commit([.blob(content, mediaType: "application/octet-stream")])
                return try b.vector(
                    "success",
                    comment:
                        "65,536 bytes of content: Padmé(65,537) = 67,584, so chunk 0 is all content and chunk 1 holds only the 0x80 marker and 2,047 zeros"
                )
            },
            {
                let b = try VectorBuilder("success-attachment-two-manifests-same-stream")
                let data = b.random.bytes(20_000)
                try b.commit([.blob(data, mediaType: "image/png")])
                let m = try BlobManifest(decoding: b.released.last!.payload)
                var again = m
                again.mediaType = "image/x-png"
                let idx = try b.commit([.sealed(.blobManifest, again.encoded(), compress: false)])
                _ = idx
                return try b.vector(
                    "success",
                    comment:
                        "a second, correct manifest for the same stream: both are released; the attachment is counted once, at the first manifest that reads whole"
                )
            },
        ]
    }
}

/// `count` bytes of `value`, least significant first (zstd's byte order).
private func le(_ value: UInt64, _ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
}

/// One last zstd compressed block (RFC 8878 §3.1.1.3) holding `literals` as
/// raw literals (a 2-byte header: 32 to 4095 bytes) and no sequences.
private func zstdCompressedBlockOfRawLiterals(_ literals: [UInt8]) -> [UInt8] {
    let body = le(UInt64(literals.count) << 4 | 0b0100, 2) + literals + [0x00]
    return le(UInt64(body.count) << 3 | 2 << 1 | 1, 3) + body
}
