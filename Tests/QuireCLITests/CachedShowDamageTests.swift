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

    /// A record's stored body hash changed after the cache was written, in
    /// a commit of several entries: a read of the file finds that commit a
    /// mismatch and shows its other entries unverified. From the cache's
    /// frame table the commit verified and they were shown verified (stop
    /// 39's trial, F1); the record that fails now makes the handle drop the
    /// cache and read the file whole.
    @Test func aChangedBodyHashInTheCachedPrefixReadsAsWithoutTheCache() throws {
        let box = try Sandbox()
        try box.makeVault()
        let entries = (1...5).map { i in
            #"{"title": "Entry \#(i).", "body": "Words of entry \#(i).", "date": "2000-01-01", "time": "0\#(i):00", "tags": [], "starred": false}"#
        }
        try box.write("j.json", #"{"tags": {}, "entries": ["# + entries.joined(separator: ", ") + "]}")
        let imported = try box.quire(["import", "jrnl", "j.json", "Journal.quire", "--time-zone", "UTC"])
        #expect(imported.status == 0, "\(imported)")
        _ = try box.quire(["list", "Journal.quire", "-n", "5"])
        #expect(try !ListingOutputTests.cacheFiles(box).isEmpty)
        // The last record's body hash ends where the commit frame begins.
        let url = URL(fileURLWithPath: box.path("Journal.quire"))
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count - 216 - 10] ^= 0x04
        try bytes.write(to: url)
        let cache = try ListingOutputTests.cacheFiles(box)
        let saved = try cache.map { try Data(contentsOf: URL(fileURLWithPath: box.path("home/caches/" + $0))) }
        for command in [["list", "Journal.quire", "-n", "5"], ["list", "Journal.quire"], ["stats", "Journal.quire"]] {
            for (name, data) in zip(cache, saved) {
                let path = box.path("home/caches/" + name)
                try data.write(to: URL(fileURLWithPath: path))
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            }
            let cached = try box.quire(command)
            try Self.removeCache(box)
            let whole = try box.quire(command)
            #expect(whole.stderr.contains("could not be verified"), "\(command): \(whole)")
            #expect(
                cached.status == whole.status && cached.stdout == whole.stdout && cached.stderr == whole.stderr, "\(command): \(cached)")
        }
    }
}
