import Foundation
import Testing
@_spi(Format) import Quire
import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireTestSupport

/// A small vault: header, genesis commit (keyring, profile, commit) and three
/// single-entry commits, about 3 KB. Every bit of it is flipped, one at a
/// time (no sampling: the whole loop takes seconds), split by region so that
/// the regions run in parallel.
struct BitFlipFixture {
    let dir = TemporaryDirectory()
    let path: String
    let recovery: RecoveryKey
    let bytes: [UInt8]
    let layout: DmgLayout
    let texts = ["Rain all morning.", "Пошёл снег.", "去公园散步了 🌳"]
    /// Entry text by frame index.
    let textOfFrame: [Int: String]

    init() throws {
        let (vault, recovery) = try makeVault(dir, seed: "bitflip")
        self.recovery = recovery
        path = dir.file("v.quire")
        for (i, t) in texts.enumerated() { try vault.add(dmgBody(t, created: 1_700_000_100_000 + Int64(i))) }
        layout = DmgLayout(vault)
        bytes = dmgRead(path)
        var map: [Int: String] = [:]
        for (i, f) in layout.frames.filter({ $0.kind == .entryRevision }).enumerated() { map[f.index] = texts[i] }
        textOfFrame = map
    }

    /// The regions the flips are split into: the file header, then each frame.
    var regions: [Range<Int>] {
        [0..<FileHeader.byteCount] + layout.frames.map { Int($0.offset)..<Int($0.end) }
    }
}

