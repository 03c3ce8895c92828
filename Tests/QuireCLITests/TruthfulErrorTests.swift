import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

@Suite struct TruthfulErrorTests {
    @Test func aFileWithConvertedLineEndingsOrAZeroedStartIsDamageNotAForeignFile() throws {
        let box = try Sandbox()
        try box.bigVault()
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire"))))
        // CR LF → LF, as a text-mode transfer does.
        var converted: [UInt8] = []
        for (i, b) in original.enumerated() where !(b == 0x0d && i + 1 < original.count && original[i + 1] == 0x0a) { converted.append(b) }
        try Data(converted).write(to: URL(fileURLWithPath: box.path("crlf.quire")))
        let crlf = try box.quire(["verify", "crlf.quire"])
        #expect(crlf.status == 2, "\(crlf)")
        #expect(crlf.stdout.contains("DAMAGED"), "\(crlf)")
        #expect(crlf.stderr.contains("line endings were converted"), "\(crlf)")
        #expect(!crlf.stderr.contains("not a Quire vault"), "\(crlf)")
        #expect(try box.quire(["list", "crlf.quire"]).stderr.contains("line endings were converted"))
        // The first 4 KiB zeroed.
        var zeroed = original
        for i in 0..<4096 { zeroed[i] = 0 }
        try Data(zeroed).write(to: URL(fileURLWithPath: box.path("zeroed.quire")))
        let z = try box.quire(["verify", "zeroed.quire", "--json"])
        #expect(z.status == 2, "\(z)")
        #expect((try z.json()["issues"] as? [[String: Any]])?.first?["code"] as? String == "header_damaged", "\(z)")
        #expect(try box.quire(["info", "zeroed.quire"]).stderr.contains("header is damaged"))
        // A file that never was a vault is still "not a Quire vault" (exit 1).
        try Data(String(repeating: "just some text\r\n", count: 400).utf8).write(to: URL(fileURLWithPath: box.path("text.quire")))
        let text = try box.quire(["verify", "text.quire"])
        #expect(text.status == 1, "\(text)")
        #expect(text.stderr.contains("not a Quire vault"), "\(text)")
    }
}
