@_spi(Crypto) import QuireCrypto
@_spi(Format) @testable import QuireFormat
import Testing

/// The blob id is a keyed hash tree over the content (`Spec/format.md
/// §7.3`): a leaf per 64 KiB chunk of content, then a root over the leaves,
/// the size and the leaf count.
@Suite struct BlobIDTests {
    static let key = try! SymmetricKey(bytes: Array(0..<32) as [UInt8])
    static func content(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0) } }

    /// Known answers computed apart from the library (Python's hashlib, from
    /// the spec text): empty content (no leaf), one short leaf, two leaves.
    @Test(arguments: [
        (0, "9d8ea5943a98e466f8aa5acc65b4de01c31b4f9af93999395889156a0b3effed"),
        (3, "065a70652a63e888703fae413c7ea93f55c489abb851a7ba693c7578e12bc363"),
        (70_000, "e2b234c95879da56d013f9c7f2e7c9f4cb7f7d43007139e2df844bcb3ec6e2f6"),
    ])
    func knownAnswers(size: Int, hex: String) {
        #expect(BlobID(content: Self.content(size), blobKey: Self.key).bytes == hexBytes(hex))
    }

    /// The known-answer test of `Spec/format.md §7.5`: blob key 0x00…0x1f,
    /// content byte `i` = `i mod 251`, every leaf and the root, computed apart
    /// from the library (Python's hashlib.blake2b, from the §7.3 text).
    @Test(arguments: [
        (0, [String](), "9d8ea5943a98e466f8aa5acc65b4de01c31b4f9af93999395889156a0b3effed"),
        (1, ["346a7610cec1d652b34ded15b68399083d54fc89ec27fe580fc5fbe538759579"],
         "c37843af8251b7eb3c39160c67672895ba2fb396824b10a30b1238962396cb18"),
        (65_536, ["a00496329a9eb51958243d74e77c48fc4d45f7ccded78253b6754355989c7c05"],
         "733556a9741968e3d1fd0fa88238b0c7dd4d591911028ce16d4e6f3876b5eb37"),
        (65_537, ["a00496329a9eb51958243d74e77c48fc4d45f7ccded78253b6754355989c7c05",
                  "d4fe9e0ca5b703f94a4cb425e2fb349b0d66dfa1ad08e093749b83887df5469e"],
         "4ef668e8cfca5a0fbfe892f7d9ee829a3741b7a414eb92d243b7355356f4ccad"),
    ])
    func specKnownAnswers(size: Int, leaves: [String], root: String) {
        let c = (0..<size).map { UInt8($0 % 251) }
        let chunk = Limits.chunkByteCount
        let computed = c.withUnsafeBytes { all in
            stride(from: 0, to: size, by: chunk).map { start in
                BlobID.leaf(index: UInt64(start / chunk), UnsafeRawBufferPointer(rebasing: all[start..<min(start + chunk, size)]),
                            blobKey: Self.key)
            }
        }
        #expect(computed == leaves.map(hexBytes))
        #expect(BlobID(content: c, blobKey: Self.key).bytes == hexBytes(root))
        // The two-thread hasher, as a writer and a reader use it, agrees.
        let hasher = ParallelHasher(key: Self.key)
        let whole = c.withUnsafeBytes { all in
            hasher.submit(all, slot: 0)
            return hasher.finish()
        }
        #expect(whole == hexBytes(root))
    }

    /// From the primitives: the root over the leaves, and never one MAC
    /// over the content (format 2's first blob id) nor a leaf.
    @Test func isTheRootOverTheLeaves() {
        let c = Self.content(70_000)
        func le(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        let leaf0 = BLAKE2b.mac(Array("quire-blob-leaf".utf8) + le(0) + Array(c[0..<65_536]), key: Self.key, byteCount: 32)
        let leaf1 = BLAKE2b.mac(Array("quire-blob-leaf".utf8) + le(1) + Array(c[65_536...]), key: Self.key, byteCount: 32)
        let root = BLAKE2b.mac(Array("quire-blob-root".utf8) + leaf0 + leaf1 + le(70_000) + le(2), key: Self.key, byteCount: 32)
        let id = BlobID(content: c, blobKey: Self.key)
        #expect(id.bytes == root)
        #expect(id.bytes != BLAKE2b.mac(c, key: Self.key, byteCount: 32))
        // Another blob key gives an unrelated id.
        #expect(BlobID(content: c, blobKey: try! SymmetricKey(bytes: Array(1...32) as [UInt8])) != id)
    }

    /// The two-thread hasher gives the same id whatever the batches: whole
    /// chunks, a short last buffer, and empty buffers after it (a reader's
    /// batches of padding-only chunks), in alternating slots.
    @Test(arguments: [0, 1, 65_535, 65_536, 65_537, 16 * 65_536, 16 * 65_536 + 7, 40 * 65_536 + 100])
    func parallelHasherMatches(size: Int) {
        let c = Self.content(size)
        let batch = 16 * 65_536
        let hasher = ParallelHasher(key: Self.key)
        c.withUnsafeBytes { all in
            var slot = 0, offset = 0
            repeat {
                hasher.wait(slot: slot)
                let end = min(offset + batch, all.count)
                hasher.submit(UnsafeRawBufferPointer(rebasing: all[offset..<end]), slot: slot)
                offset = end
                slot = 1 - slot
            } while offset < all.count
            hasher.wait(slot: slot)
            hasher.submit(UnsafeRawBufferPointer(rebasing: all[all.count..<all.count]), slot: slot)
        }
        #expect(hasher.finish() == BlobID(content: c, blobKey: Self.key).bytes)
    }
}
