import Foundation
@_spi(Format) import Quire
import QuireSystem
import Synchronization
import Testing

@testable import QuireCommandLine

/// Findings of the 25th trial (a hostile CLI trial): bad input never
/// crashes, and nothing is dropped silently.
@Suite struct Trial25Tests {
    /// A Markdown-folder entry (`Spec/import.md §10`) created at `created`.
    static func markdownEntry(id: String, created: String, allDay: Bool = false, text: String) -> String {
        """
        ---
        quire: 1
        id: "\(id)"
        date: "2026-03-01T08:30:00+00:00"
        created: \(created)
        modified: null
        timeZone: "Etc/UTC"
        utcOffset: 0
        allDay: \(allDay)
        tags: []
        starred: false
        pinned: false
        journal: ""
        attachments:
        extra: {}
        ---
        \(text)

        """
    }

    /// F1: `created` at either end of `Int64` (a normal Markdown import, or
    /// any holder of an epoch key) trapped `stats`, and the EPUB and HTML
    /// exports; `show` printed no date and `list --json` a wrong year.
    @Test func anInstantAtEitherEndOfInt64IsShownAndCrashesNothing() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("an ordinary entry", ["--date", "2026-03-01"])
        try FileManager.default.createDirectory(atPath: box.path("md/2026/03"), withIntermediateDirectories: true)
        try box.write(
            "md/2026/03/a.md", Self.markdownEntry(id: String(repeating: "5", count: 32), created: "9223372036854775807", text: "far future")
        )
        try box.write(
            "md/2026/03/b.md", Self.markdownEntry(id: String(repeating: "6", count: 32), created: "-9223372036854775808", text: "far past"))
        try box.write(
            "md/2026/03/c.md",
            Self.markdownEntry(
                id: String(repeating: "7", count: 32), created: "-9223372036854775807", allDay: true, text: "all day, far past"))
        let imported = try box.quire(["import", "markdown", "md", "Journal.quire"])
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stdout.contains("entries: 3 added"), "\(imported)")

        let stats = try box.quire(["stats", "Journal.quire"])
        #expect(stats.status == 0, "\(stats)")
        #expect(stats.stdout.contains("entries:  4, from -292275055-05-16 to 292278994-08-17\n"), "\(stats)")
        #expect(stats.stdout.contains("\n-292275055 "), "\(stats)")
        #expect(stats.stdout.contains("\n292278994 "), "\(stats)")
        let statsJSON = try box.quire(["stats", "Journal.quire", "--json"])
        #expect(statsJSON.status == 0, "\(statsJSON)")
        let json = try statsJSON.json()
        #expect(json["first"] as? String == "-292275055-05-16T16:47:04Z")
        #expect(json["last"] as? String == "292278994-08-17T07:12:55Z")
        #expect((json["years"] as? [[String: Any]])?.compactMap { $0["year"] as? Int } == [-292_275_055, 2026, 292_278_994])

        let show = try box.quire(["show", "Journal.quire", String(repeating: "5", count: 32)])
        #expect(show.stdout.contains("date:     292278994-08-17 07:12 (written in Etc/UTC)\n"), "\(show)")
        let allDay = try box.quire(["show", "Journal.quire", String(repeating: "7", count: 32)])
        #expect(allDay.stdout.contains("date:     -292275055-05-16 (all day)"), "\(allDay)")
        let list = try box.quire(["list", "Journal.quire", "--json"]).json()
        let created = (list["entries"] as? [[String: Any]])?.compactMap { $0["created"] as? String }
        #expect(
            created == ["-292275055-05-16T16:47:04Z", "-292275055-05-16T16:47:04Z", "2026-03-01T00:00:00Z", "292278994-08-17T07:12:55Z"])

        for format in ["epub", "html", "json", "md", "pdf"] {
            let r = try box.quire(["export", "Journal.quire", "--format", format, "-o", "out-\(format)"])
            #expect(r.status == 0, "\(format): \(r)")
        }
        let html = try String(contentsOfFile: box.path("out-html"), encoding: .utf8)
        #expect(html.contains("May -292275055"))
        #expect(html.contains("August 292278994"))
        let left = try FileManager.default.contentsOfDirectory(atPath: box.dir).filter { $0.hasSuffix(".tmp") }
        #expect(left.isEmpty, "\(left)")
    }

    /// F2: `compact` copied a damaged attachment chunk into its new attested
    /// commit and reported success; `--rekey` refused with "the merged file
    /// did not verify". Both refuse as for a damaged entry (merge.md §6).
    @Test func compactionRefusesADamagedAttachmentChunk() throws {
        let box = try Sandbox()
        _ = try HostileTrialTests.damagedAttachmentVault(box)
        let before = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        for extra in [[], ["--rekey"]] {
            let r = try box.quire(["compact", "Journal.quire"] + extra)
            #expect(r.status != 0, "\(extra): \(r)")
            #expect(r.stderr.contains("the vault has 1 damaged or unverified record"), "\(extra): \(r)")
            #expect(r.stderr.contains("does not authenticate"), "\(extra): \(r)")
            #expect(!r.stderr.contains("did not verify"), "\(extra): \(r)")
            // Stop 29's CLI trial: the refusal said "fold its copies or keep it
            // as it is" and gave no hint line.
            #expect(!r.stderr.contains("fold its copies"), "\(extra): \(r)")
            #expect(
                r.stderr.hasSuffix(
                    "\nquire: hint: merge a copy that holds those records intact ('quire merge Journal.quire COPY'), then compact; or compact without them ('quire compact Journal.quire --drop-unverified'); 'quire verify Journal.quire' lists them\n"
                ), "\(extra): \(r)")
            let json = try box.quire(["compact", "Journal.quire", "--json"] + extra).json()
            #expect((json["error"] as? [String: Any])?["code"] as? String == "compaction_refused", "\(json)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire"))) == before)
        // Asked to, it drops the attachment (and says so); what is left verifies.
        let dropped = try box.quire(["compact", "Journal.quire", "--drop-unverified"])
        #expect(dropped.status == 0, "\(dropped)")
        let verify = try box.quire(["verify", "Journal.quire"])
        #expect(verify.status == 0, "\(verify)")
    }

    /// F3: in text mode `attachments` showed a damaged attachment as healthy
    /// and warned nothing (its JSON said `"damaged": true`).
    @Test func attachmentsSaysADamagedAttachmentInText() throws {
        let box = try Sandbox()
        let (_, pictured) = try HostileTrialTests.damagedAttachmentVault(box)
        let r = try box.quire(["attachments", "Journal.quire", pictured])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("DAMAGED (cannot be read; see 'quire verify')"), "\(r)")
        #expect(r.stderr.contains("1 record in Journal.quire could not be read"), "\(r)")
        #expect(r.stderr.components(separatedBy: "could not be read").count == 2, "one warning: \(r)")
        let json = try box.quire(["attachments", "Journal.quire", pictured, "--json"])
        #expect((try json.json()["attachments"] as? [[String: Any]])?.first?["damaged"] as? Bool == true)
        #expect(json.stderr.components(separatedBy: "could not be read").count == 2, "one warning: \(json)")
    }

    /// F4: `show` and `attachments` read every attachment reference's damage
    /// once for each reference (4,000 references: 30 s). Counted, not timed:
    /// the attachments looked at grow with the references.
    @Test func anEntrysAttachmentsAreLookedAtOnceEach() throws {
        let box = try Sandbox()
        try box.makeVault()
        let code = try String(contentsOfFile: box.path("recovery.txt"), encoding: .utf8).trimmingCharacters(in: .newlines)
        let vault = try Vault.open(at: box.path("Journal.quire"), credential: .recoveryKey(try RecoveryKey(code: code)))
        let n = 2000
        var refs: [AttachmentReference] = []
        for i in 0..<n {
            let low = UInt8(i % 256)
            let high = UInt8(i / 256)
            var id = [UInt8](repeating: low, count: 16)
            id[15] = high
            var blob = [UInt8](repeating: 0x7e, count: 32)
            blob[30] = low
            blob[31] = high
            refs.append(AttachmentReference(id: id, blob: BlobID(unchecked: blob), fileName: "f\(i).jpg"))
        }
        Reading.include(refs)
        let before = Reading.attachmentsVisited.load(ordering: .relaxed)
        let list = AttachmentJSON.list(refs, vault: vault)
        let visited = Reading.attachmentsVisited.load(ordering: .relaxed) - before
        #expect(list.count == n)
        #expect(list.allSatisfy { $0.byteCount == nil && !$0.damaged })
        // Once each (other tests may include a few of their own); asking for
        // each reference looked at n² = 4,000,000.
        #expect(visited >= n && visited < 2 * n, "\(visited)")
    }

    /// F5: a rollback this device detects was only a stderr warning: the
    /// JSON of `list` and `export` said nothing was missing.
    @Test func aSuspectedRollbackIsInTheJSON() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("one")
        _ = try box.add("two")
        // Cut the last byte: the last commit is a torn tail, and this device
        // remembers the file going further.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        try bytes.prefix(bytes.count - 1).write(to: URL(fileURLWithPath: box.path("Journal.quire")))
        for args in [["list", "Journal.quire", "--json"], ["export", "Journal.quire", "--format", "json", "-o", "out.json", "--json"]] {
            let r = try box.quire(args)
            #expect(r.status == 0, "\(args): \(r)")
            #expect(r.stderr.contains("older than"), "\(args): \(r)")
            let unread = UnreadRecordCommandTests.unread(try r.json())
            #expect(unread.count == 1, "\(args): \(r)")
            #expect(unread.codes.first == "rollback_suspected", "\(args): \(r)")
        }
        // In text, the warning is said once, not again as an unread record.
        let list = try box.quire(["list", "Journal.quire"])
        #expect(!list.stderr.contains("could not be read"), "\(list)")
    }
}
