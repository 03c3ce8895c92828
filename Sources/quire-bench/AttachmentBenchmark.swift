// Benchmark 3: ingest and extract a 1 GiB attachment (64 MiB with --quick),
// each in its own child process so that its peak RSS is its own, compared
// with raw XChaCha20-Poly1305 over the same bytes in 64 KiB chunks, in memory
// and in a pipeline with the same file I/O. Chunks are never compressed, and
// format 2 pads the whole stream (Padmé), so the baselines do the same.
//
// Peak RSS on Linux: a child's getrusage(RUSAGE_SELF).ru_maxrss starts from
// the parent's peak at the time of the spawn (the kernel carries the old
// address space's high-water mark across exec). The children therefore run
// before the parent allocates anything large, and each child also reports
// VmHWM from /proc/self/status, the high-water mark of its own address
// space only.

import CSodium
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

#if canImport(Glibc)
    import Glibc
#endif

enum AttachmentBenchmark {
    static let chunk = Limits.chunkByteCount

    static func run(_ shared: SharedFixtures) throws -> Section {
        let size = shared.quick ? 64 << 20 : 1 << 30
        let dir = shared.workspace
        let source = dir.file("attachment.bin")
        let vaultPath = dir.file("attachment.quire")
        let keyFile = dir.file("attachment.key")
        defer {
            for p in [source, vaultPath, keyFile] { try? FileSystem.remove(p) }
        }

        // Incompressible content, written in 1 MiB pieces (the parent stays small).
        print("  writing \(sizeName(size)) of seeded random bytes…")
        let random = SeededRandom(label: "quire-bench attachment")
        do {
            let out = try SystemFile(path: source, mode: .createExclusive(permissions: 0o600))
            var piece = [UInt8](repeating: 0, count: 1 << 20)
            var offset: UInt64 = 0
            while offset < UInt64(size) {
                piece.withUnsafeMutableBytes { random.fill($0) }
                try out.write(piece, at: offset)
                offset += UInt64(piece.count)
            }
        }
        let (_, recovery) = try Fixtures.create(at: vaultPath)
        do {
            let f = try SystemFile(path: keyFile, mode: .createExclusive(permissions: 0o600))
            try f.write(Array(recovery.code().utf8), at: 0)
        }
        let sizeBefore = try fileSize(vaultPath)

        // Child processes: an idle open (the floor), ingest (twice, into two
        // fresh vaults: a second ingest into the same vault would only find
        // the content already there), extract (twice).
        print("  child: open only…")
        let idle = try runChild(["open", vaultPath, keyFile])
        print("  child: ingest…")
        let ingest = try runChild(["ingest", vaultPath, keyFile, source])
        let vaultSize = try fileSize(vaultPath)
        guard let blob = ingest["blob"] else { throw BenchError("ingest child reported no blob id") }
        print("  child: extract…")
        let extract = try runChild(["extract", vaultPath, keyFile, blob])
        guard try extract.number("bytes") == UInt64(size), try ingest.number("bytes") == UInt64(size) else {
            throw BenchError("attachment size mismatch: ingest \(ingest["bytes"] ?? "?"), extract \(extract["bytes"] ?? "?")")
        }
        print("  child: ingest again (into a second vault)…")
        let ingest2: [String: String]
        do {
            let path2 = dir.file("attachment-2.quire")
            let key2 = dir.file("attachment-2.key")
            defer { for p in [path2, key2] { try? FileSystem.remove(p) } }
            let (_, recovery2) = try Fixtures.create(at: path2)
            let f = try SystemFile(path: key2, mode: .createExclusive(permissions: 0o600))
            try f.write(Array(recovery2.code().utf8), at: 0)
            ingest2 = try runChild(["ingest", path2, key2, source])
        }
        print("  child: extract again…")
        let extract2 = try runChild(["extract", vaultPath, keyFile, blob])

        // The same pipeline built from the raw primitives, with the same I/O:
        // read the file in 64 KiB pieces, pad, AEAD, write in 4 MiB
        // pieces; and back (pread each record, AEAD, write to
        // /dev/null). Children too, so both sides run under the same
        // conditions; each twice, the faster counts.
        print("  child: raw pipeline, ingest and extract (twice)…")
        let rawFile = dir.file("raw-pipeline.bin")
        defer { try? FileSystem.remove(rawFile) }
        var rawIngestNs = UInt64.max
        var rawExtractNs = UInt64.max
        for _ in 0..<2 {
            try? FileSystem.remove(rawFile)
            rawIngestNs = min(rawIngestNs, try runChild(["raw-ingest", source, rawFile]).number("ns"))
            rawExtractNs = min(rawExtractNs, try runChild(["raw-extract", rawFile, rawFile]).number("ns"))
        }

        // Raw primitives over the same bytes, in memory; each twice, the
        // faster pass counts.
        print("  raw primitives over the same bytes in memory (best of 2)…")
        let content = try readWholeFile(source)
        let raw = RawChunks(content: content)
        var encrypt = UInt64.max
        var decrypt = UInt64.max
        var hash = UInt64.max
        var write = UInt64.max
        for _ in 0..<2 {
            encrypt = min(encrypt, raw.encrypt())
            decrypt = min(decrypt, raw.decrypt())
            hash = min(hash, try raw.keyedHash())
            write = min(write, try raw.writeNewFile(dir.file("raw-write.bin")))
        }

        let bytes = UInt64(size)
        let streamBytes = Padding.streamByteCount(contentByteCount: bytes)
        let ingestNs = Double(min(try ingest.number("ns"), try ingest2.number("ns")))
        let extractNs = Double(min(try extract.number("ns"), try extract2.number("ns")))
        let ingestRate = throughput(bytes: bytes, ns: ingestNs)
        let extractRate = throughput(bytes: bytes, ns: extractNs)
        let encRate = throughput(bytes: bytes, ns: Double(encrypt))
        let decRate = throughput(bytes: bytes, ns: Double(decrypt))
        let hashRate = throughput(bytes: bytes, ns: Double(hash))
        let encHashRate = throughput(bytes: bytes, ns: Double(encrypt + hash))
        let decHashRate = throughput(bytes: bytes, ns: Double(decrypt + hash))
        let writeRate = throughput(bytes: bytes, ns: Double(write))
        let serialRate = throughput(bytes: bytes, ns: Double(encrypt + hash + write))
        let rawIngestRate = throughput(bytes: bytes, ns: Double(rawIngestNs))
        let rawExtractRate = throughput(bytes: bytes, ns: Double(rawExtractNs))

        var s = Section(name: "attachment", title: "3. Ingest and extract a \(sizeName(size)) attachment")
        s.explanation = [
            "A \(sizeName(size)) file of incompressible bytes (SeededRandom) is written under /tmp. *Ingest* is "
                + "`vault.commit { tx in try tx.storeAttachment(from: FileByteSource(path:), mediaType:) }` "
                + "(read the file, seal 64 KiB chunks and append them while the blob id, a tree of keyed BLAKE2b-256 with a leaf per chunk, is computed on both cores; "
                + "`synchronous: false`). *Extract* is `vault.openAttachment(blob).read(into:)` with a reused 1 MiB buffer, "
                + "written to /dev/null (open each chunk, check the size and the blob id at the end). Each runs in its own "
                + "child process (this binary re-executed with a hidden `--child` flag) that reports its own time and peak RSS; "
                + "`Vault.open` is timed separately and not included. Ingest (into two fresh vaults) and extract each run twice; "
                + "the faster run is shown, and the larger peak RSS is judged.",
            "The raw baselines work on the same bytes held in memory, in 64 KiB chunks with a 45-byte AD, into "
                + "preallocated buffers, each pass run twice and the faster one shown: `crypto_aead_xchacha20poly1305_ietf_encrypt`/`_decrypt`. "
                + "The library never compresses an attachment chunk (neither format does), so the baselines are the AEAD alone; "
                + "the format-1 report also compared with zstd + AEAD, a step the library does not take and one slower than the "
                + "AEAD alone, so the baselines here are the stricter ones. "
                + "The blob id's keyed BLAKE2b-256 tree over the content (a leaf per 64 KiB chunk, then the root; one thread) is shown too, because the library must compute it and "
                + "the AEAD alone does not, and so is writing the same bytes to a new file in the same directory "
                + "(4 MiB `pwrite`s, no fsync): on this machine allocating new file pages is far slower than the crypto, "
                + "and ingest must write every byte. The raw pipelines (child processes, like the library's) read the file, "
                + "seal each chunk and write it, and back; like the library they also seal and write the padding that format 2 "
                + "appends to the whole stream (Padmé: \(grouped(streamBytes - bytes)) bytes here, \(fmt(Double(streamBytes - bytes) * 100 / Double(bytes), 2)) %).",
            "Peak RSS is `ProcessStats.peakResidentBytes()` (getrusage) in the child; VmHWM from /proc/self/status is "
                + "shown beside it as a cross-check. The idle child only opens the vault, giving the floor of the Swift runtime "
                + "and libraries.",
        ]
        var t = Table(["", "time (ms)", "MB/s", "library ÷ this"])
        t.row("library ingest (storeAttachment, commit)", fmt(ingestNs / 1e6, 0), fmt(ingestRate, 0), "")
        t.row(
            "raw pipeline: read file, pad, encrypt, write file", fmt(Double(rawIngestNs) / 1e6, 0), fmt(rawIngestRate, 0),
            ratio(ingestRate / rawIngestRate))
        t.row("raw XChaCha20-Poly1305 encrypt", fmt(Double(encrypt) / 1e6, 0), fmt(encRate, 0), ratio(ingestRate / encRate))
        t.row("raw blob id (keyed BLAKE2b-256 tree, one thread)", fmt(Double(hash) / 1e6, 0), fmt(hashRate, 0), "")
        t.row("raw encrypt + keyed BLAKE2b-256", fmt(Double(encrypt + hash) / 1e6, 0), fmt(encHashRate, 0), ratio(ingestRate / encHashRate))
        t.row(
            "raw pwrite to a new file, 4 MiB writes (no fsync)", fmt(Double(write) / 1e6, 0), fmt(writeRate, 0),
            ratio(ingestRate / writeRate))
        t.row(
            "sum: raw encrypt + keyed BLAKE2b + pwrite", fmt(Double(encrypt + hash + write) / 1e6, 0), fmt(serialRate, 0),
            ratio(ingestRate / serialRate))
        t.row("library extract (openAttachment, read(into:))", fmt(extractNs / 1e6, 0), fmt(extractRate, 0), "")
        t.row(
            "raw pipeline: pread records, decrypt, write /dev/null", fmt(Double(rawExtractNs) / 1e6, 0), fmt(rawExtractRate, 0),
            ratio(extractRate / rawExtractRate))
        t.row("raw XChaCha20-Poly1305 decrypt", fmt(Double(decrypt) / 1e6, 0), fmt(decRate, 0), ratio(extractRate / decRate))
        t.row(
            "raw decrypt + keyed BLAKE2b-256", fmt(Double(decrypt + hash) / 1e6, 0), fmt(decHashRate, 0), ratio(extractRate / decHashRate))
        s.tables.append(("Throughput (MB = 10⁶ bytes of attachment content per second)", t))

        var m = Table(["child process", "peak RSS (getrusage)", "VmHWM", "Vault.open (ms)"])
        func mib(_ d: [String: String], _ k: String) -> String { (try? d.number(k)).map { mebibytes($0) + " MiB" } ?? "n/a" }
        func ms(_ d: [String: String]) -> String { (try? d.number("openNs")).map { fmt(Double($0) / 1e6, 1) } ?? "" }
        m.row("open only (floor)", mib(idle, "peakRSS"), mib(idle, "hwm"), ms(idle))
        m.row("ingest", mib(ingest, "peakRSS"), mib(ingest, "hwm"), ms(ingest))
        m.row("ingest (second vault)", mib(ingest2, "peakRSS"), mib(ingest2, "hwm"), ms(ingest2))
        m.row("extract", mib(extract, "peakRSS"), mib(extract, "hwm"), ms(extract))
        m.row("extract (second run)", mib(extract2, "peakRSS"), mib(extract2, "hwm"), ms(extract2))
        s.tables.append(("Memory", m))

        var f = Table(["", "bytes"])
        f.row("attachment content", grouped(size))
        f.row("vault growth (chunks, manifest, commit)", grouped(vaultSize - sizeBefore))
        f.row("padded stream (Padmé of content + 1)", grouped(streamBytes))
        f.row(
            "overhead",
            "\(grouped(vaultSize - sizeBefore - UInt64(size))) (\(fmt(Double(vaultSize - sizeBefore - UInt64(size)) * 100 / Double(size), 3)) %)"
        )
        f.row("  of which padding", grouped(streamBytes - bytes))
        s.tables.append(("Size", f))

        let ingestPeak = max(try ingest.number("peakRSS"), try ingest2.number("peakRSS"))
        let extractPeak = max(try extract.number("peakRSS"), try extract2.number("peakRSS"))
        let judged = !shared.quick
        s.targets.append(
            Target(
                what: "peak RSS, ingest \(sizeName(size))", target: "≤ 64 MiB",
                measured: mebibytes(ingestPeak) + " MiB", met: judged ? ingestPeak <= 64 << 20 : nil))
        s.targets.append(
            Target(
                what: "peak RSS, extract \(sizeName(size))", target: "≤ 64 MiB",
                measured: mebibytes(extractPeak) + " MiB", met: judged ? extractPeak <= 64 << 20 : nil))
        s.targets.append(
            Target(
                what: "ingest ÷ raw pipeline with the same I/O (read, AEAD, write)", target: "≥ 0.70",
                measured: ratio(ingestRate / rawIngestRate), met: judged ? ingestRate / rawIngestRate >= 0.70 : nil))
        s.targets.append(
            Target(
                what: "extract ÷ raw pipeline with the same I/O (pread, AEAD, write)", target: "≥ 0.70",
                measured: ratio(extractRate / rawExtractRate), met: judged ? extractRate / rawExtractRate >= 0.70 : nil))
        s.targets.append(
            Target(
                what: "ingest ÷ raw AEAD in memory (no file I/O)", target: "≥ 0.70",
                measured: ratio(ingestRate / encRate), met: judged ? ingestRate / encRate >= 0.70 : nil))
        s.targets.append(
            Target(
                what: "extract ÷ raw AEAD in memory (no file I/O)", target: "≥ 0.70",
                measured: ratio(extractRate / decRate), met: judged ? extractRate / decRate >= 0.70 : nil))
        s.notes.append(
            "The issue asks for ≥ 70 % of raw libsodium. Measured against the same pipeline built from the raw primitives "
                + "with the same file I/O, the library meets it or not as the first two rows say. Against the primitives alone in memory "
                + "(no file at all) it does not: it reads and writes the file (writing \(sizeName(size)) to a new file alone runs at "
                + "\(fmt(writeRate, 0)) MB/s here, the AEAD alone at \(fmt(encRate, 0)) MB/s), computes the blob id (keyed BLAKE2b, on a "
                + "second thread, \(fmt(hashRate, 0)) MB/s alone) and seals the stream's padding.")
        return s
    }
}

