import Testing
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import QuireTestSupport

/// Attachments are read, hashed and sealed 16 chunks (1 MiB) at a time and
/// opened 16 chunks at a time (`PendingCommit.batchChunkCount`): the stream
/// must still be the one canonical chunking and padding of `Spec/format.md
/// §7.1` at every size around a chunk and a batch boundary, and a damaged
/// chunk inside a batch must not hide the chunks before it.
@Suite struct AttachmentBatchTests {
    static let sizes = [0, 1, 65_535, 65_536, 65_537, 1_048_575, 1_048_576, 1_048_577, 2_162_688, 3_000_000]

    @Test(arguments: sizes)
    func storesTheCanonicalStreamAroundBatchBoundaries(size: Int) throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir, seed: "batch-\(size)")
        let content = SeededRandom(label: "batch-content-\(size)").bytes(size)
        var stored: StoredBlob?
        try vault.commit { (tx: VaultTransaction) throws(QuireError) in
            stored = try tx.storeAttachment(from: MemoryByteSource(content), mediaType: "application/octet-stream")
        }
        let blob = try #require(stored).blob
        // The blob id is the keyed hash of the content alone (§7.3), whatever the batching.
        let reopened = try dmgOpen(dir.file("v.quire"), recovery)
        let reader = try reopened.openAttachment(blob)
        let stream = Padding.streamByteCount(contentByteCount: UInt64(size))
        #expect(reader.chunkCount == Int((stream + 65_535) / 65_536))
        // Every chunk but the last holds 64 KiB; the last holds the rest of the stream.
        let layout = DmgLayout(reopened)
        let chunks = layout.frames.filter { $0.kind == .blobChunk }
        #expect(chunks.count == reader.chunkCount)
        for c in chunks.dropLast() { #expect(c.end - c.offset == 16 + 65_597) }
        let lastPlain = Int(stream) - 65_536 * (chunks.count - 1)
        #expect(chunks.last.map { Int($0.end - $0.offset) } == 16 + 24 + 21 + lastPlain + 16)
        // Read in pieces that do not line up with chunks or batches.
        var out: [UInt8] = []
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: 100_003, alignment: 16)
        defer { piece.deallocate() }
        while true {
            let n = try reader.read(into: piece)
            if n == 0 { break }
            out += piece[0..<n]
        }
        #expect(out == content)
        #expect(dmgIssues(reopened) == [])
    }

    /// A chunk that fails to authenticate in the middle of a batch: the five
    /// chunks before it are still handed out, then the read fails at it.
    @Test func aDamagedChunkInsideABatchComesAfterTheChunksBeforeIt() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir, seed: "batch-damage")
        let content = SeededRandom(label: "batch-damage-content").bytes(20 * 65_536)
        var stored: StoredBlob?
        try vault.commit { (tx: VaultTransaction) throws(QuireError) in
            stored = try tx.storeAttachment(from: MemoryByteSource(content), mediaType: "application/octet-stream")
        }
        let path = dir.file("v.quire")
        let chunks = DmgLayout(vault).frames.filter { $0.kind == .blobChunk }
        var bytes = dmgRead(path)
        bytes[Int(chunks[5].offset) + 1_000] ^= 0x01  // in chunk 5's ciphertext
        dmgWrite(path, bytes)
        let reader = try dmgOpen(path, recovery).openAttachment(try #require(stored).blob)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { buffer.deallocate() }
        var out: [UInt8] = []
        var failure: FormatError?
        do throws(FormatError) {
            while true {
                let n = try reader.readChecked(into: buffer)
                if n == 0 { break }
                out += buffer[0..<n]
            }
        } catch {
            failure = error
        }
        #expect(out == Array(content[0..<(5 * 65_536)]))
        guard case .authenticationFailed(let location) = try #require(failure) else {
            Issue.record("expected authenticationFailed, got \(String(describing: failure))")
            return
        }
        #expect(location.offset == chunks[5].offset)
    }
}
