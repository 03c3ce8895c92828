import Foundation
import Quire
import QuireExport
import Testing
@testable import QuirePDF

@Suite struct SmokeTests {
    @Test func tolstoyToTmp() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir, name: "Tolstoy", entries: try Fixtures.journal("tolstoy.jsonl"), zone: "Europe/Moscow", offset: 10800, photoEvery: 10)
        let r = try writePDFBook(vault, to: "/tmp/pdfsmoke-tolstoy.pdf")
        print("REPORT", r)
        let v2 = try makeVault(TemporaryDirectory(), name: "Lu Xun 鲁迅日记", entries: try Fixtures.journal("luxun.jsonl", limit: 300), zone: "Asia/Shanghai", offset: 28800, photoEvery: 50)
        print("REPORT", try writePDFBook(v2, to: "/tmp/pdfsmoke-luxun.pdf"))
        let v3 = try makeVault(TemporaryDirectory(), name: "The Diary of Samuel Pepys", entries: try Fixtures.journal("pepys.jsonl", limit: 50), zone: "Europe/London", offset: 0, photoEvery: 7)
        print("REPORT", try writePDFBook(v3, to: "/tmp/pdfsmoke-pepys.pdf"))
    }
}
