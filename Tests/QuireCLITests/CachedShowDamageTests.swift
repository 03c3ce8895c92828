import Foundation
import Testing

/// `quire show` answers from this device's index cache, reading only the
/// entry's own record; when that record was damaged after the cache was
/// written, it reads the vault whole — and must then say what could not be
/// read, as it does without the cache (stop 39's trial, F2: it said nothing,
/// so an entry's newest revision disappeared silently).
@Suite struct CachedShowDamageTests {
    /// Flips one bit inside the last record of `Journal.quire` (before its
    /// commit frame, 216 bytes).
    static func damageLastRecord(_ box: Sandbox) throws {
        let url = URL(fileURLWithPath: box.path("Journal.quire"))
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count - 216 - 60] ^= 0x01
        try bytes.write(to: url)
    }

    static func removeCache(_ box: Sandbox) throws {
        for file in try ListingOutputTests.cacheFiles(box) { try FileManager.default.removeItem(atPath: box.path("home/caches/" + file)) }
    }

    @Test func aNewEntryWhoseRecordWasDamagedIsSaid() throws {
        let box = try Sandbox()
        try box.makeVault()
        for i in 1...3 { _ = try box.add("entry \(i)", ["--date", "2020-01-0\(i)T10:00"]) }
        let id = String(try box.quire(["list", "Journal.quire", "-n", "1"]).stdout.prefix(8))
        #expect(try !ListingOutputTests.cacheFiles(box).isEmpty)
        try Self.damageLastRecord(box)
        let cached = try box.quire(["show", "Journal.quire", id])
        try Self.removeCache(box)
        let whole = try box.quire(["show", "Journal.quire", id])
        #expect(whole.status == 1 && whole.stderr.contains("could not be read"), "\(whole)")
        #expect(cached.status == whole.status && cached.stdout == whole.stdout && cached.stderr == whole.stderr, "\(cached)")
    }

    @Test func anEditWhoseRecordWasDamagedIsSaid() throws {
        let box = try Sandbox()
        try box.makeVault()
        for i in 1...2 { _ = try box.add("entry \(i)", ["--date", "2020-01-0\(i)T10:00"]) }
        let id = String(try box.quire(["list", "Journal.quire", "-n", "1"]).stdout.prefix(8))
        let edit = try box.quire(["edit", "Journal.quire", id, "-"], stdin: "entry 2, edited: the new text\n")
        #expect(edit.status == 0, "\(edit)")
        try Self.removeCache(box)
        _ = try box.quire(["list", "Journal.quire", "-n", "1"])
        #expect(try !ListingOutputTests.cacheFiles(box).isEmpty)
        try Self.damageLastRecord(box)
        let cached = try box.quire(["show", "Journal.quire", id])
        try Self.removeCache(box)
        let whole = try box.quire(["show", "Journal.quire", id])
        #expect(whole.status == 0 && whole.stderr.contains("could not be read") && !whole.stdout.contains("edited"), "\(whole)")
        #expect(cached.status == whole.status && cached.stdout == whole.stdout && cached.stderr == whole.stderr, "\(cached)")
    }
}
