import Foundation
import QuireCrypto
@_spi(Format) import QuireFormat
import QuireZip
import Testing

/// A member source that fails after its first read.
final class FailingSource: ByteSource {
    static let boom = FormatError.notWritable(reason: "boom")
    var reads = 0
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(QuireError) -> Int {
        reads += 1
        if reads > 1 { throw .fromFormat(Self.boom) }
        buffer[0] = 65
        return 1
    }
}

@Suite struct ZipWriterTests {
    @Test func refusesUnsafeAndDuplicateNames() throws {
        let dir = TemporaryDirectory()
        let zip = try ZipWriter(path: dir.file("a.zip"))
        for bad in ["", "/abs", "../up", "a/../b", "a//b", "nul\0x", "back\\slash"] {
            #expect(throws: ZipError.unsafeName(bad)) { try zip.add(bad, compressed: true, bytes: [1]) }
        }
        try zip.add("ok.txt", compressed: true, bytes: [1])
        #expect(throws: ZipError.unsafeName("ok.txt")) { try zip.add("ok.txt", compressed: false, bytes: [2]) }
        zip.discard()
        #expect(dir.listing() == [])
    }

    @Test func sameMembersGiveSameBytes() throws {
        let dir = TemporaryDirectory()
        for name in ["a.zip", "b.zip"] {
            let zip = try ZipWriter(path: dir.file(name))
            try zip.add("mimetype", compressed: false, bytes: Array("application/epub+zip".utf8))
            try zip.add("dir/text.txt", compressed: true, bytes: Array(String(repeating: "journal ", count: 1000).utf8))
            try zip.close()
        }
        let a = try Data(contentsOf: URL(fileURLWithPath: dir.file("a.zip")))
        #expect(a == (try Data(contentsOf: URL(fileURLWithPath: dir.file("b.zip")))))
        #expect(a.count < 400)
        // 1980-01-01 00:00 in the first local header (time at 10, date at 12).
        #expect(Array(a[10..<14]) == [0, 0, 0x21, 0])
    }

    @Test func aFailingSourceWritesNothing() throws {
        let dir = TemporaryDirectory()
        let zip = try ZipWriter(path: dir.file("a.zip"))
        try zip.add("x", compressed: true, source: FailingSource())
        #expect(throws: ZipError.self) { try zip.close() }
        #expect(zip.sourceError == FailingSource.boom)
        #expect(dir.listing() == [])
    }
}
