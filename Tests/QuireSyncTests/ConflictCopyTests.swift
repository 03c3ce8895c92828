import Foundation
@_spi(Format) import Quire
import Testing

/// Conflict-copy names, discovery by header, and folding (`Spec/merge.md §2`, §4).
@Suite struct ConflictCopyTests {
    @Test(arguments: [
        ("Journal.sync-conflict-20261129-101530-ABCDEF1.quire", SyncTool.syncthing),
        ("Journal (Sam's conflicted copy 2026-11-29).quire", .dropbox),
        ("Journal (Konfliktkopie von Sam 2026-11-29).quire", .dropbox),
        ("Journal (copie en conflit de Sam 2026-11-29).quire", .dropbox),
        ("Journal (conflicted copy 2026-11-29 101530).quire", .nextcloud),
        ("Journal_conflict-20261129-101530.quire", .nextcloud),
        ("Journal-LAPTOP-7.quire", .onedrive),
        ("Journal (1).quire", .googleDrive),
        ("Journal 2.quire", .iCloudDrive),
        ("Journal (conflict_on_2026-11-29).quire", .unison),
    ])
    func namesOfEachTool(name: String, tool: SyncTool) {
        #expect(ConflictCopyName.tool(of: name, copyOf: "Journal.quire") == tool)
    }

    @Test(arguments: [
        "Journal.quire", "Journal.quire.bak", "Journal.txt", "Notes.quire", "Journal (notes).quire", "Journal.sync-conflict-2026.quire",
        "Journal_conflict-2026.quire", "Journal x.quire", "Journal.quire (1)",
    ])
    func namesThatAreNotCopies(name: String) {
        #expect(ConflictCopyName.tool(of: name, copyOf: "Journal.quire") == nil)
    }

