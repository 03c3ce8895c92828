import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// What `verify` calls cut after a lockdown (trial 26 N5): a record or
/// commit only when the cut key proves it and the removed device signed
/// it. Never by a header's key id, which anyone can write (review 33 F1),
/// and never what another device wrote under that key (review 33 F3).
@Suite struct LockdownCutRecordsTests {
    struct Verified {
        let status: Int32
        let stdout: String
        /// Frame index → (is damage, code) of each issue.
        let issues: [Int: [(damage: Bool, code: String)]]

        /// The frames listed on `cut:` lines.
        var cutFrames: Set<Int> { Set(issues.filter { $0.value.contains { !$0.damage && $0.code != "removal_mutual" } }.keys) }
        /// The frames with an issue that is damage.
        var lostFrames: Set<Int> { Set(issues.filter { $0.value.contains { $0.damage } }.keys) }
    }

    static func verify(_ box: Sandbox, _ vault: String, env: [String: String]) throws -> Verified {
        let args = ["verify", vault, "--recovery-key-file", "recovery.txt"]
        let text = try box.quire(args, env: env)
        let json = try box.quire(args + ["--json"], env: env).json()
        var issues: [Int: [(damage: Bool, code: String)]] = [:]
        for issue in (json["issues"] as? [[String: Any]]) ?? [] {
            guard let f = issue["frame"] as? Int, let code = issue["code"] as? String, let damage = issue["damage"] as? Bool else {
                continue
            }
            issues[f, default: []].append((damage, code))
        }
        return Verified(status: text.status, stdout: text.stdout, issues: issues)
    }

    /// Rewrites the 16-byte header of `frame` in `vault` with `keyID`, its
    /// check bytes computed again: what anyone with a hex editor can do.
    static func retarget(_ box: Sandbox, _ vault: String, frame: ScannedFrame, to keyID: KeyID) throws {
        let url = URL(fileURLWithPath: box.path(vault))
        var bytes = try Data(contentsOf: url)
        let header = FrameHeader(kind: frame.header.kind, flags: frame.header.flags, keyID: keyID, bodyLength: frame.header.bodyLength)
        bytes.replaceSubrange(Int(frame.location.offset)..<Int(frame.bodyOffset), with: header.encoded())
        try bytes.write(to: url)
    }

    static func flip(_ box: Sandbox, _ vault: String, at offset: UInt64) throws {
        let url = URL(fileURLWithPath: box.path(vault))
        var bytes = try Data(contentsOf: url)
        bytes[Int(offset)] ^= 0x01
        try bytes.write(to: url)
    }

    /// The stolen-phone case before its lockdown: `Journal.quire` with an
    /// entry of the laptop's, "Phone" enrolled, which rotates the keys and
    /// writes under its rotation. Returns the phone's environment.
    static func phoneWroteUnderItsRotation(_ box: Sandbox) throws -> [String: String] {
        try box.makeVault()
        _ = try box.add("laptop, before")
        let phone = try box.enrollPhone()
        #expect(try box.quire(["keys", "rotate", "Journal.quire"], env: phone).status == 0)
        #expect(try box.quire(["add", "Journal.quire", "the thief writes"], env: phone).status == 0)
        return phone
    }

    /// The lockdown: "Phone" (and what it enrolled) removed from `vault`
    /// with the recovery key, on a device of no one's; returns its
    /// environment.
    static func lockDown(_ box: Sandbox, _ vault: String = "Journal.quire") throws -> [String: String] {
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let removal = try box.quire(
            ["device", "remove", vault, "Phone", "--recovery-key-file", "recovery.txt", "--remove-enrolled"], env: stranger)
        #expect(removal.status == 0, "\(removal)")
        return stranger
    }

