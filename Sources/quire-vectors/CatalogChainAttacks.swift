import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireVectors

/// The commit-chain attacks of the third review of format 2 (items 3 and 4):
/// a keyless copy of an earlier commit group, a run of inserted commits past
/// any look-back window, and a chain recomputed under an old epoch key that
/// keeps a member's attestation. Each gave another verdict before commit
/// frames stored the head they extend (`Spec/format.md §9.2`, §9.3).
extension Catalog {
    static var chainAttacks: [Make] {
        [
            {
                let b = try VectorBuilder("attack-keyless-copy-appended")
                for text in ["one", "two", "three", "four"] { try b.commit([.entry(b.entry(text))]) }
                var bytes = try b.bytes()
                let (copy, record) = try groupBytes(b, group: 2)
                bytes += copy
                b.released.append(record)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: a keyless writer appends a byte-for-byte copy of an earlier commit group (\"two\") and its commit frame. Before, the copy verified through the 64-commit look-back and linked to the commit before the original, so every commit from the original to the end was orphaned. Now the copy stores a head an earlier commit stores: it takes no link and is off the chain (orphaned, its record unverified); every earlier commit stays verified",
                    body: bytes,
                    issues: [("commit_orphaned", UInt64(bytes.count - commitLength))])
            },
            {
                let b = try VectorBuilder("attack-keyless-copy-then-write")
                for text in ["one", "two", "three", "four"] { try b.commit([.entry(b.entry(text))]) }
                let copyCommit = try appendCopy(b, group: 2, thenWrite: "written after the copy")
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: as attack-keyless-copy-appended, then a member writes. Before, the writer chained from the copy (the last commit whose head verified), so the copy stayed on the chain. Now a writer chains from the last commit on the chain (\"four\"): the copy stays off the chain (orphaned), and every commit but the copy verifies",
                    issues: [("commit_orphaned", copyCommit)])
            },
            {
                let b = try VectorBuilder("attack-keyless-copy-adjacent")
                try b.commit([.entry(b.entry("one"))])
                try b.commit([.entry(b.entry("two"))])
                let copyCommit = try appendCopy(b, group: 2, thenWrite: "three")
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: [j][copy of j]: a keyless writer appends a copy of the last commit group right after it, then a member writes. Before, the copy linked to the commit before j and orphaned j. Now the copy is off the chain (orphaned, its record unverified), j stays verified and the next commit extends j",
                    issues: [("commit_orphaned", copyCommit)])
            },
            {
                let b = try VectorBuilder("attack-keyless-copy-of-first-commit")
                for text in ["one", "two", "three"] { try b.commit([.entry(b.entry(text))]) }
                var bytes = try b.bytes()
                let (copy, profile) = try groupBytes(b, group: 0)
                bytes += copy
                b.released.append(profile)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: fewer than 64 commits, and a keyless writer appends a copy of the first commit group (the root keyring twice and the profile, chained from h_0). Before, the copy linked to h_0 and every commit before it was orphaned. Now it stores the first commit's head: off the chain (orphaned); its keyring copies change nothing (the first intact copy decides, format.md §8.1) and its profile copy is released as unverified",
                    body: bytes,
                    issues: [("commit_orphaned", UInt64(bytes.count - commitLength))])
            },
            {
                // C1 of the fourth review (a): a keyless writer inserts a
                // byte copy of group "four" (its frames and commit frame)
                // right after group "one", before the commit it extends.
                let b = try VectorBuilder("attack-keyless-copy-before-original")
                for text in ["one", "two", "three", "four", "five"] { try b.commit([.entry(b.entry(text))]) }
                var bytes = try b.bytes()
                let (copy, record) = try groupBytes(b, group: 4)
                let at = Int(b.frame(b.vault.structure.groups[1].commitFrame).end)
                bytes.insert(contentsOf: copy, at: at)
                let firstOfTwo = b.released.firstIndex { b.vault.structure.groups[2].members.contains($0.frame) }!
                b.released.insert(record, at: firstOfTwo)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (fourth review C1 a): a keyless writer inserts a byte copy of group \"four\" (frames and commit frame) right after group \"one\", before the commit \"three\" it extends. Before, links resolved only to earlier commits and the walk went in file order: the copy named a head stored only later (\"missing\"), so it was tampered and held the chain's place; the original \"four\" was the copy (same stored head, later) and \"five\", linking to the first commit storing that head, extended a commit off the chain: orphaned, and so was every commit after it; the vault was tampered and writes refused. Now links resolve to any commit of the file, the walk follows links, and of the commits storing one head the original is the first whose head verifies from a head stored before it: the inserted copy is the copy (orphaned, its record unverified); every genuine commit verifies and is attested, and the vault stays writable",
                    body: bytes,
                    issues: [("commit_orphaned", UInt64(at + copy.count - commitLength))])
            },
            {
                // C1 of the fourth review (b): a keyless writer swaps two
                // adjacent commit groups, "two" and "three".
                let b = try VectorBuilder("attack-keyless-swap-groups")
                for text in ["one", "two", "three", "four"] { try b.commit([.entry(b.entry(text))]) }
                var bytes = try b.bytes()
                let groups = b.vault.structure.groups
                let start = Int(b.offset(groups[2].members.lowerBound))
                let middle = Int(b.frame(groups[2].commitFrame).end)
                let end = Int(b.frame(groups[3].commitFrame).end)
                bytes.replaceSubrange(start..<end, with: Array(bytes[middle..<end]) + Array(bytes[start..<middle]))
                let two = b.released.firstIndex { groups[2].members.contains($0.frame) }!
                let three = b.released.firstIndex { groups[3].members.contains($0.frame) }!
                b.released.swapAt(two, three)
                return try b.vector(
                    "success",
                    comment:
                        "attack (fourth review C1 b): a keyless writer swaps two adjacent commit groups (\"two\" and \"three\", frames and commit frames); it replaces the vector damaged-commits-reordered, which pinned the old verdict. Before, \"three\", now first, named a head stored only later (\"missing\"): tampered, on the chain; \"two\" passed it by, and \"four\", linking to \"three\", extended a commit off the chain: orphaned, with every commit after it; the vault was tampered and writes refused. Now \"three\" links forward to \"two\" and the walk visits it right after \"two\": every commit verifies and is attested, nothing is reported (the records are released in file order), and writers chain from \"four\", the last commit of the walk",
                    body: bytes)
            },
            {
                // C3 of the fourth review: a stolen phone (a current member)
                // inserts a group X after "one"; writers that took X as
                // their tip (every writer did, when the genuine "two" was
                // the orphaned fork) chain from it; then the recovery key
                // removes the phone.
                let b = try VectorBuilder("attack-member-insert-then-removed", deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("one"))])
                let afterOne = Int(b.vault.structure.committedEnd)
                let tipOne = b.vault.chainTipHead
                let twoIndex = try b.commit([.entry(b.entry("two"))])[0]!
                let bytes = try b.bytes()
                let (two, twoRecord) = try groupBytes(b, group: 2)
                b.lose(from: twoIndex)
                let phone = try VectorBuilder.device(phoneSeed)
                let epoch1 = b.ringKeys[b.rootID]!
                let payload = b.entry("inserted by the stolen phone").encoded()
                // The walk visits the siblings "two" and X in stored-head
                // order; the phone grinds X's head (its record's nonce) to
                // sort after "two"'s, the order this vector pins.
                let twoHead = Array(two[(two.count - commitLength + FrameHeader.byteCount)...].prefix(32))
                var x: [UInt8] = []
                repeat {
                    let frame = try SealedFrame.seal(
                        kind: .entryRevision, payload: payload, key: epoch1, vaultID: b.vaultID, compress: true, random: b.random)
                    x =
                        frame
                        + (try Edit.commitFrame(
                            over: [frame], previous: tipOne, key: epoch1, vaultID: b.vaultID,
                            attestation: CommitChain.attestation(
                                keyCommitment: epoch1.commitment, previousHead: tipOne, digest: Edit.digest(of: [frame]),
                                vaultID: b.vaultID, signer: phone)))
                } while !twoHead.lexicographicallyPrecedes(x[(x.count - commitLength + FrameHeader.byteCount)...].prefix(32))
                b.released.append((frame: -1, kind: RecordKind.entryRevision.rawValue, payload: payload))
                try b.replaceFile(with: Array(bytes[0..<afterOne]) + x)
                let w = try b.commit([.entry(b.entry("written after X"))])[0]!
                let wCommit = b.commitFrame(of: w).location.offset
                let kept = [recoveryMember(b)]
                let (k2, removal) = try child(b, members: kept, removed: [b.members[1]], reason: "remove")
                try b.addKeyring(k2, removal, members: kept)
                try b.commit([.entry(b.entry("three, under epoch 2"))])
                var final = try b.bytes()
                final.insert(contentsOf: two, at: afterOne + x.count)
                b.released.insert(twoRecord, at: b.released.firstIndex { $0.frame == -1 }! + 1)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (fourth review C3): a stolen phone, a current member, inserts a group X after \"one\", chained from it and attested by itself; writers that took X as their tip (every writer did while the genuine \"two\", now after X, was the orphaned fork) commit after it; then the recovery key removes the phone and writes under epoch 2. X is now a removed member's, so \"two\" passes it by (orphaned). Before, the commit chained from X extended a commit off the chain, so it was orphaned, and so were the removal and every commit after it, for good. Now a commit a current member attested that extends a commit whose head verifies is a member's fork: verified (commit_fork, a warning), the chain goes on from it, and the removal and the epoch-2 commit verify and are attested",
                    body: final,
                    issues: [("commit_orphaned", UInt64(afterOne + x.count - commitLength)), ("commit_fork", wCommit + UInt64(two.count))])
            },
            {
                // A phone is removed by the recovery key (R); holding the
                // epoch-1 key, it then inserts 65 chained commits of its own
                // before R's group, each attested by itself.
                let b = try VectorBuilder("attack-removed-device-inserts-65-commits", deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("before the removal"))])
                let insertAt = Int(b.vault.structure.committedEnd)
                let tip = b.vault.chainTipHead
                let releasedBefore = b.released.count
                let phone = try VectorBuilder.device(phoneSeed)
                let epoch1 = b.ringKeys[b.rootID]!
                let kept = [recoveryMember(b)]
                let (k2, removal) = try child(b, members: kept, removed: [b.members[1]], reason: "remove")
                try b.addKeyring(k2, removal, members: kept)
                try b.commit([.entry(b.entry("after the removal"))])
                var bytes = try b.bytes()
                var inserted: [UInt8] = []
                var commits: [UInt64] = []
                var records: [(frame: Int, kind: UInt8, payload: [UInt8])] = []
                var previous = tip
                for i in 0..<65 {
                    let payload = b.entry("inserted \(i)").encoded()
                    let frame = try SealedFrame.seal(
                        kind: .entryRevision, payload: payload, key: epoch1, vaultID: b.vaultID, compress: true, random: b.random)
                    let d = Edit.digest(of: [frame])
                    let commit = try Edit.commitFrame(
                        over: [frame], previous: previous, key: epoch1, vaultID: b.vaultID,
                        attestation: CommitChain.attestation(
                            keyCommitment: epoch1.commitment, previousHead: previous, digest: d, vaultID: b.vaultID, signer: phone))
                    inserted += frame
                    commits.append(UInt64(insertAt + inserted.count))
                    inserted += commit
                    records.append((frame: -1, kind: RecordKind.entryRevision.rawValue, payload: payload))
                    previous = Array(commit[16..<48])
                }
                bytes.insert(contentsOf: inserted, at: insertAt)
                b.released.insert(contentsOf: records, at: releasedBefore)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: the recovery key removes a phone; the phone, which still holds the epoch-1 key, inserts 65 chained commits attested by itself before the removal's group. Before, the removal's commit could not reach the head it extends within the 64-commit look-back: a mismatch that the next commit vouched for, so the vault was tampered and every write refused. Now the removal's commit stores the head it extends and links to it through a map of stored heads, with no window: it passes the 65 by (a removed member's attestation protects nothing), so they are orphaned and their records unverified; the removal and the commit after it verify and are attested",
                    body: bytes, issues: commits.map { ("commit_orphaned", $0) })
            },
            {
                // C2 of the fourth review: someone who holds the epoch-2 key
                // (a passphrase, an escrow key, a device removed later)
                // copies the frames of a commit the recovery key attested
                // under epoch 1, commits them again under the epoch-2 key
                // with the same previous head and the recovery key's
                // attestation, and inserts that group before the original.
                let b = try VectorBuilder("attack-commit-resealed-under-newer-key")
                try b.commit([.entry(b.entry("one"))])
                try b.commit([.entry(b.entry("two, under epoch 1"))])
                let epoch1 = b.ringKeys[b.rootID]!
                let (k2, rotation) = try child(b)
                try b.addKeyring(k2, rotation)
                try b.commit([.entry(b.entry("three, under epoch 2"))])
                var bytes = try b.bytes()
                let g = b.vault.structure.groups[2]
                let start = Int(b.offset(g.members.lowerBound))
                let framesEnd = Int(b.frame(g.commitFrame).location.offset)
                let frames = Array(bytes[start..<framesEnd])
                let plain = CommitChain.openAttestation(
                    body: g.commitBody, previousHead: g.storedPreviousHead, digest: g.digest, key: epoch1, vaultID: b.vaultID,
                    commitHeader: b.frame(g.commitFrame).header)!
                let header = CommitChain.commitHeader(keyID: k2.id)
                let commit =
                    header.encoded()
                    + (try CommitChain.body(
                        previousHead: g.storedPreviousHead, digest: g.digest, attestation: plain, key: k2, vaultID: b.vaultID,
                        commitHeader: header))
                bytes.insert(contentsOf: frames + commit, at: start)
                let record = b.released.firstIndex { g.members.contains($0.frame) }!
                b.released.insert((frame: -1, kind: b.released[record].kind, payload: b.released[record].payload), at: record)
                let copyCommit = UInt64(start + frames.count)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (fourth review C2): a holder of the epoch-2 key (a passphrase, an escrow key, a device removed later) copies the frames of a commit the recovery key attested under epoch 1, commits them again under the epoch-2 key with the same previous head and the recovery key's attestation, and inserts the group before the original. Before, the attestation did not sign the commit's key: the copy verified and stayed attested, the floor rose to epoch 2, the original and every later commit under epoch 1 were stale and the commits after them orphaned. Now the attestation signs the key commitment of the commit's key: under the epoch-2 key the copy's signature does not verify, so it is not a member's and raises no floor; the original links to the same head and passes the copy by (orphaned, its record unverified); every genuine commit stays verified and attested, and the vault stays writable",
                    body: bytes,
                    issues: [("commit_orphaned", copyCommit)])
            },
            {
                // F1 of the fifth review (1a), when the head did not cover
                // the attestation bytes. A keyless writer copies group "two"
                // (frames and commit frame), overwrites bytes 64..<200 of
                // the copy's commit body (nonce and sealed A), and inserts
                // it right after "one", before the original.
                let b = try VectorBuilder("attack-keyless-copy-attestation-randomised")
                for text in ["one", "two", "three"] { try b.commit([.entry(b.entry(text))]) }
                var bytes = try b.bytes()
                let (original, record) = try groupBytes(b, group: 2)
                var copy = original
                let body = copy.count - commitLength + FrameHeader.byteCount
                for i in (body + 64)..<copy.count { copy[i] = UInt8(truncatingIfNeeded: (i - body) &* 37 &+ 11) }
                let at = Int(b.frame(b.vault.structure.groups[1].commitFrame).end)
                bytes.insert(contentsOf: copy, at: at)
                let firstOfTwo = b.released.firstIndex { b.vault.structure.groups[2].members.contains($0.frame) }!
                b.released.insert(record, at: firstOfTwo)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (fifth review F1, 1a): a keyless writer copies group \"two\" (frames and commit frame), overwrites the nonce and sealed attestation of the copy's commit body (bytes 64..<200) and inserts it right after \"one\", before the original. Before, the head covered neither, and of the commits storing one head the original was the first that stands in its place: the altered copy, whose attestation fails (treated as unattested); the genuine \"two\" was the copy (orphaned) and \"three\" linked to the altered copy: \"two\"'s record read as verified but unattested, reported attestation_failed and commit_orphaned. Now the head covers those bytes (sixth review R6-1): the altered copy's head does not verify, so it is a mismatch (commit_mismatch, its record unverified) that places and displaces nothing; the genuine \"two\" is verified and attested, and \"three\" links to it",
                    body: bytes,
                    issues: [("commit_mismatch", UInt64(at + copy.count - commitLength))])
            },
            {
                // F1 of the fifth review (1b): an epoch-key holder (here the
                // root epoch key: a passphrase or escrow custodian holds it)
                // seals group "two"'s commit again with no attestation
                // (same key, same head), inserts it right after "one", and
                // appends an empty commit Z after it chained from "one".
                let b = try VectorBuilder("attack-epoch-key-copy-unattested-then-empty-commit")
                for text in ["one", "two", "three"] { try b.commit([.entry(b.entry(text))]) }
                var bytes = try b.bytes()
                let epoch1 = b.ringKeys[b.rootID]!
                let g = b.vault.structure.groups[2]
                let (copy, record) = try groupBytes(b, group: 2)
                let header = CommitChain.commitHeader(keyID: epoch1.id)
                let unattested = [UInt8](repeating: 0, count: CommitChain.attestationByteCount)
                let resealed =
                    header.encoded()
                    + (try CommitChain.body(
                        previousHead: g.storedPreviousHead, digest: g.digest, attestation: unattested, key: epoch1, vaultID: b.vaultID,
                        commitHeader: header))
                let z = try Edit.commitFrame(
                    over: [], previous: g.storedPreviousHead, key: epoch1, vaultID: b.vaultID, attestation: unattested)
                let inserted = Array(copy.dropLast(commitLength)) + resealed + z
                let at = Int(b.frame(b.vault.structure.groups[1].commitFrame).end)
                bytes.insert(contentsOf: inserted, at: at)
                let firstOfTwo = b.released.firstIndex { g.members.contains($0.frame) }!
                b.released.insert(record, at: firstOfTwo)
                let copyCommit = UInt64(at + copy.count - commitLength)
                let zCommit = UInt64(at + inserted.count - commitLength)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (fifth review F1, 1b): a holder of the epoch key \"two\" was committed under (a passphrase, an escrow custodian, a removed device) seals \"two\"'s commit again under that key with no attestation — same head, same previous head, same frames — inserts that group right after \"one\", before the original, and appends an empty commit Z after it chained from \"one\". Before, the unattested copy was the original (the first that stands in its place), the genuine \"two\" a copy; Z passed the unattested copy by, and \"three\", linking to it, was a member's fork: every record of \"two\", a commit the recovery key attested, was unverified. Now, where commits store one head, the original is chosen first among those a current member attested: the genuine \"two\" is the original and passes Z by; the re-sealed copy and Z are orphaned (the copy's record unverified); \"two\" and \"three\" stay verified and attested, and the vault stays writable",
                    body: bytes,
                    issues: [("commit_orphaned", copyCommit), ("commit_orphaned", zCommit)])
            },
            {
                // F2 of the fifth review: a current member (a stolen phone)
                // signs a rotation keyring of epoch 2 and inserts it, in a
                // group it commits under epoch 2 (the key a commit starting
                // an epoch is made under, format.md §9.2) and attests, right
                // after "one", chained from it.
                let b = try VectorBuilder("attack-member-early-rotation-stales-history", deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("one"))])
                let afterOne = Int(b.vault.structure.committedEnd)
                let tipOne = b.vault.chainTipHead
                try b.commit([.entry(b.entry("two"))])
                let twoGroup = b.vault.structure.groups.last!
                try b.commit([.entry(b.entry("three"))])
                let history = try b.bytes()
                let phone = try VectorBuilder.device(phoneSeed)
                let (k2, rotation) = try child(b, signer: phone)
                try b.addKeyring(k2, rotation)
                let all = try b.bytes()
                let g = b.vault.structure.groups.last!
                let frames = g.members.map { Array(all[Int(b.offset($0))..<Int(b.frame($0).end)]) }
                let x =
                    Array(frames.joined())
                    + (try Edit.commitFrame(
                        over: frames, previous: tipOne, key: k2, vaultID: b.vaultID,
                        attestation: CommitChain.attestation(
                            keyCommitment: k2.commitment, previousHead: tipOne, digest: Edit.digest(of: frames), vaultID: b.vaultID,
                            signer: phone)))
                var bytes = history
                bytes.insert(contentsOf: x, at: afterOne)
                // The phone's commit and "two" both link to "one": the one
                // whose stored head sorts second is the member's fork.
                let xHead = Array(x[(x.count - commitLength + FrameHeader.byteCount)...].prefix(32))
                let twoCommit = b.frame(twoGroup.commitFrame).location.offset
                let fork =
                    xHead.lexicographicallyPrecedes(twoGroup.storedHead)
                    ? twoCommit + UInt64(x.count) : UInt64(afterOne + x.count - commitLength)
                return try b.vector(
                    "recovered",
                    comment:
                        "attack (fifth review F2): a stolen phone, a current member, signs a rotation keyring of epoch 2 (same members) and inserts it right after \"one\", in a group it commits under epoch 2 (the key a commit that starts an epoch is made under, format.md §9.2; under epoch 1 the group would be stale, seventh review R7-3), chained from \"one\" and attested by itself. Before, the floor was taken over the walk: the inserted group raised it to 2, so \"two\" and \"three\" (epoch 1) were stale and nothing in them was released. Now staleness is judged by the floor along the commit's own line (the member-attested commits it links to, transitively): \"two\" links to \"one\", whose line is at epoch 1, so it is not stale. The phone's commit and \"two\" both link to \"one\"; the one whose stored head sorts second is the member's fork (commit_fork, a warning: the phone can grind its head to sort first, and \"two\" is the fork instead); either way \"two\" and \"three\" verify and their records are released",
                    body: bytes,
                    issues: [("commit_fork", fork)])
            },
            {
                // R9-4 of the ninth review (R8-6 of the eighth): a stolen
                // phone, a current member, signs on a branch from the root a
                // keyring of epoch 2 whose key is the current epoch-3 key
                // (rule 5.4 allows it: no ancestor has that key), commits it
                // under that key (format.md §9.2) and inserts the group
                // right after "one", chained from it and attested by itself.
                let b = try VectorBuilder("attack-stolen-device-claims-current-key-at-old-epoch", deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("one"))])
                let afterOne = Int(b.vault.structure.committedEnd)
                let tipOne = b.vault.chainTipHead
                try b.rotate(to: 2)
                try b.commit([.entry(b.entry("two"))])
                let i3 = try b.rotate(to: 3)
                let r2Commit = b.commitFrame(
                    of: b.keyringIDs[2].flatMap { id in b.vault.structure.frames.firstIndex { $0.trailer == id.bytes } }!)
                try b.commit([.entry(b.entry("three"))])
                let history = try b.bytes()
                let phone = try VectorBuilder.device(phoneSeed)
                let current = b.keys.writeKey!
                let claimed = EpochKey(epoch: 2, key: current.key, blobKey: current.blobKey)
                let claim = try b.keyring(
                    claimed, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: claimed), members: b.members, signer: phone)
                try b.addKeyring(claimed, claim, trust: false)
                let all = try b.bytes()
                let g = b.vault.structure.groups.last!
                let frames = g.members.map { Array(all[Int(b.offset($0))..<Int(b.frame($0).end)]) }
                let x =
                    Array(frames.joined())
                    + (try Edit.commitFrame(
                        over: frames, previous: tipOne, key: current, vaultID: b.vaultID,
                        attestation: CommitChain.attestation(
                            keyCommitment: current.commitment, previousHead: tipOne, digest: Edit.digest(of: frames), vaultID: b.vaultID,
                            signer: phone)))
                var bytes = history
                bytes.insert(contentsOf: x, at: afterOne)
                // The phone's commit and the epoch-2 rotation's both link to
                // "one": the one whose stored head sorts second links past a
                // commit a current member attested, a member's fork.
                let xHead = Array(x[(x.count - commitLength + FrameHeader.byteCount)...].prefix(32))
                let r2Head = b.vault.structure.groups.first { $0.commitFrame == r2Commit.location.index }!.storedHead
                let fork =
                    xHead.lexicographicallyPrecedes(r2Head)
                    ? r2Commit.location.offset + UInt64(x.count) : UInt64(afterOne + x.count - commitLength)
                return try b.vector(
                    "recovered",
                    comment:
                        "attack (ninth review R9-4, eighth review R8-6): a stolen phone, a current member, signs on a branch from the root a keyring of epoch 2 whose key is the current epoch-3 key (rule 5.4 allows it: no ancestor has that key), commits it under that key and inserts the group right after \"one\", chained from it and attested by itself. Before, a key claimed at two epochs took the lowest (this reader took the first in the file): the epoch-3 key had epoch 2, so the epoch-3 rotation's own commit was stale (below its own group's keyring, format.md §9.3 step 2) and \"three\" after it orphaned, until the phone was removed. Now a commit's key epoch is that of the trusted keyring of its key in its own group, else the one the commit it links to under the same key took, else the highest claim (format.md §5.1, §9.3): the rotation's commit and \"three\" are at epoch 3 and verify, and both keyrings that start the key are reported (key_epoch_claimed_twice, a warning naming each signer: one of them reused a key). The phone's commit and the epoch-2 rotation's both link to \"one\"; the one whose stored head sorts second is the member's fork (commit_fork, a warning)",
                    body: bytes,
                    issues: [
                        ("key_epoch_claimed_twice", UInt64(afterOne)), ("key_epoch_claimed_twice", b.offset(i3) + UInt64(x.count)),
                        ("commit_fork", fork),
                    ])
            },
            {
                try recomputedChain("attack-removed-device-recomputes-heads", thenWritten: false)
            },
            {
                try recomputedChain("attack-removed-device-recomputes-heads-written-after", thenWritten: true)
            },
        ]
    }

    /// Appends a copy of commit group `group` and its commit frame to the
    /// file, as a keyless writer can, then has a member write `text`;
    /// returns the offset of the copy's commit frame.
    static func appendCopy(_ b: VectorBuilder, group: Int, thenWrite text: String) throws -> UInt64 {
        var bytes = try b.bytes()
        let (copy, record) = try groupBytes(b, group: group)
        bytes += copy
        b.released.append(record)
        try b.replaceFile(with: bytes)
        try b.commit([.entry(b.entry(text))])
        return UInt64(bytes.count - commitLength)
    }

    /// The bytes of commit group `group` (its frames and its commit frame),
    /// and the first record it releases.
    static func groupBytes(_ b: VectorBuilder, group: Int) throws -> ([UInt8], (frame: Int, kind: UInt8, payload: [UInt8])) {
        let g = b.vault.structure.groups[group]
        let start = Int(b.offset(g.members.lowerBound))
        let end = Int(b.frame(g.commitFrame).end)
        let record = b.released.first { g.members.contains($0.frame) }!
        return (Array(try b.bytes()[start..<end]), (frame: -1, kind: record.kind, payload: record.payload))
    }

    /// A phone removed by the recovery key (R, committed under epoch 1 and
    /// attested by the recovery key) inserts a group of its own before R's
    /// and recomputes R's head from it under the epoch-1 key, sealing R's
    /// attestation again unchanged. With `thenWritten`, the recovery key
    /// had written a commit of epoch 2 after R, which the phone cannot
    /// recompute.
    static func recomputedChain(_ name: String, thenWritten: Bool) throws -> (String, VectorFile) {
        let b = try VectorBuilder(name, deviceSeed: phoneSeed)
        try b.commit([.entry(b.entry("before the removal"))])
        let insertAt = Int(b.vault.structure.committedEnd)
        let tip = b.vault.chainTipHead
        let releasedBefore = b.released.count
        let phone = try VectorBuilder.device(phoneSeed)
        let epoch1 = b.ringKeys[b.rootID]!
        let kept = [recoveryMember(b)]
        let (k2, removal) = try child(b, members: kept, removed: [b.members[1]], reason: "remove")
        let r = try b.addKeyring(k2, removal, members: kept)
        if thenWritten { try b.commit([.entry(b.entry("after the removal"))]) }
        var bytes = try b.bytes()
        // The inserted group, chained from the head R extended.
        let payload = b.entry("inserted by the removed phone").encoded()
        let frame = try SealedFrame.seal(
            kind: .entryRevision, payload: payload, key: epoch1, vaultID: b.vaultID, compress: true, random: b.random)
        let insertedCommit = try Edit.commitFrame(
            over: [frame], previous: tip, key: epoch1, vaultID: b.vaultID,
            attestation: CommitChain.attestation(
                keyCommitment: epoch1.commitment, previousHead: tip, digest: Edit.digest(of: [frame]), vaultID: b.vaultID, signer: phone))
        let insertedHead = Array(insertedCommit[16..<48])
        // R is made under the epoch-2 key it starts (format.md §9.2,
        // seventh review R7-3), which the phone does not hold: it cannot
        // recompute R, nor open R's attestation. It replaces R's commit
        // frame by one of its own under epoch 1 over R's group, chained from
        // the inserted head and attested by itself.
        let rGroup = b.vault.structure.groups[b.vault.structure.groupIndex(ofFrame: r)!]
        let rFrame = b.frame(rGroup.commitFrame)
        precondition(rFrame.header.keyID == k2.id)
        let header = CommitChain.commitHeader(keyID: epoch1.id)
        let replaced =
            header.encoded()
            + (try CommitChain.body(
                previousHead: insertedHead, digest: rGroup.digest,
                attestation: CommitChain.attestation(
                    keyCommitment: epoch1.commitment, previousHead: insertedHead, digest: rGroup.digest, vaultID: b.vaultID,
                    signer: phone),
                key: epoch1, vaultID: b.vaultID, commitHeader: header))
        bytes.replaceSubrange(Int(rFrame.location.offset)..<Int(rFrame.end), with: replaced)
        let inserted = frame + insertedCommit
        bytes.insert(contentsOf: inserted, at: insertAt)
        b.released.insert((frame: -1, kind: RecordKind.entryRevision.rawValue, payload: payload), at: releasedBefore)
        let shift = UInt64(inserted.count)
        let insertedAt = UInt64(insertAt + frame.count)
        if !thenWritten {
            return try b.vector(
                "damaged",
                comment:
                    "attack: the recovery key removes a phone (R, committed under epoch 1); the phone inserts a group of its own before R's and recomputes R's head from it under the epoch-1 key, sealing the recovery key's attestation again unchanged. Before, the attestation signed only vault id ‖ D, so R still verified as the recovery key's and the inserted group verified too. Now the attestation signs the head R extends: it no longer verifies (attestation_failed, R's group is unattested); the inserted group is verified but attested only by a removed member, never shown as a member's",
                body: bytes,
                issues: [("stale_epoch", rFrame.location.offset + shift)])
        }
        return try b.vector(
            "damaged",
            comment:
                "attack: as attack-removed-device-recomputes-heads, but the recovery key had written a commit under epoch 2 after R, whose head the phone cannot recompute. That commit stores R's original head, which no commit of the file stores now: the commit it extends was deleted, so it is tampered (writers refuse to write until a merge or a compaction rewrites the file), and the reader passes by every commit after the last one a current member attested: the inserted group and the recomputed R are orphaned, their records unverified",
            body: bytes,
            issues: [
                ("commit_orphaned", insertedAt), ("stale_epoch", rFrame.location.offset + shift),
                ("commit_tampered", b.commitFrame(of: b.vault.structure.committedFrameCount - 2).location.offset + shift),
            ])
    }
}
