import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireExport
import Testing
import QuireTestSupport

/// Runs epubcheck on `path`; nil when java or epubcheck is missing.
func epubcheck(_ path: String) throws -> (status: Int32, output: String)? {
    let jar = "/usr/share/java/epubcheck.jar"
    let java = ["/usr/bin/java", "/usr/local/bin/java"].first { FileManager.default.isExecutableFile(atPath: $0) }
    guard let java, FileManager.default.fileExists(atPath: jar) else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: java)
    process.arguments = ["-jar", jar, path]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Expects epubcheck to report no error and no warning (or records why it did not run).
func expectEPUBCheckClean(_ path: String) throws {
    guard let (status, output) = try epubcheck(path) else {
        print("SKIPPED epubcheck: java or /usr/share/java/epubcheck.jar is missing")
        return
    }
    #expect(status == 0, "\(output)")
    #expect(output.contains("No errors or warnings detected"), "\(output)")
}

@Suite(.tags(.slow), .skippedByMakeCheck) struct EPUBExportTests {
    @Test func sampleBookPassesEPUBCheckAndIsDeterministic() throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        let report = try exportJournal(vault, format: .epub, to: dir.file("a.epub"))
        #expect(report.entries == 5)
        #expect(report.attachments == 1)
        _ = try exportJournal(vault, format: .epub, to: dir.file("b.epub"))
        let a = try Data(contentsOf: URL(fileURLWithPath: dir.file("a.epub")))
        let b = try Data(contentsOf: URL(fileURLWithPath: dir.file("b.epub")))
        #expect(a == b)
        #expect(report.bytes == UInt64(a.count))
        // `mimetype` first, stored, no extra field (ZIP local header at offset 0).
        #expect(Array(a.prefix(4)) == [0x50, 0x4B, 0x03, 0x04])
        #expect(a[8] == 0 && a[9] == 0)  // method: stored
        #expect(a[28] == 0 && a[29] == 0)  // extra field length
        #expect(String(decoding: a[30..<38], as: UTF8.self) == "mimetype")
        #expect(String(decoding: a[38..<58], as: UTF8.self) == "application/epub+zip")
        try expectEPUBCheckClean(dir.file("a.epub"))
        #expect(dir.listing() == ["a.epub", "b.epub", "v.quire"])
    }

    @Test(arguments: [
        ("pepys.jsonl", "Pepys Diary", "Europe/London", true), ("luxun.jsonl", "Lu Xun Diary", "Asia/Shanghai", false),
        ("tolstoy.jsonl", "Tolstoy Diary", "Europe/Moscow", false),
    ])
    func corpusBooksPassEPUBCheck(_ file: String, _ journal: String, _ zone: String, _ photos: Bool) throws {
        let dir = TemporaryDirectory()
        let vault = try makeCorpusVault(dir, jsonl: file, journal: journal, timeZone: zone, photos: photos)
        let report = try exportJournal(vault, format: .epub, to: dir.file("book.epub"))
        let expected = try read(fixtures + "/" + file).split(separator: "\n").count
        #expect(report.entries == expected)
        #expect(report.attachments == (photos ? 1 : 0))
        try expectEPUBCheckClean(dir.file("book.epub"))
    }
}
