// Benchmark 4: the fixed overhead of a small entry.

import Quire
import QuireCrypto
import QuireFormat
import QuireSystem

enum OverheadBenchmark {
    static func run(_ shared: SharedFixtures) throws -> Section {
        let path = shared.workspace.file("overhead.quire")
        defer { try? FileSystem.remove(path) }
        let (vault, _) = try Fixtures.create(at: path)

        var text = "Up betimes, and to the office all the morning; at noon dined at home, and then to the Exchange, where"
        while text.utf8.count < 100 { text += "." }
        text = String(decoding: Array(text.utf8)[0..<100], as: UTF8.self)
        var generator = EntryGenerator(seed: 4)
        let cases: [(String, EntryBody)] = [
            ("100-byte text", EntryBody(created: 1_700_000_000_000, timeZone: "Europe/London", text: text)),
            ("100-byte text, 2 tags, mood", EntryBody(created: 1_700_000_000_000, timeZone: "Europe/London", text: text, tags: ["work", "navy"], mood: 4)),
            ("generated entry (500–2000 bytes)", generator.body()),
        ]

        let header = FrameHeader.byteCount
        let nonce = XChaCha20Poly1305.nonceByteCount
        let tag = XChaCha20Poly1305.tagByteCount
        let commit = FrameHeader.byteCount + CommitChain.headByteCount
        let fixed = header + nonce + tag + commit

        var s = Section(name: "overhead", title: "4. Fixed overhead of a small entry")
        s.explanation = [
            "Computed: every entry revision appended on its own is one sealed frame (header \(header) + nonce \(nonce) + "
                + "padded payload + tag \(tag)) plus one commit frame (header \(FrameHeader.byteCount) + chain head "
                + "\(CommitChain.headByteCount)), so the fixed cost is \(header) + \(nonce) + \(tag) + \(commit) = \(fixed) bytes, "
                + "before the padding (at least the 1-byte 0x80 marker, then zeros up to the Padmé length).",
            "Measured: the file-size delta of one `vault.add` minus the stored payload (the entry's CBOR, "
                + "`EntryRevision.encoded()`, or its zstd frame when that is smaller, as the writer chooses) minus the padding "
                + "(Padmé length − stored payload, cross-checked against the frame header's body length).",
        ]
        var computed = Table(["part", "bytes"])
        computed.row("sealed frame header", "\(header)")
        computed.row("XChaCha20 nonce", "\(nonce)")
        computed.row("Poly1305 tag", "\(tag)")
        computed.row("commit frame (header \(FrameHeader.byteCount) + head \(CommitChain.headByteCount))", "\(commit)")
        computed.row("total before padding", "\(fixed)")
        computed.row("padding marker (minimum padding)", "1")
        computed.row("total with minimum padding", "\(fixed + 1)")
        s.tables.append(("Computed", computed))

        var measured = Table(["entry", "CBOR", "zstd", "stored", "padding", "file delta", "overhead before padding", "with padding"])
        var smallOverhead = -1
        for (name, body) in cases {
            let before = try fileSize(path)
            let framesBefore = vault.file.structure.frames.count
            let revision = try vault.add(body)
            let delta = Int(try fileSize(path) - before)
            let cbor = revision.encoded()
            let zstd = Compression.compress(cbor).count
            let stored = zstd < cbor.count ? zstd : cbor.count
            let padded = Padding.paddedCount(forPayload: stored)
            let frames = vault.file.structure.frames[framesBefore...]
            guard let entry = frames.first(where: { $0.header.kind == .entryRevision }) else { throw BenchError("no entry frame appended") }
            let bodyPlain = Int(entry.header.bodyLength) - nonce - tag
            guard bodyPlain == padded, entry.header.isCompressed == (zstd < cbor.count) else {
                throw BenchError("frame body \(bodyPlain) bytes (compressed \(entry.header.isCompressed)) does not match padded \(padded)")
            }
            let padding = padded - stored
            let overhead = delta - stored - padding
            if smallOverhead < 0 { smallOverhead = overhead }
            measured.row(name, "\(cbor.count)", "\(zstd)", "\(stored) (\(zstd < cbor.count ? "zstd" : "CBOR"))", "\(padding)",
                         "\(delta)", "\(overhead)", "\(overhead + padding)")
        }
        s.tables.append(("Measured (bytes)", measured))
        s.targets.append(Target(what: "fixed overhead of a 100-byte entry, before padding", target: "≤ 80 bytes",
                                measured: "\(smallOverhead) bytes (computed \(fixed))", met: smallOverhead <= 80))
        return s
    }
}