    /// Copies are found by their header: a conflict-copy name with another
    /// vault inside is not a copy; a copy with any name is.
    @Test func discoveryReadsHeaders() throws {
        let c = try TwoCopies("discovery")
        copy(c.a, c.dir.file("Journal 2.quire"))
        copy(c.a, c.dir.file("renamed by hand.bin"))
        let other = TwoCopiesOther()
        copy(other.path, c.dir.file("Journal (1).quire"))
        try Data("not a vault".utf8).write(to: URL(fileURLWithPath: c.dir.file("Journal (2).quire")))
        try Data().write(to: URL(fileURLWithPath: c.dir.file("empty.quire")))
        copy(c.a, c.dir.file(".Journal.quire.merge-000000000000"))
        let found = try ConflictCopies.find(for: c.a)
        #expect(found.map { String($0.path.split(separator: "/").last!) } == [
            "Journal 2.quire", "Journal.sync-conflict-20261129-101530-ABCDEF1.quire", "renamed by hand.bin",
        ])
        #expect(found.map(\.tool) == [.iCloudDrive, .syncthing, nil])
        #expect(throws: SyncError.self) { try ConflictCopies.find(for: c.dir.file("missing.quire")) }
    }

    /// Folding merges every copy and deletes each one the vault now holds
    /// entirely; a damaged copy is merged but kept.
    @Test func foldingDeletesOnlyWhatIsHeld() throws {
        let c = try TwoCopies("fold")
        try c.onPhone(c.b).add(EntryBody(created: t0 + 10, text: "phone"))
        let second = c.dir.file("Journal (Sam's conflicted copy 2026-11-29).quire")
        copy(c.a, second)
        let onSecond = try c.onLaptop(second)
        try onSecond.add(EntryBody(created: t0 + 11, text: "second copy 1"))
        try onSecond.add(EntryBody(created: t0 + 12, text: "second copy 2"))
        // Damage the last entry of the second copy.
        let file = try VaultFile(path: second)
        let last = try #require(file.structure.frames.last { $0.header.kind == .entryRevision })
        var raw = bytes(second)
        raw[Int(last.bodyOffset) + 30] ^= 0x01
        try Data(raw).write(to: URL(fileURLWithPath: second))
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 13, text: "laptop"))

        let report = try ConflictCopies.fold(into: c.a, credential: .device(c.laptop.keyPair), options: fast)
        #expect(report.copies.count == 2)
        let byName = Dictionary(uniqueKeysWithValues: report.copies.map { (String($0.copy.path.split(separator: "/").last!), $0) })
        #expect(byName["Journal.sync-conflict-20261129-101530-ABCDEF1.quire"]?.deleted == true)
        #expect(byName["Journal (Sam's conflicted copy 2026-11-29).quire"]?.deleted == false)
        #expect(byName["Journal (Sam's conflicted copy 2026-11-29).quire"]?.merge?.leftOut.map(\.code) == ["authentication_failed"])
        #expect(!FileManager.default.fileExists(atPath: c.b))
        // The damaged copy is set aside under a name no pattern matches
        // (trial 25, F7: every command pointed at it forever).
        #expect(!FileManager.default.fileExists(atPath: second))
        #expect(FileManager.default.fileExists(atPath: second + ".damaged"))
        #expect(byName["Journal (Sam's conflicted copy 2026-11-29).quire"]?.setAsideAs == second + ".damaged")
        #expect(byName["Journal.sync-conflict-20261129-101530-ABCDEF1.quire"]?.setAsideAs == nil)
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop", "phone", "second copy 1", "shared"])
        #expect(try c.onLaptop(c.a).verify().issues.isEmpty)
        #expect(try Vault.open(at: c.a, credential: .device(c.laptop.keyPair), options: fast).waitingConflictCopies().isEmpty)
        // Folding again: the set-aside copy is no longer found (trial 28,
        // T28-3: it was listed as holding records the vault lacks), and stays.
        let again = try ConflictCopies.fold(into: c.a, credential: .device(c.laptop.keyPair), options: fast)
        #expect(again.copies.isEmpty)
        #expect(try ConflictCopies.find(for: c.a).isEmpty)
        #expect(FileManager.default.fileExists(atPath: second + ".damaged"))
    }

    /// A device enrolled after the copy was made cannot open the copy, but
    /// it holds the copy's keys through the vault's keyrings: the merge
    /// re-seals the copy's records into the rekeyed vault, and the fold finds
    /// them there by content and deletes the copy (`Spec/merge.md §3.1`, §4).
    @Test func aDeviceEnrolledAfterTheCopyFoldsItIntoARekeyedVault() throws {
        let c = try TwoCopies("fold enrolled later")
        try c.onPhone(c.b).add(EntryBody(created: t0 + 10, text: "phone"))
        let tablet = device("Tablet")
        try c.onLaptop(c.a).enrollDevice(code: tablet.code, name: "Tablet", now: t0 + 11)
        _ = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(rekey: true), now: t0 + 12, writeOptions: fast)
        let report = try Vault.open(at: c.a, credential: .device(tablet.keyPair), options: fast).foldConflictCopies()
        #expect(report.copies.count == 1)
        #expect(report.copies.first?.merge?.leftOut.isEmpty == true && report.copies.first?.merge?.framesResealed == 1)
        #expect(report.copies.first?.deleted == true, "kept: \(String(describing: report.copies.first?.keptBecause))")
        #expect(!FileManager.default.fileExists(atPath: c.b))
        #expect(try texts(c.a, .device(tablet.keyPair)) == ["phone", "shared"])
    }

    /// Folding merges and deletes only a copy whose name is a sync tool's
    /// distinctive conflict-copy pattern: a backup named like a OneDrive
    /// copy, an iCloud- or Google-Drive-like " 2" / " (1)", or a file
    /// renamed by hand is kept (found by a new-user trial: `quire resolve`
    /// deleted the user's own backup), and never merged (trial 25, F6: a
    /// backup brought back what a compaction dropped).
    @Test func foldingKeepsCopiesWithoutADistinctiveName() throws {
        let c = try TwoCopies("keep")
        try c.onPhone(c.b).add(EntryBody(created: t0 + 10, text: "phone"))
        let kept = ["Journal-backup-before-upgrade.quire", "Journal 2.quire", "Journal (1).quire", "Merged.quire"]
        for name in kept { copy(c.a, c.dir.file(name)) }
        let report = try ConflictCopies.fold(into: c.a, credential: .device(c.laptop.keyPair), options: fast)
        let byName = Dictionary(uniqueKeysWithValues: report.copies.map { (String($0.copy.path.split(separator: "/").last!), $0) })
        #expect(byName.count == 5)
        #expect(byName["Journal.sync-conflict-20261129-101530-ABCDEF1.quire"]?.deleted == true)
        #expect(byName["Journal.sync-conflict-20261129-101530-ABCDEF1.quire"]?.keptBecause == nil)
        for name in kept {
            #expect(byName[name]?.deleted == false, "\(name)")
            #expect(byName[name]?.keptBecause == .nameNotDistinctive, "\(name)")
            #expect(FileManager.default.fileExists(atPath: c.dir.file(name)), "\(name)")
        }
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["phone", "shared"])
        #expect(SyncTool.allCases.filter(\.nameIsDistinctive) == [.syncthing, .dropbox, .nextcloud, .unison])
    }

    /// A backup that holds what the vault dropped (a compacted-away
    /// revision), named like an iCloud copy or not at all, is not merged by
    /// a fold; a symbolic link named like a conflict copy is not a copy
    /// (trial 25, F6).
    @Test func foldingNeverMergesABackupNorFollowsALink() throws {
        let c = try TwoCopies("backup")
        try FileManager.default.removeItem(atPath: c.b)
        let laptop = try c.onLaptop(c.a)
        let gone = try laptop.add(EntryBody(created: t0 + 10, text: "PRIVATE"))
        for name in ["Journal 2.quire", "my backup.quire"] { copy(c.a, c.dir.file(name)) }
        try laptop.delete(gone.entryID)
        _ = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), now: t0 + 20, writeOptions: fast)
        let compacted = bytes(c.a)
        try FileManager.default.createSymbolicLink(atPath: c.b, withDestinationPath: c.dir.file("my backup.quire"))
        let report = try ConflictCopies.fold(into: c.a, credential: .device(c.laptop.keyPair), options: fast)
        #expect(report.copies.map { String($0.copy.path.split(separator: "/").last!) } == ["Journal 2.quire", "my backup.quire"])
        #expect(report.copies.allSatisfy { $0.merge == nil && !$0.deleted && $0.keptBecause == .notAConflictCopy })
        #expect(bytes(c.a) == compacted)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: c.b)) == c.dir.file("my backup.quire"))
        #expect(try Vault.open(at: c.a, credential: .device(c.laptop.keyPair), options: fast).waitingConflictCopies().isEmpty)
    }
}
