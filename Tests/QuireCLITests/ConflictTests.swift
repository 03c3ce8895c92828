import Foundation
import Testing

/// Conflicts you can see: a conflicted copy waiting beside the vault is
/// mentioned by every command; an entry changed on two devices is marked,
/// shows every version with its device and time, and verify counts it.
@Suite struct ConflictTests {
    @Test func aConflictIsShownEverywhere() throws {
        let box = try Sandbox()
        try box.makeVault()
        let id = try box.add("The first version", ["--date", "2026-03-01"])
        let short = String(id.prefix(8))
        let phone = ["QUIRE_HOME": box.path("phone")]
        let code = try box.quire(["device", "code", "--device-name", "Phone"], env: phone).stdout.trimmingCharacters(in: .newlines)
        #expect(try box.quire(["device", "add", "Journal.quire", code, "--name", "Phone"]).status == 0)
        // The phone edits its copy while the laptop edits the vault.
        let copy = "Journal.sync-conflict-20261201-101530-PHONE77.quire"
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path(copy))
        #expect(try box.quire(["edit", copy, short, "Changed on the phone"], env: phone).status == 0)
        #expect(try box.quire(["edit", "Journal.quire", short, "Changed on the laptop"]).status == 0)
        // Every command says a copy is waiting.
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.stderr == "quire: warning: 1 conflicted copy of Journal.quire is waiting beside it (\(copy)): run 'quire resolve Journal.quire' to fold it in\n", "\(list)")
        let resolve = try box.quire(["resolve", "Journal.quire"])
        #expect(resolve.status == 0, "\(resolve)")
        #expect(resolve.stderr == "1 entry now has conflicting versions (changed on both sides): \(short); 'quire versions ID' shows them\n", "\(resolve)")
        #expect(try box.quire(["list", "Journal.quire"]).stderr == "")
        // The entry is marked, and each version can be read.
        #expect(try box.quire(["list", "Journal.quire"]).stdout.hasSuffix("  (conflict)\n"))
        let show = try box.quire(["show", "Journal.quire", short])
        #expect(show.stdout.contains("conflict: 1 other version kept: 'quire versions \(short)' shows every version; editing the entry keeps one\n"), "\(show)")
        let versions = try box.quire(["versions", "Journal.quire", short])
        #expect(versions.stdout.contains("2 versions: changed apart; editing the entry makes them one again\n"), "\(versions)")
        #expect(versions.stdout.contains("by the device \"Laptop\"\n"), "\(versions)")
        #expect(versions.stdout.contains("by the device \"Phone\"\n"), "\(versions)")
        #expect(versions.stdout.contains("\nChanged on the phone\n") && versions.stdout.contains("\nChanged on the laptop\n"), "\(versions)")
        #expect(try box.quire(["show", "Journal.quire", short, "--all-versions"]).stdout == versions.stdout)
        let j = try box.quire(["versions", "Journal.quire", short, "--json"]).json()
        let rows = try #require(j["versions"] as? [[String: Any]])
        #expect(Set(rows.compactMap { $0["device"] as? String }) == ["the device \"Laptop\"", "the device \"Phone\""])
        #expect(rows.filter { $0["shown"] as? Bool == true }.count == 1)
        // Each device attested its own version; the merge kept both attestations.
        #expect(rows.map { $0["attested"] as? Bool } == [true, true])
        let verify = try box.quire(["verify", "Journal.quire"])
        #expect(verify.stdout.hasPrefix("Journal.quire: intact, 1 entry with conflicting versions. "), "\(verify)")
        #expect(try box.quire(["verify", "Journal.quire", "--json"]).json()["conflictingEntries"] as? Int == 1)
        // An edit with no change does not resolve it by accident; --resolve does.
        let same = try box.quire(["edit", "Journal.quire", short, "--mood", "3"])
        #expect(same.stdout.hasPrefix("edited \(short) (its 2 versions are one again)"), "\(same)")
        #expect(try box.quire(["verify", "Journal.quire", "--json"]).json()["conflictingEntries"] as? Int == 0)
    }
}
