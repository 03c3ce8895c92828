import Foundation
import Testing

/// One id per attachment: the id in the entry's text links
/// (`quire-attachment://ID`) is the one `attachments`, `show` and `extract` use.
@Suite struct AttachmentIDTests {
    @Test func theIdInTheTextIsTheIdExtractTakes() throws {
        let box = try Sandbox()
        try box.makeVault()
        // A Day One export with one photo linked from the text.
        let photo = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try FileManager.default.createDirectory(atPath: box.path("export/photos"), withIntermediateDirectories: true)
        try Data(photo).write(to: URL(fileURLWithPath: box.path("photo.jpg")))
        let md5 = try box.shell("md5sum photo.jpg").stdout.prefix(32)
        try FileManager.default.copyItem(atPath: box.path("photo.jpg"), toPath: box.path("export/photos/\(md5).jpeg"))
        let moment = "AD64F1E2D3C4B5A69788796A5B4C3D2E"
        try box.write("export/Journal.json", """
            {"metadata": {"version": "1.0"}, "entries": [{"uuid": "F4CF0509F3EA47D1B56F95D37F165F5E",
              "creationDate": "2026-03-01T08:00:00Z", "timeZone": "Europe/London",
              "text": "By the river\\n\\n![](dayone-moment://\(moment))",
              "photos": [{"identifier": "\(moment)", "md5": "\(md5)", "type": "jpeg"}]}]}
            """)
        let imported = try box.quire(["import", "dayone", "export", "Journal.quire"])
        #expect(imported.status == 0, "\(imported)")
        let entry = "f4cf0509"
        let show = try box.quire(["show", "Journal.quire", entry])
        let linked = moment.lowercased()
        #expect(show.stdout.contains("quire-attachment://\(linked)"), "\(show)")
        #expect(show.stdout.contains("attached: \(linked)"), "\(show)")
        let list = try box.quire(["attachments", "Journal.quire", entry, "--json"]).json()
        #expect((list["attachments"] as? [[String: Any]])?.first?["id"] as? String == linked, "\(list)")
        let x = try box.quire(["extract", "Journal.quire", String(linked.prefix(4)), "-o", "out.jpg"])
        #expect(x.status == 0, "\(x)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.path("out.jpg"))) == Data(photo))
    }
}