@Suite(.tags(.slow), .skippedByMakeCheck) struct DamageBitFlipTests {
    /// The fixture has 1 header region and 10 frames (the first commit holds
    /// the keyring, the profile and the keyring's second copy).
    static let regionCount = 11

    @Test func fixtureLayoutIsAsDesigned() throws {
        let f = try BitFlipFixture()
        #expect(f.layout.frames.map(\.kind) == [.keyring, .profile, .keyring, .commit, .entryRevision, .commit, .entryRevision, .commit, .entryRevision, .commit])
        #expect(f.regions.count == Self.regionCount)
        #expect(f.regions.last!.upperBound == f.bytes.count)
        let vault = try dmgOpen(f.path, f.recovery)
        #expect(try dmgTexts(vault) == f.texts)
        #expect(dmgIssues(vault) == [])
    }

    /// Flips every bit of one region and checks exactly what is lost and reported.
    ///
    /// - file header copy: `header_copy_damaged` warning at the copy's offset, nothing lost;
    /// - any frame header (16 bytes): `frame_repaired` warning at the frame, nothing lost;
    /// - a sealed body (profile, entry): `authentication_failed` at that frame, only
    ///   that record lost; when the flip is in the 32-byte body hash (which the
    ///   commit chain covers) also `commit_mismatch` at the covering commit;
    /// - a commit's head (its first 32 bytes): `commit_mismatch` at that commit,
    ///   every entry still readable;
    /// - a commit's attestation (nonce and sealed signature), which its head
    ///   covers (sixth review R6-1): `commit_mismatch` at that commit, or
    ///   `commit_tampered` when a later commit chains from it; every entry
    ///   still readable;
    /// - the body or trailer of one keyring copy: writers store every keyring
    ///   twice (`Spec/format.md` §8.1), so the other copy is used:
    ///   `keyring_copy_damaged` warning, nothing lost (plus `commit_mismatch`
    ///   for a flip in the trailer, which the commit chain covers).
    @Test(arguments: 0..<DamageBitFlipTests.regionCount)
    func everySingleBitFlip(region: Int) throws {
        let f = try BitFlipFixture()
        let range = f.regions[region]
        let flipPath = f.dir.file("flip-\(region).quire")
        var flips = 0
        for byte in range {
            for bit in 0..<8 {
                let frame = f.layout.frame(containing: UInt64(byte))
                var damaged = f.bytes
                damaged[byte] ^= UInt8(1 << bit)
                dmgWrite(flipPath, damaged)
                flips += 1
                try check(f, byte: byte, bit: bit, frame: frame, path: flipPath)
                #expect(dmgRead(flipPath) == damaged, "reading wrote to the file: byte \(byte) bit \(bit)")
            }
        }
        #expect(flips == range.count * 8)
    }

    func check(_ f: BitFlipFixture, byte: Int, bit: Int, frame: DmgLayout.Frame?, path: String) throws {
        let at = "byte \(byte) bit \(bit)"
        let offset = UInt64(byte)
        guard let frame else {
            // One of the two header copies.
            let copy = byte / FileHeader.copyByteCount
            let vault = try dmgOpen(path, f.recovery)
            #expect(try dmgTexts(vault) == f.texts, "\(at)")
            #expect(dmgIssues(vault) == [DmgIssue("header_copy_damaged", offset: UInt64(copy * 32), frame: nil, damage: false)], "\(at)")
            return
        }
        let inHeader = offset < frame.offset + UInt64(FrameHeader.byteCount)
        if inHeader {
            let vault = try dmgOpen(path, f.recovery)
            #expect(try dmgTexts(vault) == f.texts, "\(at)")
            #expect(try vault.profile()?.name == "Test Journal", "\(at)")
            #expect(dmgIssues(vault) == [DmgIssue("frame_repaired", offset: frame.offset, frame: frame.index, damage: false)], "\(at)")
            return
        }
        switch frame.kind {
        case .keyring:
            // Writers store the keyring twice: the other copy is used and
            // nothing is lost. A flip in a copy's trailer (which the commit
            // chain covers) also breaks its commit.
            let vault = try dmgOpen(path, f.recovery)
            #expect(try dmgTexts(vault) == f.texts, "\(at)")
            #expect(try vault.profile()?.name == "Test Journal", "\(at)")
            var expected = [DmgIssue("keyring_copy_damaged", offset: frame.offset, frame: frame.index, damage: false)]
            if offset >= frame.end - 32 {
                let commit = f.layout.frames.first { $0.kind == .commit && $0.offset > frame.offset }!
                expected.append(DmgIssue("commit_mismatch", offset: commit.offset, frame: commit.index, damage: true))
            }
            #expect(dmgIssues(vault) == expected, "\(at)")
        case .commit:
            let vault = try dmgOpen(path, f.recovery)
            #expect(try dmgTexts(vault) == f.texts, "\(at)")
            #expect(try vault.profile()?.name == "Test Journal", "\(at)")
            if offset < frame.offset + UInt64(FrameHeader.byteCount) + 32 {
                #expect(dmgIssues(vault) == [DmgIssue("commit_mismatch", offset: frame.offset, frame: frame.index, damage: true)], "\(at)")
                #expect(vault.file.commits.statuses.filter { $0 != .verified }.count == 1, "\(at)")
            } else if offset < frame.offset + UInt64(FrameHeader.byteCount) + 64 {
                // The stored previous head: the head verifies from the
                // commit before it, and the flip is reported (§9.3 step 2).
                #expect(dmgIssues(vault) == [DmgIssue("frame_repaired", offset: frame.offset, frame: frame.index, damage: false)], "\(at)")
                #expect(vault.file.commits.statuses.allSatisfy { $0 == .verified }, "\(at)")
            } else {
                let chainedFrom = f.layout.frames.contains { $0.kind == .commit && $0.offset > frame.offset }
                #expect(dmgIssues(vault) == [DmgIssue(chainedFrom ? "commit_tampered" : "commit_mismatch", offset: frame.offset, frame: frame.index, damage: true)], "\(at)")
                #expect(vault.file.commits.statuses.filter { $0 != .verified }.count == 1, "\(at)")
            }
        default:
            #expect(frame.isSealed, "\(at)")
            let vault = try dmgOpen(path, f.recovery)
            let lost = f.textOfFrame[frame.index]
            #expect(try dmgTexts(vault) == f.texts.filter { $0 != lost }, "\(at)")
            if frame.kind == .profile {
                #expect(try vault.profile() == nil, "\(at)")
            } else {
                #expect(try vault.profile()?.name == "Test Journal", "\(at)")
            }
            var expected = [DmgIssue("authentication_failed", offset: frame.offset, frame: frame.index, damage: true)]
            if offset >= frame.end - 32 {
                let commit = f.layout.frames.first { $0.group == frame.group && $0.kind == .commit }!
                expected.append(DmgIssue("commit_mismatch", offset: commit.offset, frame: commit.index, damage: true))
            }
            let report = vault.verify()
            #expect(report.issues.map(DmgIssue.init) == expected, "\(at)")
            #expect(report.damagedFrames == expected.compactMap(\.frameIndex), "\(at)")
        }
    }
}
