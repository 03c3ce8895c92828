@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import Testing

/// Entry and revision ids hold their 16 bytes inline (two words), and
/// still behave as their bytes: the same bytes back, equal exactly when
/// the bytes are, ordered bytewise, and unchecked ids of another length
/// kept distinct.
@Suite struct IdentifierStorageTests {
    /// Ids whose bytes differ in the first, the eighth, the ninth and the
    /// last byte, and at the ends of the range.
    static let samples: [[UInt8]] = {
        var out: [[UInt8]] = [[UInt8](repeating: 0, count: 16), [UInt8](repeating: 0xff, count: 16)]
        for at in [0, 7, 8, 15] {
            for value: UInt8 in [0x01, 0x7f, 0x80, 0xfe] {
                var b = (0..<16).map { UInt8($0 &* 17) }
                b[at] = value
                out.append(b)
            }
        }
        // Shorter and longer unchecked bytes, one a prefix of a sample.
        out.append(Array(out[2].prefix(15)))
        out.append(out[2] + [0])
        out.append([])
        return out
    }()

    @Test func idsBehaveAsTheirBytes() {
        for a in Self.samples {
            let entry = EntryID(unchecked: a)
            let revision = RevisionID(unchecked: a)
            #expect(entry.bytes == a)
            #expect(revision.bytes == a)
            #expect(a.withUnsafeBytes { EntryID(uncheckedRaw: $0) } == entry)
            #expect(entry.description == hex(a))
            var appended: [UInt8] = [9]
            entry.storage.append(to: &appended)
            #expect(appended == [9] + a)
            for b in Self.samples {
                let other = EntryID(unchecked: b)
                #expect((entry == other) == (a == b), "\(hex(a)) == \(hex(b))")
                #expect((entry < other) == a.lexicographicallyPrecedes(b), "\(hex(a)) < \(hex(b))")
                #expect((revision < RevisionID(unchecked: b)) == a.lexicographicallyPrecedes(b))
                if a == b { #expect(entry.hashValue == other.hashValue) }
            }
        }
        let sorted = Self.samples.map { EntryID(unchecked: $0) }.sorted().map(\.bytes)
        #expect(sorted == Self.samples.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(Set(Self.samples.map { EntryID(unchecked: $0) }).count == Set(Self.samples).count)
    }
}
