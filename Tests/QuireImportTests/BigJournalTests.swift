import Foundation
@_spi(Format) import Quire
import QuireDayOne
@_spi(Format) import QuireImport
import Testing
import QuireTestSupport

/// The three big journals of the shared corpus, imported from their ZIPs.
@Suite(.tags(.slow), .skippedByMakeCheck) struct BigJournalTests {
    /// The corpus jsonl lines: date and text of every entry, in export order.
    func jsonl(_ name: String) throws -> [(date: String, text: String)] {
        let text = try String(contentsOfFile: "/work/shared/corpus/\(name).jsonl", encoding: .utf8)
        return text.split(separator: "\n").map { line in
            let o = try! JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return (o["date"] as! String, o["text"] as! String)
        }
    }

    /// The entries in export order (the export is not sorted by date everywhere).
    func inExportOrder(_ vault: Vault, zipName: String, json: String) throws -> [EntrySnapshot] {
        let bytes = try zipMember(fixturesRoot + "/" + zipName, json)
        let root = try JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any]
        let byUUID = try entriesByUUID(vault)
        return (root["entries"] as! [[String: Any]]).map { byUUID[$0["uuid"] as! String]! }
    }

    @Test func pepys() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: fixturesRoot + "/pepys-dayone.zip", into: vault)
        #expect(report.entriesAdded == 3413)
        #expect(report.journals == ["Pepys Diary"])
        #expect(report.skipped == [])
        // 12 photos over two distinct files: each stored once.
        #expect(report.attachmentsStored == 2)
        #expect(report.attachmentsMissing == 0)
        let entries = try vault.entries()
        #expect(entries.count == 3413)
        let withPhotos = entries.filter { !$0.body.attachments.isEmpty }
        #expect(withPhotos.count == 12)
        #expect(Set(withPhotos.flatMap { $0.body.attachments.map(\.mediaType) }) == ["image/jpeg", "image/png"])
        // The photo is the file from the export, byte for byte.
        let cover = try zipMember(fixturesRoot + "/pepys-dayone.zip", "photos/fc1ec2f3c17037ab8c691028bb62471f.jpeg")
        let ref = withPhotos[0].body.attachments[0]
        #expect(try vault.openAttachment(ref.blob).readAll() == cover)
        // Every link now names an attachment reference of its entry.
        for e in withPhotos {
            #expect(!e.body.text.contains("dayone-moment:"))
            for r in e.body.attachments { #expect(e.body.text.contains("quire-attachment://" + r.id.map { String(format: "%02x", $0) }.joined())) }
        }
        // Dates in Europe/London, local mean time (−0:01:15) in the 1660s: 22:00 local.
        let first = entries[0]
        #expect(first.body.timeZoneIdentifier == "Europe/London")
        #expect(first.body.utcOffsetSeconds == -75)
        #expect(ImportDates.localDateTime(milliseconds: first.body.createdMilliseconds, offsetSeconds: -75) == "1660-01-11 22:00:00")
        #expect(first.body.journal == "Pepys Diary")
        // Text byte-exact against the corpus jsonl (which has no photo links).
        let lines = try jsonl("pepys")
        #expect(lines.count == 3413)
        var mismatches = 0
        for (e, line) in zip(try inExportOrder(vault, zipName: "pepys-dayone.zip", json: "Pepys Diary.json"), lines) {
            var text = e.body.text
            if let r = text.range(of: "\n\n![](quire-attachment://") { text = String(text[..<r.lowerBound]) }
            if !text.utf8.elementsEqual(line.text.utf8) { mismatches += 1 }
            let off = e.body.utcOffsetSeconds ?? 0
            if ImportDates.calendarDate(milliseconds: e.body.createdMilliseconds, offsetSeconds: off) != line.date { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    @Test func luXun() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: fixturesRoot + "/luxun-dayone.zip", into: vault)
        #expect(report.entriesAdded == 7461)
        #expect(report.skipped == [])
        let entries = try vault.entries()
        #expect(entries.count == 7461)
        #expect(Set(entries.map { ImportDates.calendarDate(milliseconds: $0.body.createdMilliseconds, offsetSeconds: $0.body.utcOffsetSeconds ?? 0) }).count == 7380)
        let lines = try jsonl("luxun")
        var mismatches = 0
        for (e, line) in zip(try inExportOrder(vault, zipName: "luxun-dayone.zip", json: "Lu Xun Diary.json"), lines) {
            if !e.body.text.utf8.elementsEqual(line.text.utf8) { mismatches += 1 }
            if ImportDates.calendarDate(milliseconds: e.body.createdMilliseconds, offsetSeconds: e.body.utcOffsetSeconds ?? 0) != line.date { mismatches += 1 }
            // 22:00 local (+ n minutes for the n-th entry of a day), Shanghai time, +9 in the 1919 summer.
            if !ImportDates.localDateTime(milliseconds: e.body.createdMilliseconds, offsetSeconds: e.body.utcOffsetSeconds ?? 0).hasSuffix(":00") { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(entries.first!.body.tags.first == "1912")
        #expect(entries.allSatisfy { $0.body.timeZoneIdentifier == "Asia/Shanghai" })
    }

    @Test func tolstoy() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: fixturesRoot + "/tolstoy-dayone.zip", into: vault)
        #expect(report.entriesAdded == 51)
        let entries = try vault.entries()
        #expect(entries.count == 51)
        let lines = try jsonl("tolstoy")
        #expect(zip(try inExportOrder(vault, zipName: "tolstoy-dayone.zip", json: "Tolstoy Diary.json"), lines).allSatisfy { $0.body.text.utf8.elementsEqual($1.text.utf8) })
        // Moscow local mean time in 1852: +2:30:17.
        #expect(entries[0].body.utcOffsetSeconds == 9017)
        #expect(ImportDates.localDateTime(milliseconds: entries[0].body.createdMilliseconds, offsetSeconds: 9017) == "1852-06-01 22:00:00")
        #expect(entries.contains { $0.body.text.hasPrefix("[*19 июня.*] *18 и 19 Іюня.*") })
        #expect(entries.contains { $0.body.text.contains("ѣ") })
    }
}
