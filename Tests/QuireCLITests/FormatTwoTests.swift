import Foundation
import Testing

/// What format version 2 changed for the command line: rollbacks refuse
/// writes until accepted, and a passphrase reads but does not write.
@Suite struct FormatTwoCommandTests {
    /// A file put back to an older copy refuses writes (`rolled_back`) with
    /// a hint naming both ways out; `keys accept-rollback` takes the file
    /// as it is and writing works again (`Spec/keys.md §7`).
    @Test func aRolledBackFileRefusesWritesUntilAccepted() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("kept")
        let older = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        // A key change this device remembers; the older copy lacks its keyring.
        #expect(try box.quire(["keys", "rotate", "Journal.quire"]).status == 0)
        _ = try box.add("lost by the rollback")
        try older.write(to: URL(fileURLWithPath: box.path("Journal.quire")))

        let refused = try box.quire(["add", "Journal.quire", "after the rollback", "--json"])
        #expect(refused.status == 1, "\(refused)")
        let error = try #require(refused.json()["error"] as? [String: Any])
        #expect(error["code"] as? String == "rolled_back")
        #expect(
            error["hint"] as? String
                == "merge the newer copy back with 'quire merge Journal.quire NEWER-COPY', or, if you restored this file on purpose, run 'quire keys accept-rollback Journal.quire'"
        )
        #expect(
            refused.stderr.hasPrefix(
                "quire: warning: this file looks older than the copy this device last saw: 1 keyring this device trusted is missing from it."),
            "\(refused)")
        // Reading is never refused.
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.status == 0, "\(list)")
        #expect(list.stdout.contains("kept") && !list.stdout.contains("lost by the rollback"), "\(list)")

        let accept = try box.quire(["keys", "accept-rollback", "Journal.quire"])
        #expect(accept.status == 0, "\(accept)")
        #expect(accept.stdout == "accepted: this device now takes Journal.quire as it is, and writing to it is allowed again\n", "\(accept)")
        let again = try box.quire(["keys", "accept-rollback", "Journal.quire", "--json"])
        #expect(again.stderr == "", "\(again)")
        #expect(try again.json()["accepted"] as? Bool == false)
        let written = try box.quire(["add", "Journal.quire", "after the rollback"])
        #expect(written.status == 0, "\(written)")
        #expect(written.stderr == "", "\(written)")
    }

    /// A passphrase opens the vault for reading; a write with it is refused
    /// as `operation_refused` (`Spec/format.md §9.4`), and nothing is written.
    @Test func aPassphraseReadsButDoesNotWrite() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("hello")
        try box.write("pass.txt", "correct horse battery\n")
        #expect(try box.quire(["keys", "passphrase", "Journal.quire", "--new-passphrase-file", "pass.txt"]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let read = try box.quire(["list", "Journal.quire", "--passphrase-file", "pass.txt"], env: stranger)
        #expect(read.status == 0, "\(read)")
        #expect(read.stdout.contains("hello"))
        let write = try box.quire(["add", "Journal.quire", "more", "--passphrase-file", "pass.txt", "--json"], env: stranger)
        #expect(write.status == 1, "\(write)")
        let error = try #require(write.json()["error"] as? [String: Any])
        #expect(error["code"] as? String == "operation_refused")
        #expect((error["message"] as? String)?.contains("can read this vault but not write to it") == true, "\(write)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire"))) == before)
    }
}

/// A version no member attested is never shown as a member's
/// (`Spec/format.md §9.4`).
@Suite struct AttestationDisplayTests {
    @Test func anUnattestedVersionNamesNoMember() throws {
        let box = try Sandbox()
        try box.makeVault()
        let id = try box.add("one")
        let attested = try box.quire(["versions", "Journal.quire", id, "--json"]).json()
        let before = try #require((attested["versions"] as? [[String: Any]])?.first)
        #expect(before["device"] as? String == "the device \"Laptop\"")
        #expect(before["attested"] as? Bool == true)
        // The last 16 bytes of the file are the tag of the last commit's
        // sealed attestation (Spec/format.md §9.2), which its head covers
        // (sixth review R6-1): flipped, the commit no longer verifies, and
        // its revision is neither verified nor a member's.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        bytes[bytes.count - 3] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: box.path("Journal.quire")))

        let versions = try box.quire(["versions", "Journal.quire", id])
        #expect(versions.status == 0, "\(versions)")
        #expect(versions.stdout.contains("by no member (unattested)\n"), "\(versions)")
        #expect(!versions.stdout.contains("Laptop"), "\(versions)")
        let json = try box.quire(["versions", "Journal.quire", id, "--json"]).json()
        let version = try #require((json["versions"] as? [[String: Any]])?.first)
        #expect(version["device"] as? String == "no member (unattested)")
        #expect(version["attested"] as? Bool == false)
        let show = try box.quire(["show", "Journal.quire", id])
        // Damage, said as such: not blamed on a passphrase or another program.
        #expect(show.stdout.contains("\nverified: no: the commit holding this revision did not verify"), "\(show)")
        #expect(!show.stdout.contains("another program"), "\(show)")
        let shown = try box.quire(["show", "Journal.quire", id, "--json"]).json()
        #expect(shown["verified"] as? Bool == false)
        #expect(shown["attested"] as? Bool == false)
    }
}
