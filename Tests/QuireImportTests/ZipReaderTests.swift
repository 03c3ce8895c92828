import Foundation
import QuireCrypto
@_spi(Format) import QuireFormat
import Testing
import QuireZip

/// The fixture folder `Tests/Fixtures/import/`.
let importFixtures: String = {
    let file = "\(#filePath)"
    let tests = file[..<file.range(of: "/QuireImportTests/")!.lowerBound]
    return tests + "/Fixtures/import"
}()

/// `Tests/Fixtures/` itself (the three big journals live there).
let fixturesRoot: String = {
    let file = "\(#filePath)"
    let tests = file[..<file.range(of: "/QuireImportTests/")!.lowerBound]
    return tests + "/Fixtures"
}()

/// Reads a member to its end in 4 KiB chunks.
func drain(_ stream: ZipMemberReader) throws(FormatError) -> [UInt8] {
    var out: [UInt8] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
    defer { buffer.deallocate() }
    while true {
        let n: Int
        do { n = try stream.read(into: buffer) } catch { throw (error.layer as? FormatError) ?? .source(error) }
        if n == 0 { return out }
        out += UnsafeRawBufferPointer(rebasing: buffer[0..<n])
    }
}

@Suite struct ZipReaderTests {
    @Test func listsAndStreamsMembers() throws {
        let zip = try ZipReader(path: importFixtures + "/zip/small.zip")
        #expect(zip.members.map(\.name) == ["dir/", "dir/hello.txt", "stored.bin"])
        #expect(zip.members.map(\.isDirectory) == [true, false, false])
        #expect(zip.refused.isEmpty)
        let hello = try drain(zip.open(zip.member(named: "dir/hello.txt")!))
        #expect(hello == Array(String(repeating: "hello, world\n", count: 1000).utf8))
        let stored = try drain(zip.open(zip.member(named: "stored.bin")!))
        #expect(stored == Array((0..<20).flatMap { _ in (0...255).map { UInt8($0) } }))
        #expect(zip.totalBytesRead == 13000 + 5120)
    }

    @Test func refusesUnsafeNames() throws {
        let zip = try ZipReader(path: importFixtures + "/zip/unsafe-names.zip")
        #expect(zip.members.map(\.name) == ["ok/fine.txt"])
        #expect(zip.refused.map(\.name) == ["../evil.txt", "/etc/evil.txt", "a/../../evil.txt", "..\\evil.txt", "C:/evil.txt"])
        #expect(zip.refused.allSatisfy { $0.error.code == "zip_unsafe_name" })
        #expect(zip.member(named: "../evil.txt") == nil)
        #expect(try drain(zip.open(zip.members[0])) == Array("fine\n".utf8))
    }

    @Test func unsafeNameRules() {
        for bad in ["", "/x", "../x", "a/..", "a/./b", "a//b", "a\\b", "C:x", "a\u{0}b", "a\nb"] {
            #expect(ZipReader.unsafeReason(bad) != nil, "\(bad.debugDescription) should be unsafe")
        }
        for good in ["x", "photos/abc.jpeg", "Journal 2.json", "dir/", "..x", "x..", "日記.json"] {
            #expect(ZipReader.unsafeReason(good) == nil, "\(good.debugDescription) should be safe")
        }
    }

    @Test func stopsAZipBomb() throws {
        let zip = try ZipReader(path: importFixtures + "/zip/bomb.zip")
        let member = zip.members[0]
        #expect(member.declaredByteCount == 16 << 20)
        let stream = try zip.open(member)
        // A ByteSource: the reader throws the format's error and keeps the ZIP error behind it.
        #expect(throws: FormatError.self) { _ = try drain(stream) }
        #expect(stream.failure == .tooLarge(name: "zeros.bin", limit: member.compressedByteCount * ZipReader.maxCompressionRatio))
        // It stopped soon after the allowance, not at the end.
        #expect(stream.bytesRead <= member.compressedByteCount * ZipReader.maxCompressionRatio + 4096)
        #expect(stream.bytesRead > ZipReader.compressionRatioAllowanceByteCount)
    }

    @Test func stopsAMemberLongerThanDeclared() throws {
        let zip = try ZipReader(path: importFixtures + "/zip/lying-size.zip")
        let member = zip.members[0]
        #expect(member.declaredByteCount == 100)
        let stream = try zip.open(member)
        #expect(throws: FormatError.self) { _ = try drain(stream) }
        // Either our declared-size check or libzip's own consistency check stops it.
        #expect(stream.failure != nil)
    }

    @Test func refusesANonZip() {
        #expect(throws: ZipError.self) { _ = try ZipReader(path: importFixtures + "/zip/missing.zip") }
        #expect(throws: ZipError.self) { _ = try ZipReader(path: fixturesRoot + "/README.md") }
    }

    @Test func streamsTheBigJournal() throws {
        let zip = try ZipReader(path: fixturesRoot + "/pepys-dayone.zip")
        #expect(zip.members.map(\.name) == ["Pepys Diary.json", "photos/b0402d74f1a7bb92214b91e10ba1dbe1.png", "photos/fc1ec2f3c17037ab8c691028bb62471f.jpeg"])
        let json = try drain(zip.open(zip.members[0]))
        #expect(json.count == 6_863_212)
    }
}