    /// Appends `bytes` to `vault`, as a sync that copies another copy's
    /// new bytes does.
    static func append(_ box: Sandbox, _ bytes: Data, to vault: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: box.path(vault)))
        try handle.seekToEnd()
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    /// The stolen phone keeps a copy from before the lockdown and changes
    /// it with `write` after it; its new bytes are appended to the locked
    /// down vault. Returns verify before the append and after it, and the
    /// vault's size before it.
    static func stolenCopyWritesAfterTheLockdown(
        _ box: Sandbox, _ write: ([String: String]) throws -> Void
    ) throws -> (before: Verified, after: Verified, lockedDown: UInt64) {
        let phone = try phoneWroteUnderItsRotation(box)
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Stolen.quire"))
        let stranger = try lockDown(box)
        let before = try verify(box, "Journal.quire", env: stranger)
        let stolenSize = try FileSystem.size(box.path("Stolen.quire"))
        try write(phone)
        let written = try Data(contentsOf: URL(fileURLWithPath: box.path("Stolen.quire"))).dropFirst(Int(stolenSize))
        let lockedDown = try FileSystem.size(box.path("Journal.quire"))
        try append(box, written, to: "Journal.quire")
        return (before, try verify(box, "Journal.quire", env: stranger), lockedDown)
    }

    /// Review 33 F1: after the lockdown, a hex editor retargets an honest
    /// record and its commit to the cut key's id, flips a byte in the
    /// thief's record, or one in the thief's commit's attestation, or
    /// appends a copy of the thief's group. Each changed frame is lost
    /// (exit 2), never cut; a thief's record in a commit that no longer
    /// verifies is lost with it; a copy stays lost.
    @Test func aChangedByteUnderTheCutKeyIsLostNeverCut() throws {
        let box = try Sandbox()
        let stranger = try StolenDeviceAftermathTests.thiefRemovedTheLaptopThenLockdown(box)
        let intact = try Self.verify(box, "Journal.quire", env: stranger)
        #expect(intact.status == 0, "\(intact.stdout)")
        let structure = try VaultScanner.scan(path: box.path("Journal.quire"))
        let frames = (0..<structure.frames.count).map { structure.frames[$0] }
        let thiefRecord = try #require(intact.issues.first { $0.value.contains { $0.code == "unknown_key" } }?.key)
        #expect(intact.cutFrames.contains(thiefRecord))
        let cutKeyID = frames[thiefRecord].header.keyID
        let thiefGroup = try #require(structure.groups.first { $0.members.contains(thiefRecord) })
        let thiefCommit = thiefGroup.commitFrame
        #expect(intact.cutFrames.contains(thiefCommit))
        let honest = try #require(frames.first { $0.header.kind == .entryRevision && $0.header.keyID != cutKeyID })
        let honestCommit = try #require(structure.groups.first { $0.members.contains(honest.location.index) }?.commitFrame)
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Lockdown.quire"))
        func fresh(_ name: String) throws {
            try? FileManager.default.removeItem(atPath: box.path(name))
            try FileManager.default.copyItem(atPath: box.path("Lockdown.quire"), toPath: box.path(name))
        }

        // The honest record, and then its commit too, retargeted.
        try fresh("Record.quire")
        try Self.retarget(box, "Record.quire", frame: honest, to: cutKeyID)
        try fresh("Group.quire")
        try Self.retarget(box, "Group.quire", frame: honest, to: cutKeyID)
        try Self.retarget(box, "Group.quire", frame: frames[honestCommit], to: cutKeyID)
        for name in ["Record.quire", "Group.quire"] {
            let v = try Self.verify(box, name, env: stranger)
            #expect(v.status == 2, "\(name)\n\(v.stdout)")
            #expect(v.stdout.hasPrefix("\(name): DAMAGED."), "\(v.stdout)")
            #expect(v.lostFrames.contains(honest.location.index), "\(v.stdout)")
            #expect(!v.cutFrames.contains(honest.location.index) && !v.cutFrames.contains(honestCommit), "\(v.stdout)")
            #expect(!v.stdout.contains("  cut: frame \(honest.location.index) at"), "\(v.stdout)")
        }

        // A byte of the thief's record: the record is lost, its commit still cut.
        try fresh("Body.quire")
        try Self.flip(box, "Body.quire", at: frames[thiefRecord].bodyOffset + 40)
        let body = try Self.verify(box, "Body.quire", env: stranger)
        #expect(body.status == 2, "\(body.stdout)")
        #expect(body.lostFrames.contains(thiefRecord) && !body.cutFrames.contains(thiefRecord), "\(body.stdout)")
        #expect(body.stdout.contains("  lost: frame \(thiefRecord) at"), "\(body.stdout)")

        // A byte of the thief's commit's attestation: its head no longer
        // computes, so neither it nor the record it covers is cut.
        try fresh("Attestation.quire")
        try Self.flip(box, "Attestation.quire", at: frames[thiefCommit].bodyOffset + 100)
        let attestation = try Self.verify(box, "Attestation.quire", env: stranger)
        #expect(attestation.status == 2, "\(attestation.stdout)")
        #expect(!attestation.cutFrames.contains(thiefRecord) && !attestation.cutFrames.contains(thiefCommit), "\(attestation.stdout)")
        #expect(attestation.lostFrames.contains(thiefRecord), "\(attestation.stdout)")

        // A byte copy of the thief's group, appended: it authenticates as
        // the original does, but a copy stays lost.
        try fresh("Copied.quire")
        let original = try Data(contentsOf: URL(fileURLWithPath: box.path("Lockdown.quire")))
        let group = original[Int(frames[thiefGroup.members.lowerBound].location.offset)..<Int(frames[thiefCommit].end)]
        try Self.append(box, group, to: "Copied.quire")
        let copied = try Self.verify(box, "Copied.quire", env: stranger)
        #expect(copied.status == 2, "\(copied.stdout)")
        #expect(copied.cutFrames.contains(thiefRecord) && copied.cutFrames.contains(thiefCommit), "\(copied.stdout)")
        #expect(
            copied.lostFrames.contains { $0 > thiefCommit && copied.issues[$0]!.contains { $0.code == "commit_unverifiable" } },
            "\(copied.stdout)")
    }

    /// Review 33 F3: the laptop synced the thief's rotation and wrote under
    /// its key; the lockdown was made on a copy from before that write, and
    /// the laptop's group was then added to that copy as it was (a merge
    /// today drops it and says so; a file can still hold it, whoever put it
    /// there). The laptop's record and commit under the cut key are real
    /// entries lost: exit 2, listed as lost, though the cut key proves
    /// them — a current member attested the commit. The thief's, in the
    /// same epoch, are cut.
    @Test func whatAnotherDeviceWroteUnderTheCutKeyStaysLost() throws {
        let box = try Sandbox()
        _ = try Self.phoneWroteUnderItsRotation(box)
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Copy.quire"))
        let synced = try FileSystem.size(box.path("Copy.quire"))
        _ = try box.add("the laptop writes under the thief's rotation")
        let stranger = try Self.lockDown(box, "Copy.quire")
        let lockedDown = try FileSystem.size(box.path("Copy.quire"))
        let laptopGroup = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire"))).dropFirst(Int(synced))
        try Self.append(box, laptopGroup, to: "Copy.quire")

        let v = try Self.verify(box, "Copy.quire", env: stranger)
        #expect(v.status == 2, "\(v.stdout)")
        #expect(v.stdout.hasPrefix("Copy.quire: DAMAGED. 2 records lost or untrusted;"), "\(v.stdout)")
        let structure = try VaultScanner.scan(path: box.path("Copy.quire"))
        let offset = { (f: Int) in structure.frames[f].location.offset }
        // The thief's (before the copy): cut, a record and two commits among them.
        #expect(v.cutFrames.allSatisfy { offset($0) < synced }, "\(v.stdout)")
        #expect(v.cutFrames.contains { v.issues[$0]!.contains { $0.code == "unknown_key" } }, "\(v.stdout)")
        #expect(v.cutFrames.filter { v.issues[$0]!.contains { $0.code == "commit_unverifiable" } }.count == 2, "\(v.stdout)")
        // The laptop's (added after the lockdown): lost, its record and its commit.
        #expect(v.lostFrames.allSatisfy { offset($0) >= lockedDown }, "\(v.stdout)")
        #expect(v.lostFrames.contains { v.issues[$0]!.contains { $0.code == "unknown_key" } }, "\(v.stdout)")
        #expect(v.lostFrames.contains { v.issues[$0]!.contains { $0.code == "commit_unverifiable" } }, "\(v.stdout)")
        #expect(v.stdout.contains("cut on purpose by a removal the recovery key signed"), "\(v.stdout)")
    }

    /// Review 36 B1: after the lockdown, the stolen phone keeps writing on
    /// its copy from before it, and the new bytes reach the live file (a
    /// sync that appends). They are under the cut key and signed by the
    /// phone, but after the phone's removal in file order: not cut, and
    /// verify says the removed device still writes, exit 2. Before, verify
    /// said intact, exit 0.
    @Test func whatTheRemovedDeviceWritesAfterTheLockdownIsNotCut() throws {
        let box = try Sandbox()
        let (before, v, lockedDown) = try Self.stolenCopyWritesAfterTheLockdown(box) { phone in
            for i in 1...2 {
                let add = try box.quire(["add", "Stolen.quire", "the thief, after the lockdown \(i)"], env: phone)
                #expect(add.status == 0, "\(add)")
            }
        }
        #expect(before.status == 0, "\(before.stdout)")
        let cutBefore = before.cutFrames
        #expect(!cutBefore.isEmpty, "\(before.stdout)")

        #expect(v.status == 2, "\(v.stdout)")
        #expect(v.stdout.hasPrefix("Journal.quire: DAMAGED."), "\(v.stdout)")
        #expect(v.stdout.contains("AFTER its removal was in this file"), "\(v.stdout)")
        #expect(v.stdout.contains("--rekey --drop-unverified"), "\(v.stdout)")
        let structure = try VaultScanner.scan(path: box.path("Journal.quire"))
        let offset = { (f: Int) in structure.frames[f].location.offset }
        // What the phone wrote before the lockdown is still cut; nothing after it is.
        #expect(v.cutFrames == cutBefore, "\(v.stdout)")
        #expect(v.lostFrames.count >= 4 && v.lostFrames.allSatisfy { offset($0) >= lockedDown }, "\(v.stdout)")
        #expect(v.stdout.contains("  lost: frame \(structure.frames.count - 1) at"), "\(v.stdout)")
        #expect(v.stdout.contains("written under a cut key after the removal of \"Phone\""), "\(v.stdout)")
        #expect(!v.stdout.contains("Restore the lost ones"), "\(v.stdout)")
    }

    /// Review 36b F2: a keyring the removed device signs after its removal
    /// in file order (a rotation on its old copy, synced in) was listed as
    /// cut on purpose while its own commit was said as written after the
    /// removal. Neither is cut now: exit 2, the keyring among the lost.
    @Test func aKeyringTheRemovedDeviceSignsAfterTheLockdownIsNotCut() throws {
        let box = try Sandbox()
        let (before, v, lockedDown) = try Self.stolenCopyWritesAfterTheLockdown(box) { phone in
            let rotate = try box.quire(["keys", "rotate", "Stolen.quire"], env: phone)
            #expect(rotate.status == 0, "\(rotate)")
        }
        #expect(before.status == 0, "\(before.stdout)")
        let cutBefore = before.cutFrames

        #expect(v.status == 2, "\(v.stdout)")
        let structure = try VaultScanner.scan(path: box.path("Journal.quire"))
        let appendedRings = structure.frames.indices.filter {
            structure.frames[$0].location.offset >= lockedDown && structure.frames[$0].header.kind == .keyring
        }
        #expect(!appendedRings.isEmpty)
        #expect(v.cutFrames == cutBefore, "\(v.stdout)")
        // The keyring (its copy frame is not reported on its own) is lost, none of it cut.
        #expect(appendedRings.contains { v.lostFrames.contains($0) }, "\(v.stdout)")
        #expect(appendedRings.allSatisfy { !v.cutFrames.contains($0) }, "\(v.stdout)")
    }

    /// Review 36 B3: the README's lockdown, where the thief wrote under its
    /// rotation: `device remove --recovery-key-file`, then `compact
    /// --rekey`. Compaction refused those records as "damaged or
    /// unverified … merge a copy that holds those records intact" while
    /// verify called them cut, nothing to restore. It now names them as
    /// cut and gives the flag; with it the vault compacts and verifies
    /// intact, nothing cut left, and the laptop reads on.
    @Test func theReadmeLockdownCompactsWhatItCutWithTheFlagItNames() throws {
        let box = try Sandbox()
        _ = try Self.phoneWroteUnderItsRotation(box)
        let stranger = try Self.lockDown(box)
        let key = ["--recovery-key-file", "recovery.txt"]
        #expect(try box.quire(["verify", "Journal.quire"] + key, env: stranger).status == 0)
        let size = try FileSystem.size(box.path("Journal.quire"))

        let refused = try box.quire(["compact", "Journal.quire", "--rekey"] + key, env: stranger)
        #expect(refused.status != 0, "\(refused)")
        #expect(
            refused.stderr.contains("quire: error: Journal.quire holds 3 records and commits cut on purpose by the removal of \"Phone\""),
            "\(refused)")
        #expect(refused.stderr.contains("which 'quire verify' lists as cut, not damage"), "\(refused)")
        #expect(!refused.stderr.contains("merge a copy"), "\(refused)")
        #expect(
            refused.stderr.contains("quire: hint: compact without them: 'quire compact Journal.quire --rekey --drop-unverified'"),
            "\(refused)")
        #expect(try FileSystem.size(box.path("Journal.quire")) == size)

        let compacted = try box.quire(["compact", "Journal.quire", "--rekey", "--drop-unverified"] + key, env: stranger)
        #expect(compacted.status == 0, "\(compacted)")
        #expect(compacted.stdout.contains("rekeyed: "), "\(compacted)")
        let verify = try box.quire(["verify", "Journal.quire"] + key, env: stranger)
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.stdout.hasPrefix("Journal.quire: intact. "), "\(verify)")
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.status == 0 && list.stdout.contains("laptop, before") && list.stderr.isEmpty, "\(list)")
    }

    /// Review 36 B6: a byte copy of the thief's group put before the
    /// original, not after it. Whichever comes first in file order is cut,
    /// the other is lost: never both cut, exit 2.
    @Test func aCopyPutBeforeTheOriginalLeavesOneOfThemLost() throws {
        let box = try Sandbox()
        let stranger = try StolenDeviceAftermathTests.thiefRemovedTheLaptopThenLockdown(box)
        let intact = try Self.verify(box, "Journal.quire", env: stranger)
        #expect(intact.status == 0, "\(intact.stdout)")
        let structure = try VaultScanner.scan(path: box.path("Journal.quire"))
        let thiefRecord = try #require(intact.issues.first { $0.value.contains { $0.code == "unknown_key" } }?.key)
        let thiefGroup = try #require(structure.groups.first { $0.members.contains(thiefRecord) })
        let start = Int(structure.frames[thiefGroup.members.lowerBound].location.offset)
        let end = Int(structure.frames[thiefGroup.commitFrame].end)
        let url = URL(fileURLWithPath: box.path("Journal.quire"))
        var bytes = try Data(contentsOf: url)
        bytes.insert(contentsOf: bytes[start..<end], at: start)
        try bytes.write(to: url)

        let v = try Self.verify(box, "Journal.quire", env: stranger)
        #expect(v.status == 2, "\(v.stdout)")
        #expect(v.stdout.hasPrefix("Journal.quire: DAMAGED."), "\(v.stdout)")
        let shift = thiefGroup.commitFrame - thiefGroup.members.lowerBound + 1
        let copyCommit = thiefGroup.commitFrame
        let originalCommit = thiefGroup.commitFrame + shift
        // The first in file order, the copy, is cut; the original is lost.
        #expect(v.cutFrames.contains(copyCommit), "\(v.stdout)")
        #expect(!v.cutFrames.contains(originalCommit), "\(v.stdout)")
        #expect(v.cutFrames.contains(thiefRecord) && !v.cutFrames.contains(thiefRecord + shift), "\(v.stdout)")
        #expect(v.lostFrames.contains(originalCommit), "\(v.stdout)")
    }
}
