import Foundation
@_spi(Format) import Quire
import Testing

/// Findings of the second hostile trial of the CLI: damage every reading
/// command must say.
@Suite struct HostileTrialTests {
    /// A vault of two entries, the second with a 3000-byte attachment whose
    /// one chunk has a byte of its ciphertext flipped.
    static func damagedAttachmentVault(_ box: Sandbox) throws -> (plain: String, pictured: String) {
        try box.makeVault()
        let plain = try box.add("plain entry")
        try Data((0..<3000).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: box.path("pic.bin")))
        let pictured = try box.add("with a picture", ["--attach", box.path("pic.bin")])
        let chunks = try VaultScanner.scan(path: box.path("Journal.quire")).frames.filter { $0.header.kind == .blobChunk }
        let chunk = try #require(chunks.first)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        bytes[Int(chunk.bodyOffset) + Int(chunk.header.bodyLength) / 2] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: box.path("Journal.quire")))
        return (plain, pictured)
    }

    @Test func aDamagedAttachmentChunkIsSaidByListShowExportAndExtract() throws {
        let box = try Sandbox()
        let (_, pictured) = try Self.damagedAttachmentVault(box)
        // A listing reads no attachment bytes (a photo library must list
        // fast): both entries, and no attachment read.
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.status == 0)
        #expect(list.stdout.split(separator: "\n").count == 2)
        #expect(list.stderr == "", "\(list)")

        let show = try box.quire(["show", "Journal.quire", pictured])
        #expect(show.stderr.contains("1 record in Journal.quire could not be read"), "\(show)")
        #expect(show.stdout.contains("DAMAGED"), "\(show)")
        let showJSON = try box.quire(["show", "Journal.quire", pictured, "--json"]).json()
        let attachment = try #require((showJSON["attachments"] as? [[String: Any]])?.first)
        #expect(attachment["damaged"] as? Bool == true)
        #expect(UnreadRecordCommandTests.unread(showJSON).count == 1)

        let refused = try box.quire(["export", "Journal.quire", "--format", "md", "-o", "out"])
        #expect(refused.status == 1, "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: box.path("out")))
        let partial = try box.quire(["export", "Journal.quire", "--format", "md", "-o", "out", "--partial", "--json"])
        #expect(partial.status == 0, "\(partial)")
        let partialJSON = try partial.json()
        #expect(partialJSON["entries"] as? Int == 2)
        #expect(partialJSON["attachments"] as? Int == 0)
        #expect(partialJSON["missingAttachments"] as? Int == 0)
        #expect(partialJSON["partial"] as? Bool == true)
        #expect(UnreadRecordCommandTests.unread(partialJSON).count == 1)
        #expect(partial.stderr.contains("partial export: 1 record in Journal.quire could not be read"), "\(partial)")

        let id = try #require(attachment["id"] as? String)
        let extract = try box.quire(["extract", "Journal.quire", id, "-o", "pic-out.bin"])
        #expect(extract.status != 0)
        #expect(extract.stderr.contains("is damaged"), "\(extract)")
        #expect(extract.stderr.contains("quire verify Journal.quire"), "\(extract)")
        #expect(!FileManager.default.fileExists(atPath: box.path("pic-out.bin")))
    }

    /// A damaged byte in a commit's sealed attestation. Before the head
    /// covered the attestation (sixth review R6-1) the commit still verified
    /// and its records read as unattested (`attestation_failed`), which a
    /// keyless writer could cause on purpose and merge then laundered; now
    /// the commit does not verify, and every command says so.
    @Test func aDamagedAttestationBreaksItsCommitAndIsSaid() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("first entry")
        let second = try box.add("second entry")
        // One byte of the last commit's sealed attestation (after its head
        // and nonce: Spec/format.md §9.2).
        let commit = try #require(VaultScanner.scan(path: box.path("Journal.quire")).frames.last { $0.header.kind == .commit })
        var bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        bytes[Int(commit.bodyOffset) + 32 + 24 + 40] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: box.path("Journal.quire")))
        #expect(try box.quire(["verify", "Journal.quire"]).status == 2)

        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.status == 0)
        #expect(list.stdout.split(separator: "\n").count == 2)
        #expect(list.stderr.contains("commit_mismatch"), "\(list)")
        let listJSON = try box.quire(["list", "Journal.quire", "--json"]).json()
        #expect(UnreadRecordCommandTests.unread(listJSON).codes == ["commit_mismatch"])

        let show = try box.quire(["show", "Journal.quire", second])
        #expect(show.stdout.contains("verified: no"), "\(show)")
        #expect(!show.stdout.contains("another program wrote it"), "\(show)")
        let showJSON = try box.quire(["show", "Journal.quire", second, "--json"]).json()
        #expect(showJSON["verified"] as? Bool == false)
        #expect(showJSON["attested"] as? Bool == false)
        #expect(showJSON["attestationFailed"] as? Bool == false)

        // Export refuses what the chain does not vouch for, and says why.
        let export = try box.quire(["export", "Journal.quire", "-o", "out.json"])
        #expect(export.status == 1, "\(export)")
        #expect(export.stderr.contains("commit_mismatch"), "\(export)")
    }

    @Test func aFileCutBackPastCommitsThisDeviceSawIsSaidByEveryReadingCommand() throws {
        let box = try Sandbox()
        try box.makeVault()
        for i in 1...3 { _ = try box.add("entry \(i)") }
        #expect(try box.quire(["list", "Journal.quire"]).stderr == "")
        // One byte off the end: the last commit is cut, its records become a tail.
        let url = URL(fileURLWithPath: box.path("Journal.quire"))
        let bytes = try Data(contentsOf: url)
        try bytes.prefix(bytes.count - 1).write(to: url)

        for _ in 1...2 {
            let list = try box.quire(["list", "Journal.quire"])
            #expect(list.stdout.split(separator: "\n").count == 2)
            #expect(list.stderr.contains("quire: warning: this file looks older than the copy this device last saw"), "\(list)")
            #expect(list.stderr.contains("records committed there were cut off"), "\(list)")
        }
        let show = try box.quire(["search", "Journal.quire", "entry"])
        #expect(show.stderr.contains("records committed there were cut off"), "\(show)")
        let verify = try box.quire(["verify", "Journal.quire"])
        #expect(verify.status == 2, "\(verify)")
        #expect(!verify.stdout.contains("intact"), "\(verify)")
        #expect(!verify.stdout.contains("are an unfinished write"), "\(verify)")
        #expect(verify.stdout.contains("RECORDS MISSING"), "\(verify)")
        let json = try box.quire(["verify", "Journal.quire", "--json"]).json()
        #expect(json["intact"] as? Bool == false)
        #expect((json["issues"] as? [[String: Any]])?.first?["code"] as? String == "rollback_suspected")
    }

    @Test func aVaultCutInsideItsHeaderIsDamageNotAStranger() throws {
        let box = try Sandbox()
        try box.makeVault()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        for length in [63, 8, 3] {
            try bytes.prefix(length).write(to: URL(fileURLWithPath: box.path("cut.quire")))
            let list = try box.quire(["list", "cut.quire"])
            #expect(list.status == 1)
            #expect(!list.stderr.contains("not a Quire vault"), "\(list)")
            #expect(list.stderr.contains("damaged: the file is a Quire vault cut off, \(length) bytes"), "\(list)")
            let verify = try box.quire(["verify", "cut.quire", "--json"])
            #expect(verify.status == 2, "\(verify)")
            #expect(!verify.stdout.contains("not a Quire vault"), "\(verify)")
            #expect((try verify.json()["issues"] as? [[String: Any]])?.first?["code"] as? String == "truncated_header")
        }
    }

    @Test func formerRecoveryKeysAreNamedAsReplaced() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("written under the first recovery key")
        for n in 2...3 {
            let r = try box.quire(["keys", "recovery-key", "Journal.quire", "--replace", "--new-recovery-key-file", "rk\(n).txt"])
            #expect(r.status == 0, "\(r)")
        }
        let status = try box.quire(["keys", "status", "Journal.quire"])
        let lines = status.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.filter { $0 == "- the recovery key" }.count == 1, "\(status)")
        #expect(lines.filter { $0.hasPrefix("- a former recovery key (replaced 20") }.count == 2, "\(status)")
    }

    @Test func aPassphraseForAVaultWithoutOneIsSaidSo() throws {
        let box = try Sandbox()
        try box.makeVault()
        try box.write("pp.txt", "some passphrase\n")
        let r = try box.quire(["list", "Journal.quire", "--passphrase-file", "pp.txt"], env: ["QUIRE_HOME": box.path("stranger")])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("this vault has no passphrase"), "\(r)")
        #expect(!r.stderr.contains("wrong passphrase"), "\(r)")
    }

    @Test func aMarkdownFileNameIsAnsweredWithTheFolderItNeeds() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("one")
        let r = try box.quire(["export", "Journal.quire", "-o", "out.md"])
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains("a Markdown export is a folder of files"), "\(r)")
        #expect(r.stderr.contains("--format md -o FOLDER"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: box.path("out.md")))
    }
}
