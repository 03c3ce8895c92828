import Foundation
import Testing

/// `quire` links no PDF stack (issue 14: loading cairo, pango and the
/// libraries under them cost every command its start-up); `quire export
/// --format pdf` runs the `quire-book` helper beside it instead.
@Suite struct BookHelperTests {
    #if os(Linux)
        @Test func quireLoadsNoPDFLibraries() throws {
            let box = try Sandbox()
            let ldd = try box.run("/usr/bin/ldd", [box.binary], stdin: nil, env: [:])
            #expect(ldd.status == 0, "\(ldd)")
            #expect(ldd.stdout.contains("libsodium"), "\(ldd)")
            for library in ["libcairo", "libpango", "libharfbuzz", "libfontconfig", "libX11", "libglib"] {
                #expect(!ldd.stdout.contains(library), "quire links \(library)")
            }
        }
    #endif

    @Test func theBookIsWrittenByTheHelperWithTheSameArguments() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("An entry for the book", ["--date", "2026-03-01"])
        let r = try box.quire(["export", "Journal.quire", "--format", "pdf", "-o", "book.pdf", "--json"])
        #expect(r.status == 0, "\(r)")
        let json = try r.json()
        #expect(json["format"] as? String == "pdf" && json["entries"] as? Int == 1, "\(r)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.path("book.pdf"))).prefix(5) == Data("%PDF-".utf8))
    }

    @Test func withoutTheHelperTheBookIsRefusedAndNothingIsWritten() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("An entry for the book")
        // quire alone, in a folder without quire-book.
        let lone = box.path("lone")
        try FileManager.default.createDirectory(atPath: lone, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: box.binary, toPath: lone + "/quire")
        let r = try box.run(lone + "/quire", ["export", "Journal.quire", "-o", "book.pdf", "--json"], stdin: nil, env: [:])
        #expect(r.status == 1, "\(r)")
        let error = try r.json()["error"] as? [String: Any]
        #expect(error?["code"] as? String == "helper_missing", "\(r)")
        #expect(!FileManager.default.fileExists(atPath: box.path("book.pdf")))
        // Every other format is written by quire itself.
        let html = try box.run(lone + "/quire", ["export", "Journal.quire", "-o", "book.html"], stdin: nil, env: [:])
        #expect(html.status == 0, "\(html)")
    }
}