/// The raw primitives over content held in memory, 64 KiB at a time.
struct RawChunks {
    let content: [UInt8]
    let chunk = Limits.chunkByteCount
    let key: [UInt8]
    let ad: [UInt8]
    let stride: Int
    /// Ciphertext of every chunk (plain AEAD), `stride` bytes apart.
    private let sealed: Storage

    final class Storage {
        var bytes: [UInt8]
        init(count: Int) { bytes = [UInt8](repeating: 0, count: count) }
    }

    init(content: [UInt8]) {
        self.content = content
        key = SystemRandom().bytes(32)
        ad = SystemRandom().bytes(45)
        stride = Limits.chunkByteCount + 16
        let chunks = (content.count + Limits.chunkByteCount - 1) / Limits.chunkByteCount
        sealed = Storage(count: chunks * stride)  // zero-filled: its pages are touched before timing
    }

    var chunkCount: Int { (content.count + chunk - 1) / chunk }

    static func nonce(_ i: Int) -> [UInt8] {
        var n = [UInt8](repeating: 0, count: 24)
        withUnsafeBytes(of: UInt64(i).littleEndian) { for (j, b) in $0.enumerated() { n[j] = b } }
        return n
    }

    /// Encrypts every chunk into `sealed`; returns nanoseconds.
    func encrypt() -> UInt64 {
        let start = now()
        content.withUnsafeBufferPointer { c in
            sealed.bytes.withUnsafeMutableBufferPointer { s in
                var nonce = [UInt8](repeating: 0, count: 24)
                for i in 0..<chunkCount {
                    let n = min(chunk, c.count - i * chunk)
                    nonce[0] = UInt8(truncatingIfNeeded: i)
                    nonce[1] = UInt8(truncatingIfNeeded: i >> 8)
                    nonce[2] = UInt8(truncatingIfNeeded: i >> 16)
                    var written: UInt64 = 0
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        s.baseAddress! + i * stride, &written, c.baseAddress! + i * chunk, UInt64(n), ad, UInt64(ad.count),
                        nil, nonce, key)
                }
            }
        }
        return now() - start
    }

    /// Decrypts every chunk of `sealed` into one reused 64 KiB buffer.
    func decrypt() -> UInt64 {
        var out = [UInt8](repeating: 0, count: chunk)
        var failures = 0
        let start = now()
        sealed.bytes.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer { o in
                var nonce = [UInt8](repeating: 0, count: 24)
                for i in 0..<chunkCount {
                    let n = min(chunk, content.count - i * chunk)
                    nonce[0] = UInt8(truncatingIfNeeded: i)
                    nonce[1] = UInt8(truncatingIfNeeded: i >> 8)
                    nonce[2] = UInt8(truncatingIfNeeded: i >> 16)
                    var written: UInt64 = 0
                    if crypto_aead_xchacha20poly1305_ietf_decrypt(
                        o.baseAddress!, &written, nil, s.baseAddress! + i * stride, UInt64(n + 16), ad, UInt64(ad.count),
                        nonce, key) != 0
                    {
                        failures += 1
                    }
                }
            }
        }
        let ns = now() - start
        precondition(failures == 0, "raw decrypt failed")
        return ns
    }

    /// The blob id of the whole content on one thread: the keyed BLAKE2b-256
    /// tree of `Spec/format.md §7.3`, a leaf per 64 KiB chunk then the root
    /// (libsodium `crypto_generichash` through QuireCrypto).
    func keyedHash() throws -> UInt64 {
        let k = try SymmetricKey(bytes: key)
        let start = now()
        _ = BlobID(content: content, blobKey: k)
        return now() - start
    }

    /// Writes the content to a new file at `path` in 4 MiB `pwrite`s (no
    /// fsync), as the library's 4 MiB commit buffer does; removes it after.
    func writeNewFile(_ path: String) throws -> UInt64 {
        let file = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600))
        defer { try? FileSystem.remove(path) }
        let piece = 4 << 20
        let start = now()
        try content.withUnsafeBytes { c in
            var offset = 0
            while offset < c.count {
                let n = min(piece, c.count - offset)
                try file.write(UnsafeRawBufferPointer(rebasing: c[offset..<(offset + n)]), at: UInt64(offset))
                offset += n
            }
        }
        return now() - start
    }
}

