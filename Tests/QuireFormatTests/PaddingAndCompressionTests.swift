@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import Testing

@Suite struct PaddingTests {
    // Computed from the definition: E = ⌊log₂ L⌋, S = ⌊log₂ E⌋ + 1,
    // z = E − S, round L up to a multiple of 2^z.
    static let known: [(Int, Int)] = [
        (0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (7, 7), (8, 8), (9, 10), (10, 10), (11, 12), (15, 16),
        (16, 16), (17, 18), (31, 32), (33, 36), (100, 104), (129, 144), (1000, 1024), (1025, 1088), (4097, 4352),
        (65536, 65536), (65537, 67584), (65538, 67584), (100_000, 100_352), (1_000_000, 1_015_808),
        (16_777_216, 16_777_216), (16_777_217, 17_301_504),
    ]

    @Test(arguments: known)
    func padmeKnownValues(length: Int, expected: Int) {
        #expect(Padding.padme(length) == expected)
        #expect(referencePadme(length) == expected)
    }

    @Test func padmeMatchesReferenceAndProperties() {
        var previous = 0
        for length in 0...70_000 {
            let p = Padding.padme(length)
            #expect(p == referencePadme(length), "L = \(length)")
            #expect(p >= length)
            #expect(p >= previous)
            #expect(Padding.padme(p) == p)
            previous = p
        }
        for shift in 17..<50 {
            for delta in [-1, 0, 1, 12345] {
                let length = (1 << shift) + delta
                #expect(Padding.padme(length) == referencePadme(length), "L = \(length)")
            }
        }
    }

    @Test func overheadAtMostTwelvePercentFrom16() {
        var worst = 0.0
        for length in 16...200_000 {
            let over = Double(Padding.padme(length) - length) / Double(length)
            worst = max(worst, over)
            #expect(over <= 0.12, "L = \(length)")
        }
        // The worst case (L = 129 → 144) is about 11.6 %.
        #expect(worst > 0.11)
        for shift in 18..<40 {
            let length = (1 << shift) + 1
            #expect(Double(Padding.padme(length) - length) / Double(length) <= 0.12)
        }
    }

    @Test func paddedCountIsPadmeOfPayloadPlusMarker() {
        for n in [0, 1, 8, 9, 99, 1023, 65536] {
            #expect(Padding.paddedCount(forPayload: n) == Padding.padme(n + 1))
        }
    }

    @Test func padThenPayloadCountRoundTrip() {
        let random = SeededRandom(label: "padding")
        var lengths = Array(0...2100)
        lengths += [4095, 4096, 4097, 65535, 65536, 65537, 100_000]
        for n in lengths {
            // Payloads that end in 0x80 or 0x00 must not confuse the reader.
            var payload = random.bytes(n)
            if n > 0 { payload[n - 1] = [0x00, 0x80, 0x01][n % 3] }
            var padded = payload
            Padding.pad(&padded)
            #expect(padded.count == Padding.paddedCount(forPayload: n))
            #expect(Array(padded[0..<n]) == payload)
            #expect(padded[n] == 0x80)
            #expect(padded[(n + 1)...].allSatisfy { $0 == 0 })
            #expect(padded.withUnsafeBytes { Padding.payloadCount(in: $0) } == n, "n = \(n)")
        }
    }

    @Test func payloadCountRejectsNonCanonicalPadding() {
        func count(_ b: [UInt8]) -> Int? { b.withUnsafeBytes { Padding.payloadCount(in: $0) } }
        // Missing marker.
        #expect(count([]) == nil)
        #expect(count([0, 0, 0, 0]) == nil)
        #expect(count([1, 2, 3, 4, 5, 0]) == nil)
        // Non-zero after the marker.
        #expect(count([1, 2, 3, 4, 0x80, 0x01]) == nil)
        var good: [UInt8] = [7, 7, 7, 7, 7, 7, 7, 7, 7]  // 9 bytes → padme(10) = 10
        Padding.pad(&good)
        #expect(good.count == 10)
        #expect(count(good) == 9)
        var noisy = good
        noisy[9] = 0x01
        #expect(count(noisy) == nil)
        // Wrong marker value.
        #expect(count([1, 2, 0x81]) == nil)
        #expect(count([1, 2, 0x40, 0]) == nil)
        // Wrong padded length: one zero too many, one too few.
        #expect(count(good + [0]) == nil)
        #expect(count([0x80, 0, 0, 0]) == nil)
        var seventeen = [UInt8](repeating: 5, count: 17)  // padme(18) = 18
        Padding.pad(&seventeen)
        #expect(seventeen.count == 18)
        var short = [UInt8](repeating: 5, count: 16) + [0x80]  // 16 bytes need padme(17) = 18
        #expect(count(short) == nil)
        short.append(0)
        #expect(count(short) == 16)
        // A marker alone is the empty payload.
        #expect(count([0x80]) == 0)
        #expect(count([0x80, 0]) == nil)
    }

    // The padded stream of an attachment of N bytes is Padmé(N + 1) bytes
    // (Spec/format.md §7.1); examples from the spec and by hand.
    static let streams: [(UInt64, UInt64, UInt64)] = [
        (0, 1, 1), (1, 2, 1), (65535, 65536, 1), (65536, 67584, 2), (65537, 67584, 2), (70000, 71680, 2), (196_608, 200_704, 4),
        (4_259_830, 4_325_376, 66), (5 << 20, 5_373_952, 82), (1 << 40, (1 << 40) + (1 << 34), 17_039_360),
    ]

    @Test(arguments: streams)
    func streamLengthAndChunkCount(content: UInt64, stream: UInt64, chunks: UInt64) {
        #expect(Padding.streamByteCount(contentByteCount: content) == stream)
        #expect(Padding.chunkCount(contentByteCount: content) == chunks)
        if content < 1 << 30 { #expect(UInt64(referencePadme(Int(content) + 1)) == stream) }
    }

    @Test func sixtyFourBitPadmeMatchesTheReference() {
        for length in 0...70_000 {
            #expect(Padding.padme(UInt64(length)) == UInt64(referencePadme(length)), "L = \(length)")
        }
        for shift in 17..<62 {
            for delta in [-1, 0, 1, 12345] {
                let length = (1 << shift) + delta
                #expect(Padding.padme(UInt64(length)) == UInt64(referencePadme(length)), "L = \(length)")
            }
        }
    }

    @Test func streamOverheadAtMostOneThirtySecondFrom64KiB() {
        // Spec/format.md §7.1 and §15: 3.125 % (1/32) at most from 64 KiB up;
        // the bound is reached at N = 2^k for 16 ≤ k < 32 (65,536 → 67,584).
        var n: UInt64 = 65536
        while n < 1 << 40 {
            for m in [n, n + 1, n + n / 3, n * 2 - 1] {
                let over = Padding.streamByteCount(contentByteCount: m) - m
                #expect(over * 32 <= m, "N = \(m)")
            }
            n *= 2
        }
        #expect(Padding.streamByteCount(contentByteCount: 65536) - 65536 == 65536 / 32)
        #expect(Padding.streamByteCount(contentByteCount: 1 << 32) - (1 << 32) == (1 << 32) / 64)
    }

    @Test func payloadCountOnASliceOfALargerBuffer() {
        var padded: [UInt8] = counting(100)
        Padding.pad(&padded)
        let framed = [0xaa, 0xbb] + padded + [0xcc]
        let n = framed.withUnsafeBytes { raw in
            Padding.payloadCount(in: UnsafeRawBufferPointer(rebasing: raw[2..<(2 + padded.count)]))
        }
        #expect(n == 100)
    }
}

@Suite struct CompressionTests {
    static func text(_ count: Int) -> [UInt8] {
        let line = Array("Up betimes, and to my office, where all the morning. ".utf8)
        return (0..<count).map { line[$0 % line.count] }
    }

    static func decompress(_ input: [UInt8], limit: Int = Limits.maxRecordByteCount) -> Result<[UInt8], Compression.Failure> {
        Result { () throws(Compression.Failure) -> [UInt8] in try Compression.decompress(input, limit: limit) }
    }

    @Test(arguments: [0, 1, 100, 4096, 100_000, 1_000_000])
    func roundTrip(size: Int) throws {
        let input = Self.text(size)
        let packed = Compression.compress(input)
        #expect(Array(packed[0..<4]) == [0x28, 0xb5, 0x2f, 0xfd])  // zstd magic
        if size >= 4096 { #expect(packed.count < size / 10) }
        let size2 = try packed.withUnsafeBytes { raw throws(Compression.Failure) -> Int in
            try Compression.declaredSize(raw, limit: Limits.maxRecordByteCount)
        }
        #expect(size2 == size)
        #expect(try Compression.decompress(packed, limit: Limits.maxRecordByteCount) == input)
    }

    @Test func randomRoundTripAndReusedContext() throws {
        let random = SeededRandom(label: "zstd")
        let context = DecompressionContext()
        for n in [1, 17, 5000, 70_000] {
            let input = random.bytes(n)
            let packed = Compression.compress(input)
            var out = [UInt8](repeating: 0, count: n)
            try packed.withUnsafeBytes { i in
                try out.withUnsafeMutableBytes { o in try Compression.decompress(i, into: o, context: context) }
            }
            #expect(out == input)
        }
    }

    @Test func declaredSizeOverLimitIsTooLarge() throws {
        let packed = Compression.compress(Self.text(1000))
        #expect(Self.decompress(packed, limit: 999) == .failure(.tooLarge(declared: 1000, limit: 999)))
        #expect(Self.decompress(packed, limit: 1000) == .success(Self.text(1000)))
    }

    /// Thirteenth review R13-3: a frame that declares 100 bytes with a
    /// 32 MiB window is refused from its header (`Spec/format.md §6.1` step
    /// 3); the one-shot decoder would have decoded it.
    @Test func windowOverTheLimitIsRejectedFromTheHeader() {
        // Not single-segment, an 8-byte content size of 100; window
        // descriptor 0x78 (2^25 bytes); one last raw block of 100 bytes.
        var frame: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0xc0, 0x78]
        frame += [100, 0, 0, 0, 0, 0, 0, 0]
        frame += [0x21, 0x03, 0x00] + [UInt8](repeating: 0x41, count: 100)
        #expect(
            Self.decompress(frame)
                == .failure(.invalid("the zstd frame's window of 33554432 bytes is over \(Limits.maxRecordByteCount)")))
    }

    /// Fourteenth review R14-5: every block against Block_Maximum_Size =
    /// min(window, 128 KiB) (`Spec/format.md §6.1` step 4). libzstd decodes
    /// a raw or RLE block over the window, and reports literals over it as
    /// corruption.
    @Test func blocksOverTheBlockMaximumAreRejected() {
        // Not single-segment, a 4-byte content size; window descriptor 0x00 (1 KiB).
        func frame(_ size: Int, _ blocks: [UInt8]) -> [UInt8] {
            [0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x00] + (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) } + blocks
        }
        // One last raw block of 1024 bytes: at the maximum, accepted.
        let atMaximum = frame(1024, [0x01, 0x20, 0x00] + [UInt8](repeating: 0x41, count: 1024))
        #expect(Self.decompress(atMaximum) == .success([UInt8](repeating: 0x41, count: 1024)))
        // One last raw block of 1025 bytes, and one last RLE block of 1025.
        let raw = frame(1025, [0x09, 0x20, 0x00] + [UInt8](repeating: 0x41, count: 1025))
        #expect(Self.decompress(raw) == .failure(.invalid("a zstd block of 1025 bytes is over the block maximum of 1024")))
        let rle = frame(1025, [0x0b, 0x20, 0x00, 0x41])
        #expect(Self.decompress(rle) == .failure(.invalid("a zstd block of 1025 bytes is over the block maximum of 1024")))
        // One last compressed block of 4 bytes: RLE literals regenerating
        // 2000 bytes (header 0x7d05), no sequences.
        let literals = frame(2000, [0x25, 0x00, 0x00, 0x05, 0x7d, 0x41, 0x00])
        #expect(Self.decompress(literals) == .failure(.sizeMismatch(declared: 2000, actual: 2001)))
        // A single-segment frame of 5 bytes (so a 5-byte window) with a raw block of 6.
        let single: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x05, 0x31, 0x00, 0x00] + Array("hello!".utf8)
        #expect(Self.decompress(single) == .failure(.invalid("a zstd block of 6 bytes is over the block maximum of 5")))
    }

    @Test func hugeDeclaredSizeIsRejectedBeforeDecompressing() {
        // Single-segment frame with an 8-byte content size of 2^40 and a raw
        // 5-byte block: the size check must come first.
        var frame: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0xe0]
        frame += [0, 0, 0, 0, 0, 1, 0, 0]  // 2^40, little-endian
        frame += [0x29, 0x00, 0x00] + Array("hello".utf8)
        #expect(Self.decompress(frame) == .failure(.tooLarge(declared: 1 << 40, limit: UInt64(Limits.maxRecordByteCount))))
    }

    @Test func handBuiltFramesDecode() {
        // A single-segment frame declaring 5 bytes, holding one raw block.
        let ok: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x05, 0x29, 0x00, 0x00] + Array("hello".utf8)
        #expect(Self.decompress(ok) == .success(Array("hello".utf8)))
    }

    @Test func frameWithoutContentSizeIsInvalid() {
        // Frame header descriptor 0x00 (no content size), window descriptor,
        // one raw last block "hello": a valid zstd frame that does not declare
        // its size.
        let frame: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0x29, 0x00, 0x00] + Array("hello".utf8)
        #expect(Self.decompress(frame) == .failure(.invalid("the zstd frame does not declare its size")))
    }

    @Test func notAFrameIsInvalid() {
        #expect(Self.decompress([]) == .failure(.invalid("not a zstd frame")))
        #expect(Self.decompress(Array("hello world".utf8)) == .failure(.invalid("not a zstd frame")))
        var packed = Compression.compress(Self.text(100))
        packed[0] ^= 1
        #expect(Self.decompress(packed) == .failure(.invalid("not a zstd frame")))
    }

    @Test func trailingBytesAreInvalid() {
        let packed = Compression.compress(Self.text(500))
        #expect(Self.decompress(packed + [0]) == .failure(.invalid("1 bytes follow the zstd frame")))
        #expect(Self.decompress(packed + packed) == .failure(.invalid("\(packed.count) bytes follow the zstd frame")))
    }

    @Test func truncatedFrameIsInvalid() {
        let packed = Compression.compress(Self.text(500))
        #expect(Self.decompress(Array(packed.dropLast())) == .failure(.invalid("the zstd frame is truncated or malformed")))
        #expect(Self.decompress(Array(packed.prefix(packed.count / 2))) == .failure(.invalid("the zstd frame is truncated or malformed")))
    }

    @Test func declaredSizeDisagreeingWithContentFails() {
        // Declares 10 bytes but holds 5; declares 3 but holds 5.
        for declared: UInt8 in [10, 3] {
            let frame: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x20, declared, 0x29, 0x00, 0x00] + Array("hello".utf8)
            let result = Self.decompress(frame)
            switch result {
            case .failure(.invalid(let reason)):
                #expect(!reason.isEmpty)
            case .failure(.sizeMismatch(let d, let actual)):
                #expect(d == UInt64(declared))
                #expect(actual != d)
            default:
                Issue.record("declared \(declared): expected invalid or sizeMismatch, got \(result)")
            }
        }
    }

    @Test func corruptedBlockIsDetectedOrChangesNothingSilently() {
        // Corrupting the compressed block of a highly compressible input:
        // the decoder must fail (never return the wrong size).
        let input = Self.text(10_000)
        let packed = Compression.compress(input)
        var failures = 0
        for i in stride(from: 6, to: packed.count, by: 1) {
            var bad = packed
            bad[i] ^= 0xff
            switch Self.decompress(bad) {
            case .success(let out):
                #expect(out.count == input.count)
            case .failure(.invalid), .failure(.sizeMismatch):
                failures += 1
            case .failure(let other):
                Issue.record("unexpected \(other) at byte \(i)")
            }
        }
        #expect(failures > 0)
    }
}
