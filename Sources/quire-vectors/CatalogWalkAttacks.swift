@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireVectors

/// The reader-rule findings of the fifth review of format 2 on the walk
/// (`Spec/format.md §9.3`): F3 (with two member-attested lines, moving whole
/// groups decided which line writers extend and could orphan an unattested
/// commit), F4 (a keyless deletion demoted the next member-attested commit's
/// records), F6 (a junk commit's stored head placed a copy) and F11 (the
/// walk's waits as deep as the file is long); and of the sixth review, R6-2
/// (a linkless member-attested commit judged stale through `e`) and Part 2
/// item 4 (a member's commit after an unattested linkless one).
extension Catalog {
    static var walkAttacks: [Make] {
        [
            { try memberLinesMoved("attack-keyless-move-member-fork-to-end", orphaning: false) },
            { try memberLinesMoved("attack-keyless-move-member-fork-orphans-unattested", orphaning: true) },
            {
                // F4: a keyless writer cuts out group "two" (its frames and
                // commit frame); "three", which the recovery key attested,
                // names a head no commit stores.
                let b = try VectorBuilder("attack-keyless-deletion-demotes-next-commit")
                try b.commit([.entry(b.entry("one"))])
                let two = try b.commit([.entry(b.entry("two, cut out"))])[0]!
                let three = try b.commit([.entry(b.entry("three, attested"))])[0]!
                try b.commit([.entry(b.entry("four, unattested"))], attest: CommitAttestation.none)
                var bytes = try b.bytes()
                let start = Int(b.offset(two))
                let end = Int(b.frame(two + 1).end)
                bytes.removeSubrange(start..<end)
                b.lose(frame: two)
                let threeCommit = b.offset(three + 1) - UInt64(end - start)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (fifth review F4): a keyless writer cuts group \"two\" (its frames and commit frame) out of one, two, three, four; \"three\" is attested by the recovery key, \"four\" is unattested and extends \"three\". \"three\" names a head no commit stores: the commit it extends was deleted. Before, \"three\" was tampered and its records unverified, although its group is intact and its signature vouches for it and for the head it extends; compaction then kept them only with --drop-unverified. Now a commit a current member attested whose link names a missing head is tampered at vault level (commit_tampered, writers refuse to write) but verified and attested: \"three\"'s record is released as attested, and \"four\" extends it, verified and unattested",
                    body: bytes,
                    issues: [("commit_tampered", threeCommit)])
            },
            {
                // R6-2: E1 ... E10, E6 the rotation to epoch 2. A keyless
                // writer deletes groups E3 and E7 and moves E8 E9 E10 to
                // just after E2: E1 E2 E8 E9 E10 E4 E5 E6.
                let b = try VectorBuilder("attack-keyless-two-deletions-and-a-move-stale-history")
                for i in 1...5 { try b.commit([.entry(b.entry("E\(i), epoch 1"))]) }
                try b.rotate(to: 2)
                for i in 7...10 { try b.commit([.entry(b.entry("E\(i), epoch 2"))]) }
                let old = try b.bytes()
                let groups = b.vault.structure.groups
                func range(_ g: Int) -> Range<Int> { Int(b.frame(groups[g - 1].commitFrame).end)..<Int(b.frame(groups[g].commitFrame).end) }
                let order = [8, 9, 10, 4, 5, 6]
                var bytes = Array(old[..<range(2).upperBound])
                var tampered: [(String, UInt64)] = []
                for g in order {
                    bytes += old[range(g)]
                    if g == 8 || g == 4 { tampered.append(("commit_tampered", UInt64(bytes.count - commitLength))) }
                }
                let group = { (frame: Int) in b.vault.structure.groupIndex(ofFrame: frame)! }
                let rank = [0: 0, 1: 1, 2: 2, 8: 3, 9: 4, 10: 5, 4: 6, 5: 7, 6: 8]
                b.released = b.released.filter { rank[group($0.frame)] != nil }
                b.released.sort { rank[group($0.frame)]! < rank[group($1.frame)]! }
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (sixth review R6-2): E1 ... E10 attested by the recovery key, E6 the rotation keyring to epoch 2, E7 ... E10 under epoch 2. A keyless writer deletes groups E3 and E7 and moves E8 E9 E10 to just after E2: E1 E2 E8 E9 E10 E4 E5 E6. E8 and E4 name missing heads: the walk visits them in file order after the start's subtree (E1, E2). E8 joins over the deletion (tampered, verified and attested), E9 and E10 extend it. Before, E4's line was taken through e, the last member-attested commit of the chain so far (E10, epoch 2): E4 (epoch 1) was stale, E5 and E6 with it, and none of their records was released although they are genuine, intact and member-attested. Now a commit a current member attested is judged stale by its linked line, with nothing taken through e (for E4, whose link names a missing head, 0). E4 is tampered at vault level (commit_tampered) but verified and attested, E5 and E6 extend it, and every remaining record is released as attested",
                    body: bytes,
                    issues: tampered)
            },
            {
                // Sixth review, Part 2 item 4: "one", "two" (deleted), "three"
                // (unattested), "four", the rotation to epoch 2, "six". A
                // stolen phone (a current member) inserts X under epoch 2,
                // chained from "one", after "one", and deletes "two".
                let b = try VectorBuilder("attack-member-insert-deletion-unattested-next-stale-history", deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("one"))])
                let afterOne = Int(b.vault.structure.committedEnd)
                let tipOne = b.vault.chainTipHead
                let two = try b.commit([.entry(b.entry("two, deleted"))])[0]!
                let three = try b.commit([.entry(b.entry("three, unattested"))], expectReleased: false, attest: CommitAttestation.none)[0]!
                let four = try b.commit([.entry(b.entry("four, attested, epoch 1"))])[0]!
                try b.rotate(to: 2)
                try b.commit([.entry(b.entry("six, epoch 2"))])
                let old = try b.bytes()
                let endTwo = Int(b.frame(two + 1).end)
                b.lose(frame: two)
                let (x, payload) = try signedGroup(
                    b, "inserted by the stolen phone, epoch 2", key: b.keys.writeKey!, previous: tipOne,
                    signer: try VectorBuilder.device(phoneSeed))
                b.released.insert(
                    (frame: -1, kind: RecordKind.entryRevision.rawValue, payload: payload), at: b.released.firstIndex { $0.frame > two }!)
                let bytes = Array(old[0..<afterOne]) + x + Array(old[endTwo...])
                let shift = x.count - (endTwo - afterOne)
                func moved(_ index: Int) -> UInt64 { UInt64(Int(b.offset(index)) + shift) }
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (sixth review, Part 2 item 4): \"one\", \"two\", \"three\" (unattested: a compaction's commit 2, a merge's unattested block), \"four\" (attested by the recovery key), the rotation to epoch 2 and \"six\" under epoch 2. A stolen phone, a current member, inserts X after \"one\", chained from it, attested by itself under epoch 2, and deletes group \"two\". \"three\" names a missing head: the walk visits it after the start's subtree (\"one\", X), its line is taken through e (X, epoch 2), and no current member attested it: it is stale, its record withheld. Before, \"four\" (epoch 1) took its line from \"three\" and was stale, the rotation's commit with it, and nothing in them was released (the first R6-2 rule exempted only a linkless member's commit). Now a commit a current member attested is judged by its linked line, with nothing taken through e: \"four\" extends a commit off the chain, so it is a member's fork (commit_fork), verified and attested, and the rotation and \"six\" extend it; every record but \"three\"'s is released as attested",
                    body: bytes,
                    issues: [("stale_epoch", moved(three)), ("stale_epoch", moved(three + 1)), ("commit_fork", moved(four + 1))])
            },
            {
                // Sixth review, Part 2 item 4 (the first R6-2 rule restarted
                // the line at a linkless member's commit): "one", "two"
                // (deleted), "three", "four" (deleted), R (the recovery key
                // removes the phone: epoch 2), "six". The removed phone
                // appends Z under epoch 1, chained from "three", and makes
                // the file one R six three Z.
                let b = try VectorBuilder("attack-removed-device-extends-members-linkless-commit", deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("one"))])
                let two = try b.commit([.entry(b.entry("two, deleted"))])[0]!
                try b.commit([.entry(b.entry("three, epoch 1"))])
                let threeHead = b.vault.chainTipHead
                let four = try b.commit([.entry(b.entry("four, deleted"))])[0]!
                let kept = [recoveryMember(b)]
                let (k2, removal) = try child(b, members: kept, removed: [b.members[1]], reason: "remove")
                try b.addKeyring(k2, removal, members: kept)
                try b.commit([.entry(b.entry("six, epoch 2"))])
                let old = try b.bytes()
                let groups = b.vault.structure.groups
                func range(_ g: Int) -> Range<Int> { Int(b.frame(groups[g - 1].commitFrame).end)..<Int(b.frame(groups[g].commitFrame).end) }
                let (z, _) = try signedGroup(
                    b, "appended by the removed phone, epoch 1", key: b.ringKeys[b.rootID]!, previous: threeHead,
                    signer: try VectorBuilder.device(phoneSeed))
                var bytes = Array(old[..<range(1).upperBound])
                var issues: [(String, UInt64)] = []
                for g in [5, 6, 3] {
                    bytes += old[range(g)]
                    if g != 6 { issues.append(("commit_tampered", UInt64(bytes.count - commitLength))) }
                }
                issues.append(("stale_epoch", UInt64(bytes.count)))
                bytes += z
                issues.append(("stale_epoch", UInt64(bytes.count - commitLength)))
                b.lose(frame: two)
                b.lose(frame: four)
                let group = { (frame: Int) in b.vault.structure.groupIndex(ofFrame: frame)! }
                let rank = [0: 0, 1: 1, 5: 2, 6: 3, 3: 4]
                b.released = b.released.filter { rank[group($0.frame)] != nil }
                b.released.sort { rank[group($0.frame)]! < rank[group($1.frame)]! }
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (sixth review, Part 2 item 4, on the first R6-2 rule): \"one\" ... \"four\" attested by the recovery key, then R, the recovery key's removal of the phone (a keyring of epoch 2, committed under epoch 1), and \"six\" under epoch 2. The removed phone, which holds the epoch-1 key and can write the file, appends Z under epoch 1 chained from \"three\" (attested by itself, a removed member), deletes groups \"two\" and \"four\" and moves R and \"six\" before \"three\": one R six three Z. R and \"three\" name missing heads; the walk visits them in file order after \"one\": R joins over its deletion (tampered, verified, attested), \"six\" extends it, and \"three\", whose line through e (\"six\") is at epoch 2, is a current member's: judged by its linked line (0), it joins over its deletion too. Before, the line restarted at \"three\" (epoch 1), so Z joined the chain verified and its record was released after the rotation that removed the phone. Now the line after a member's commit keeps what came through e (2): Z, no current member's, is stale, its record withheld",
                    body: bytes,
                    issues: issues)
            },
            {
                // F6: a keyless writer writes a junk commit frame J storing
                // the head of "two" (s_F) under epoch 1's key id, right after
                // "one", then a byte copy of group "three" after it: before
                // "two", the commit the copy's original extends.
                let b = try VectorBuilder("attack-junk-head-places-copy")
                for text in ["one", "two", "three", "four"] { try b.commit([.entry(b.entry(text))]) }
                var bytes = try b.bytes()
                let groups = b.vault.structure.groups
                let epoch1 = b.ringKeys[b.rootID]!
                let junk =
                    CommitChain.commitHeader(keyID: epoch1.id).encoded() + groups[2].storedHead
                    + b.random.bytes(CommitChain.bodyByteCount - 32)
                let (copy, record) = try groupBytes(b, group: 3)
                let at = Int(b.frame(groups[1].commitFrame).end)
                bytes.insert(contentsOf: junk + copy, at: at)
                let firstOfTwo = b.released.firstIndex { groups[2].members.contains($0.frame) }!
                b.released.insert(record, at: firstOfTwo)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (fifth review F6): a keyless writer writes a junk commit frame J that stores the head of \"two\" (under epoch 1's key id, the rest random) right after \"one\", then a byte copy of group \"three\" (frames and commit frame) after J: before \"two\", the commit \"three\" extends. Before, \"stands in its place\" counted any stored head, J's included, so the copy stood in its place and, first in file order, was the original; the genuine \"three\" was the copy (orphaned). Now only the stored head of a commit whose head verifies (or a mismatch's computed head) counts: the copy does not stand in its place and is the one orphaned (its record unverified), the genuine \"three\" stays the original; J is a mismatch",
                    body: bytes,
                    issues: [("commit_mismatch", UInt64(at)), ("commit_orphaned", UInt64(at + junk.count + copy.count - commitLength))])
            },
            {
                // F11: 1,100 unattested empty commits, each extending the one
                // before, placed in reverse: each links to the next group in
                // the file.
                let b = try VectorBuilder("attack-keyless-reversed-groups")
                try b.commit([.entry(b.entry("one"))])
                var bytes = try b.bytes()
                let key = b.ringKeys[b.rootID]!
                let none = [UInt8](repeating: 0, count: CommitChain.attestationByteCount)
                var previous = b.vault.chainTipHead
                var commits: [[UInt8]] = []
                for _ in 0..<1100 {
                    let c = try Edit.commitFrame(over: [], previous: previous, key: key, vaultID: b.vaultID, attestation: none)
                    commits.append(c)
                    previous = Array(c[16..<48])
                }
                bytes += commits.reversed().joined()
                return try b.vector(
                    "success",
                    comment:
                        "attack (fifth review F11): 1,100 empty unattested commits, each chained from the one before (as any epoch-key holder can write them), placed in reverse order: every commit links to the next one in the file, so the walk nests 1,100 deep. The walk MUST be iterative (an explicit stack): a reader that recursed per waiting commit (the conformance reader did) ran out of stack. Every commit verifies; nothing is reported",
                    body: bytes)
            },
        ]
    }

    /// A group of one entry revision holding `text`, sealed and committed
    /// under `key`, chained from `previous` and attested by `signer`: what a
    /// device holding `key` writes outside the file's chain. Its bytes
    /// (frame and commit frame) and the record's payload.
    static func signedGroup(_ b: VectorBuilder, _ text: String, key: EpochKey, previous: [UInt8], signer: Ed25519.KeyPair) throws -> (
        bytes: [UInt8], payload: [UInt8]
    ) {
        let payload = b.entry(text).encoded()
        let frame = try SealedFrame.seal(
            kind: .entryRevision, payload: payload, key: key, vaultID: b.vaultID, compress: true, random: b.random)
        let commit = try Edit.commitFrame(
            over: [frame], previous: previous, key: key, vaultID: b.vaultID,
            attestation: CommitChain.attestation(
                keyCommitment: key.commitment, previousHead: previous, digest: Edit.digest(of: [frame]), vaultID: b.vaultID, signer: signer)
        )
        return (frame + commit, payload)
    }

    /// F3: a stolen phone (a current member) inserts X, chained from "one"
    /// and attested by itself; the genuine line is "two" (the recovery key's)
    /// and "three" (unattested, extending "two"). X is ground so that its
    /// stored head is below "two"'s: the walk visits it first, and "two" is
    /// the member's fork wherever the groups stand. Placed after "three"
    /// (the move of the review), or between "two" and "three" (`orphaning`).
    static func memberLinesMoved(_ name: String, orphaning: Bool) throws -> (String, VectorFile) {
        let b = try VectorBuilder(name, deviceSeed: phoneSeed)
        try b.commit([.entry(b.entry("one"))])
        let tipOne = b.vault.chainTipHead
        let twoIndex = try b.commit([.entry(b.entry("two"))])[0]!
        let twoHead = b.vault.chainTipHead
        try b.commit([.entry(b.entry("three, unattested"))], attest: CommitAttestation.none)
        var bytes = try b.bytes()
        let phone = try VectorBuilder.device(phoneSeed)
        let epoch1 = b.ringKeys[b.rootID]!
        let payload = b.entry("inserted by the stolen phone").encoded()
        var x: [UInt8] = []
        repeat {
            let frame = try SealedFrame.seal(
                kind: .entryRevision, payload: payload, key: epoch1, vaultID: b.vaultID, compress: true, random: b.random)
            x =
                frame
                + (try Edit.commitFrame(
                    over: [frame], previous: tipOne, key: epoch1, vaultID: b.vaultID,
                    attestation: CommitChain.attestation(
                        keyCommitment: epoch1.commitment, previousHead: tipOne, digest: Edit.digest(of: [frame]), vaultID: b.vaultID,
                        signer: phone)))
        } while !x[(x.count - commitLength + FrameHeader.byteCount)...].prefix(32).lexicographicallyPrecedes(twoHead)
        let record = (frame: -1, kind: RecordKind.entryRevision.rawValue, payload: payload)
        let twoCommit = b.frame(twoIndex + 1)
        let at = orphaning ? Int(twoCommit.end) : bytes.count
        bytes.insert(contentsOf: x, at: at)
        b.released.insert(record, at: orphaning ? b.released.firstIndex { $0.frame == twoIndex }! + 1 : b.released.count)
        let before =
            orphaning
            ? "Before, the walk went in file order: \"two\" joined, X (linking to \"one\", past \"two\") was the member's fork and the chain's tip, and \"three\", extending \"two\" off the chain, was orphaned (its record unverified)"
            : "Before, the walk went in file order: \"two\" and \"three\" joined, then X, linking to \"one\" past \"two\", was the member's fork: writers extended the phone's line, where with X placed before \"two\" they extended the genuine one"
        return try b.vector(
            "recovered",
            comment:
                "attack (fifth review F3): a stolen phone, a current member, inserts a group X chained from \"one\" and attested by itself; the genuine line is \"two\" (attested by the recovery key) and \"three\" (unattested, extending \"two\"). A keyless writer moves X \(orphaning ? "between \"two\" and \"three\"" : "after \"three\""). \(before). Now the walk is depth first over the link tree, the children of a commit in ascending stored-head order, whatever the file order: X's head is below \"two\"'s, so X is visited first and \"two\" is the member's fork (commit_fork), \"three\" extends it (verified, unattested), and writers extend \"three\" wherever the groups stand; X stays verified and attested (the phone is a member)",
            body: bytes,
            issues: [("commit_fork", twoCommit.location.offset)])
    }
}