/// The hidden `--child` modes: each runs one phase in a fresh process and
/// prints `key=value` lines (nanoseconds, bytes, peak RSS).
enum Child {
    static func run(_ args: [String]) throws {
        guard let mode = args.first, args.count >= 3 else { throw BenchError("usage: --child MODE VAULT KEYFILE …") }
        if try Profiling.run(mode, Array(args.dropFirst())) { return }
        if mode == "raw-ingest" || mode == "raw-extract" {
            let ns =
                mode == "raw-ingest"
                ? try RawPipeline.ingest(source: args[1], destination: args[2])
                : try RawPipeline.extract(source: args[1])
            print("ns=\(ns)")
            print("peakRSS=\(ProcessStats.peakResidentBytes())")
            if let hwm = vmHighWaterMark() { print("hwm=\(hwm)") }
            return
        }
        let vaultPath = args[1]
        let code = String(decoding: try readWholeFile(args[2]), as: UTF8.self)
        let recovery = try RecoveryKey(code: code)
        let t0 = now()
        let vault = try Fixtures.open(vaultPath, recovery)
        let openNs = now() - t0
        print("openNs=\(openNs)")
        switch mode {
        case "open":
            break
        case "ingest":
            guard args.count == 4 else { throw BenchError("usage: --child ingest VAULT KEYFILE SOURCE") }
            let source = try FileByteSource(path: args[3])
            var stored: StoredBlob?
            let start = now()
            try vault.commit { (tx: VaultTransaction) throws(QuireError) in
                stored = try tx.storeAttachment(from: source, mediaType: "application/octet-stream")
            }
            let ns = now() - start
            guard let stored else { throw BenchError("nothing stored") }
            print("ns=\(ns)")
            print("bytes=\(stored.byteCount)")
            print("blob=\(stored.blob.description)")
        case "extract":
            guard args.count == 4, let blob = BlobID(hex: args[3]) else { throw BenchError("usage: --child extract VAULT KEYFILE BLOBHEX") }
            let sink = try SystemFile(path: "/dev/null", mode: .readWrite, allowNonRegular: true)
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            var total: UInt64 = 0
            let start = now()
            let reader = try vault.openAttachment(blob)
            while true {
                let n = try buffer.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int in
                    try reader.readChecked(into: raw)
                }
                if n == 0 { break }
                try buffer.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[0..<n]), at: total) }
                total += UInt64(n)
            }
            let ns = now() - start
            print("ns=\(ns)")
            print("bytes=\(total)")
        default:
            throw BenchError("unknown child mode \(mode)")
        }
        print("peakRSS=\(ProcessStats.peakResidentBytes())")
        if let hwm = vmHighWaterMark() { print("hwm=\(hwm)") }
    }
}

