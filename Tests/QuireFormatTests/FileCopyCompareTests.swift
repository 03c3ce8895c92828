@_spi(Crypto) import QuireCrypto
import QuireSystem
import Testing

/// What merge copies and compares files with (``SystemFile/copy(_:from:at:)``,
/// ``SystemFile/equalPrefixLength(with:upTo:)``): the bytes of a read and
/// compare through the process, byte for byte, across the 1 MiB pieces.
@Suite struct FileCopyCompareTests {
    func write(_ bytes: [UInt8], to path: String) throws {
        try SystemFile(path: path, mode: .createExclusive(permissions: 0o600)).write(bytes, at: 0)
    }

    @Test func copiesARangeWhole() throws {
        let dir = TemporaryDirectory()
        let bytes = SeededRandom(label: "copy").bytes(2_500_000)
        try write(bytes, to: dir.file("source"))
        let source = try SystemFile(path: dir.file("source"), mode: .readOnly)
        let out = try SystemFile(path: dir.file("out"), mode: .createExclusive(permissions: 0o600))
        try out.copy(2_400_000, from: source, at: 0)
        #expect(try fileBytes(dir.file("out")) == Array(bytes[0..<2_400_000]))
        // At an offset: the same offset of the output, the rest kept.
        try out.copy(100_000, from: source, at: 2_400_000)
        #expect(try fileBytes(dir.file("out")) == bytes)
        // A source that ends before the range: an error, as a short read was.
        let more = try SystemFile(path: dir.file("more"), mode: .createExclusive(permissions: 0o600))
        #expect(throws: SystemError.self) { try more.copy(2_600_000, from: source, at: 0) }
    }

    @Test(arguments: [0, 17, 1 << 20, (1 << 20) + 5, 2_000_000])
    func findsTheFirstDifference(at position: Int) throws {
        let dir = TemporaryDirectory()
        let bytes = SeededRandom(label: "compare").bytes(2_300_000)
        var other = bytes
        other[position] ^= 0x01
        try write(bytes, to: dir.file("a"))
        try write(other, to: dir.file("b"))
        let a = try SystemFile(path: dir.file("a"), mode: .readOnly)
        let b = try SystemFile(path: dir.file("b"), mode: .readOnly)
        #expect(try a.equalPrefixLength(with: b, upTo: UInt64(bytes.count)) == UInt64(position))
        #expect(try b.equalPrefixLength(with: a, upTo: UInt64(position)) == UInt64(position))
        #expect(try a.equalPrefixLength(with: a, upTo: UInt64(bytes.count)) == UInt64(bytes.count))
    }

    @Test func stopsAtTheEndOfTheShorterFile() throws {
        let dir = TemporaryDirectory()
        let bytes = SeededRandom(label: "short").bytes(1_500_000)
        try write(bytes, to: dir.file("long"))
        try write(Array(bytes[0..<1_200_000]), to: dir.file("short"))
        let long = try SystemFile(path: dir.file("long"), mode: .readOnly)
        let short = try SystemFile(path: dir.file("short"), mode: .readOnly)
        #expect(try long.equalPrefixLength(with: short, upTo: 1_500_000) == 1_200_000)
        #expect(try short.equalPrefixLength(with: long, upTo: 1_500_000) == 1_200_000)
    }
}