/// The attachment pipeline built from the raw primitives, with the same I/O
/// as the library: the baseline for ingest and extract.
enum RawPipeline {
    static let key = [UInt8](repeating: 0x42, count: 32)
    static let ad = [UInt8](repeating: 0x24, count: 45)

    /// Reads `source` in 64 KiB pieces, pads the stream as format 2 does
    /// (0x80 then zeros up to Padmé of its length + 1), encrypts each piece
    /// and writes `u32 length ‖ sealed` records to `destination` in 4 MiB
    /// `pwrite`s. Returns nanoseconds.
    static func ingest(source: String, destination: String) throws -> UInt64 {
        let input = try SystemFile(path: source, mode: .readOnly)
        let output = try SystemFile(path: destination, mode: .createExclusive(permissions: 0o600))
        let chunk = Limits.chunkByteCount
        var piece = [UInt8](repeating: 0, count: chunk)
        var pending = [UInt8]()
        pending.reserveCapacity(4 << 20 + chunk + 64)
        var sealed = [UInt8](repeating: 0, count: chunk + 16)
        var nonce = [UInt8](repeating: 0, count: 24)
        var readAt: UInt64 = 0
        var writeAt: UInt64 = 0
        var i = 0
        let start = now()
        let contentCount = try input.size()
        let streamCount = Padding.streamByteCount(contentByteCount: contentCount)
        var streamAt: UInt64 = 0
        while streamAt < streamCount {
            let want = Int(min(UInt64(chunk), streamCount - streamAt))
            var n = 0
            if readAt < contentCount {
                n = try piece.withUnsafeMutableBytes {
                    try input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want]), at: readAt)
                }
                readAt += UInt64(n)
            }
            if n < want {
                // The padding: 0x80 right after the content, zeros after it.
                for j in n..<want { piece[j] = streamAt + UInt64(j) == contentCount ? 0x80 : 0 }
            }
            streamAt += UInt64(want)
            nonce[0] = UInt8(truncatingIfNeeded: i)
            nonce[1] = UInt8(truncatingIfNeeded: i >> 8)
            nonce[2] = UInt8(truncatingIfNeeded: i >> 16)
            var written: UInt64 = 0
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(&sealed, &written, piece, UInt64(want), ad, UInt64(ad.count), nil, nonce, key)
            let length = UInt32(written)
            pending.append(contentsOf: [
                UInt8(truncatingIfNeeded: length), UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length >> 16),
                UInt8(truncatingIfNeeded: length >> 24),
            ])
            pending.append(contentsOf: sealed[0..<Int(written)])
            if pending.count >= 4 << 20 {
                try output.write(pending, at: writeAt)
                writeAt += UInt64(pending.count)
                pending.removeAll(keepingCapacity: true)
            }
            i += 1
        }
        if !pending.isEmpty { try output.write(pending, at: writeAt) }
        return now() - start
    }

    /// Reads the records `ingest` wrote one `pread` each, decrypts them, and
    /// writes the content (the stream up to its padding) to /dev/null.
    /// Returns nanoseconds.
    static func extract(source: String) throws -> UInt64 {
        let input = try SystemFile(path: source, mode: .readOnly)
        let sink = try SystemFile(path: "/dev/null", mode: .readWrite, allowNonRegular: true)
        let size = try input.size()
        let chunk = Limits.chunkByteCount
        var record = [UInt8](repeating: 0, count: chunk + 16)
        var out = [UInt8](repeating: 0, count: chunk)
        var nonce = [UInt8](repeating: 0, count: 24)
        var at: UInt64 = 0
        var i = 0
        var sinkAt: UInt64 = 0
        var failures = 0
        let start = now()
        while at < size {
            let header = try input.read(count: 4, at: at)
            let length = Int(header[0]) | Int(header[1]) << 8 | Int(header[2]) << 16 | Int(header[3]) << 24
            _ = try record.withUnsafeMutableBytes {
                try input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<length]), at: at + 4)
            }
            at += 4 + UInt64(length)
            nonce[0] = UInt8(truncatingIfNeeded: i)
            nonce[1] = UInt8(truncatingIfNeeded: i >> 8)
            nonce[2] = UInt8(truncatingIfNeeded: i >> 16)
            var written: UInt64 = 0
            if crypto_aead_xchacha20poly1305_ietf_decrypt(&out, &written, nil, record, UInt64(length), ad, UInt64(ad.count), nonce, key)
                != 0
            {
                failures += 1
            }
            var n = Int(written)
            if at >= size {
                // The last record ends with the padding: drop it.
                while n > 0 && out[n - 1] == 0 { n -= 1 }
                if n > 0 { n -= 1 }
            }
            try out.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[0..<n]), at: sinkAt) }
            sinkAt += UInt64(n)
            i += 1
        }
        let ns = now() - start
        precondition(failures == 0, "raw pipeline: \(failures) records failed")
        return ns
    }
}
