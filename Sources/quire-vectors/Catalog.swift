import QuireCrypto
import QuireVectors
import QuireFormat
import QuireKeys

/// Every vector, by name. Each builds its vault from a random stream seeded
/// with its own name, so generation is deterministic and one vector's change
/// never shifts another's bytes.
enum Catalog {
    typealias Make = () throws -> (String, VectorFile)

    static var all: [Make] {
        success + recovered + damaged + chunks + keyrings + removal + errors
    }

    static let english = "I lay long in bed, and then up and to the office, where all the morning, and at noon dined at home."

    // MARK: - Success

    static var success: [Make] {
        var list: [Make] = [
            {
                let b = try VectorBuilder("success-empty")
                return try b.vector("success", comment: "a new vault: the first keyring and the profile, one commit")
            },
            {
                let b = try VectorBuilder("success-one-entry")
                try b.commit([.entry(b.entry(english, tags: ["office"]))])
                return try b.vector("success", comment: "one entry revision in its own commit")
            },
            {
                let b = try VectorBuilder("success-many-entries")
                try b.commit((0..<20).map { i in .entry(b.entry("Entry \(i): " + english)) })
                for i in 0..<5 { try b.commit([.entry(b.entry("Single \(i)"))]) }
                return try b.vector("success", comment: "twenty revisions in one commit, then five single-entry commits")
            },
            {
                let b = try VectorBuilder("success-unicode")
                try b.commit([
                    .entry(b.entry("晴。上午往教育部。下午訪季巿。", tags: ["日记"])),
                    .entry(b.entry("Утромъ писалъ. Вечеромъ гулялъ по саду.", tags: ["дневникъ"])),
                    .entry(b.entry("emoji 🌧️☕️, combining e\u{301}, RTL שלום, NUL \u{0}, and \\* escapes")),
                ])
                return try b.vector("success", comment: "Chinese, pre-1918 Russian, emoji, combining marks, RTL and NUL stored byte for byte")
            },
            {
                let b = try VectorBuilder("success-edit-and-tombstone")
                let first = b.entry("First draft")
                let second = b.entry("Second draft", parents: [first.revisionID], entryID: first.entryID)
                let gone = b.entry("", parents: [second.revisionID], entryID: first.entryID, deleted: true)
                try b.commit([.entry(first)])
                try b.commit([.entry(second)])
                try b.commit([.entry(gone)])
                return try b.vector("success", comment: "an entry edited once and then deleted (a tombstone revision)")
            },
            {
                let b = try VectorBuilder("success-large-entry")
                try b.commit([.entry(b.entry(String(repeating: english + " ", count: 2000)))])
                return try b.vector("success", comment: "a 200 KB entry, zstd-compressed (compressed flag set)")
            },
            {
                let b = try VectorBuilder("success-incompressible-entry")
                var r = b.entry("random extra")
                r.body.extra = CBORMap(text: [("noise", .bytes(b.random.bytes(3000)))])
                try b.commit([.entry(r)])
                return try b.vector("success", comment: "an entry whose payload does not compress is stored uncompressed (flags 0x01)")
            },
            {
                let b = try VectorBuilder("success-unknown-fields")
                var r = b.entry("future fields")
                r.unknownFields = CBORMap(text: [("zzFuture", .text("kept")), ("aaFuture", .array([.unsigned(1), .null]))])
                r.body.unknownFields = CBORMap(text: [("colour", .text("teal"))])
                try b.commit([.entry(r)])
                return try b.vector("success", comment: "fields unknown to version 1 in a revision and its body are released unchanged")
            },
            {
                let b = try VectorBuilder("success-cbor-depth-16")
                var r = b.entry("deep but allowed")
                var v = CBOR.null
                for _ in 0..<15 { v = .array([v]) }
                r.unknownFields = CBORMap(text: [("deep", v)])
                try b.commit([.entry(r)])
                return try b.vector("success", comment: "an unknown field nested so its innermost item is at depth 16 (the record map is depth 0): the deepest allowed")
            },
            {
                let b = try VectorBuilder("success-profile-update")
                try b.commit([.profile(Profile(name: "Renamed journal", about: "by S. P.", clock: HybridLogicalClock(milliseconds: 1_767_225_700_000, counter: 0)))])
                return try b.vector("success", comment: "a second profile record; the later clock wins")
            },
            {
                let b = try VectorBuilder("success-many-commits")
                for i in 0..<50 { try b.commit([.entry(b.entry("Day \(i)"))]) }
                return try b.vector("success", comment: "fifty commits, each chained to the one before")
            },
            {
                let b = try VectorBuilder("success-empty-commit")
                // Writers skip empty commits, but readers accept them: one
                // built by hand, chained to the last commit.
                let last = b.vault.structure.groups.last!.storedHead
                let header = CommitChain.commitHeader(epoch: 1)
                let head = CommitChain.head(commitKey: b.keys.writeKey!.commitKey, vaultID: b.vaultID, previousHead: last, digest: BLAKE2b.hash([UInt8](), byteCount: 32), commitHeader: header)
                let bytes = try b.bytes() + header.encoded() + head
                return try b.vector("success", comment: "a commit that covers no frames is valid (writers do not make them; readers accept them)", body: bytes)
            },
            {
                let b = try VectorBuilder("success-epoch-rotation")
                try b.commit([.entry(b.entry("in epoch 1"))])
                try b.rotate(to: 2)
                try b.commit([.entry(b.entry("in epoch 2"))])
                return try b.vector("success", comment: "a second keyring starts epoch 2 and carries the epoch 1 key; both epochs read")
            },
            {
                let b = try VectorBuilder("success-three-epochs")
                for e: UInt16 in 2...3 {
                    try b.commit([.entry(b.entry("before epoch \(e)"))])
                    try b.rotate(to: e)
                }
                try b.commit([.entry(b.entry("in epoch 3"))])
                return try b.vector("success", comment: "three epochs; the newest keyring carries both earlier keys")
            },
            {
                let b = try VectorBuilder("success-passphrase", extraSlots: { key, id, r in
                    var p = Array("correct horse battery staple".utf8)
                    return [try SlotCrypto.passphraseSlot(for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id, random: r)]
                })
                try b.commit([.entry(b.entry("opened with a passphrase"))])
                return try b.vector("success", comment: "opened through a passphrase slot (Argon2id opslimit 1, memlimit 8192: tiny, for speed)", passphrase: "correct horse battery staple")
            },
            {
                let b = try VectorBuilder("success-device-and-escrow-slots", extraSlots: { key, id, r in
                    let device = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: r))
                    let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: r))
                    return [try SlotCrypto.deviceSlot(for: key, devicePublicKey: device.publicKey, vaultID: id, random: r),
                            try SlotCrypto.escrowSlot(for: key, escrowPublicKey: escrow.publicKey, vaultID: id, random: r)]
                })
                try b.commit([.entry(b.entry("standard mode"))])
                return try b.vector("success", comment: "a keyring with recovery, device and escrow slots (standard mode), opened with the recovery key")
            },
            {
                let seed = [UInt8](repeating: 0x5d, count: 32)
                let b = try VectorBuilder("success-device-open", deviceSeed: seed)
                try b.commit([.entry(b.entry("opened with the device key"))])
                return try b.vector("success", comment: "opened through a device slot with the device's Ed25519 key (converted to X25519); seed 5d×32", deviceSeed: seed)
            },
            {
                let b = try VectorBuilder("success-escrow-free", escrowFree: true)
                try b.commit([.entry(b.entry("nobody else"))])
                return try b.vector("success", comment: "an escrow-free keyring without escrow slots")
            },
            {
                let b = try VectorBuilder("success-unknown-noncritical-kinds")
                let sealed = try SealedFrame.seal(kind: RecordKind(rawValue: 0xbf), payload: Array("future".utf8), key: b.keys.writeKey!, vaultID: b.vaultID, compress: false, random: b.random)
                try b.commit([.raw(sealed, release: nil), .plaintext(RecordKind(rawValue: 0xbe), epoch: 1, Array("plain future".utf8)), .entry(b.entry("after them"))])
                return try b.vector("success", comment: "non-critical kinds 0xbf (sealed) and 0xbe (plaintext) are skipped, not released, and do not stop the reader")
            },
            {
                let b = try VectorBuilder("success-attachment-dedup")
                let photo = b.random.bytes(100_000)
                try b.commit([.blob(photo, mediaType: "image/jpeg")])
                try b.commit([.blob(photo, mediaType: "image/jpeg"), .entry(b.entry("the same photo again"))])
                return try b.vector("success", comment: "the same content stored twice is stored once (the second store appends nothing)")
            },
        ]
        for size in [0, 1, 65_535, 65_536, 65_537, 131_072, 200_000] {
            list.append {
                let b = try VectorBuilder("success-attachment-\(size)")
                let content = b.random.bytes(size)
                try b.commit([.blob(content, mediaType: "application/octet-stream"), .entry(b.entry("attachment of \(size) bytes"))])
                return try b.vector("success", comment: "an attachment of \(size) bytes: \(BlobManifest(blob: BlobID(unchecked: [UInt8](repeating: 0, count: 32)), stream: StreamID(unchecked: [UInt8](repeating: 0, count: 16)), byteCount: UInt64(size)).chunkCount) chunk(s), the canonical chunking")
            }
        }
        return list
    }

    // MARK: - Recovered (warnings only)

    static var recovered: [Make] {
        var list: [Make] = [
            {
                let b = try VectorBuilder("recovered-torn-tail-in-header")
                try b.commit([.entry(b.entry("committed"))])
                var bytes = try b.bytes()
                let end = UInt64(bytes.count)
                bytes += [0x10, 0x03, 0x01, 0x00, 0x80]
                return try b.vector("recovered", comment: "a write cut off inside a frame header", body: bytes, issues: [("torn_tail", end)])
            },
            {
                let b = try VectorBuilder("recovered-torn-tail-in-body")
                try b.commit([.entry(b.entry("committed"))])
                let end = UInt64(try b.bytes().count)
                try b.commit([.entry(b.entry("lost"))], expectReleased: false)
                let bytes = try b.bytes()
                return try b.vector("recovered", comment: "a write cut off inside a record body", body: Array(bytes[0..<(Int(end) + 30)]), issues: [("torn_tail", end)])
            },
            {
                let b = try VectorBuilder("recovered-uncommitted-records")
                try b.commit([.entry(b.entry("committed"))])
                let end = UInt64(try b.bytes().count)
                try b.commit([.entry(b.entry("written but not committed")), .entry(b.entry("also"))], expectReleased: false)
                let bytes = try b.bytes()
                return try b.vector("recovered", comment: "whole records with no commit after them are not released", body: Array(bytes[0..<(bytes.count - 28)]), issues: [("torn_tail", end)])
            },
            {
                let b = try VectorBuilder("recovered-torn-commit")
                try b.commit([.entry(b.entry("committed"))])
                let end = UInt64(try b.bytes().count)
                try b.commit([.entry(b.entry("commit cut off"))], expectReleased: false)
                let bytes = try b.bytes()
                return try b.vector("recovered", comment: "the commit frame itself is cut off: its records are not committed", body: Array(bytes[0..<(bytes.count - 9)]), issues: [("torn_tail", end)])
            },
            {
                let b = try VectorBuilder("recovered-trailing-garbage")
                try b.commit([.entry(b.entry("committed"))])
                let bytes = try b.bytes()
                return try b.vector("recovered", comment: "random bytes after the last commit are a torn tail", body: bytes + b.random.bytes(100), issues: [("torn_tail", UInt64(bytes.count))])
            },
            {
                let b = try VectorBuilder("recovered-trailing-zeros")
                try b.commit([.entry(b.entry("committed"))])
                let bytes = try b.bytes()
                return try b.vector("recovered", comment: "4096 zero bytes after the last commit (a file system's zero fill after a crash)", body: bytes + [UInt8](repeating: 0, count: 4096), issues: [("torn_tail", UInt64(bytes.count))])
            },
            {
                let b = try VectorBuilder("recovered-header-copy-1-damaged")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                Edit.flipBit(&bytes, byte: 20, bit: 3)
                return try b.vector("recovered", comment: "a flipped bit in the first header copy's vault id: the second copy is used", body: bytes, issues: [("header_copy_damaged", 0)])
            },
            {
                let b = try VectorBuilder("recovered-header-copy-2-damaged")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                Edit.flipBit(&bytes, byte: 32 + 29, bit: 0)
                return try b.vector("recovered", comment: "a flipped bit in the second header copy's check", body: bytes, issues: [("header_copy_damaged", 32)])
            },
            {
                let b = try VectorBuilder("recovered-header-magic-damaged")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                Edit.flipBit(&bytes, byte: 1, bit: 6)
                return try b.vector("recovered", comment: "a flipped bit in the first copy's magic bytes", body: bytes, issues: [("header_copy_damaged", 0)])
            },
            {
                let b = try VectorBuilder("recovered-keyring-copy-damaged")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                Edit.flipBit(&bytes, byte: Int(b.frame(0).location.offset) + 100, bit: 4)
                return try b.vector("recovered", comment: "a flipped bit in the first copy of the root keyring: the second copy is used, nothing is lost", body: bytes,
                                    issues: [("keyring_copy_damaged", b.frame(0).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-copy-trailer")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                let copy = b.vault.structure.groups[0].commitFrame - 1
                Edit.flipBit(&bytes, byte: Int(b.frame(copy).end) - 3, bit: 0)
                return try b.vector("damaged", comment: "a flipped bit in the trailer of the second keyring copy: recognised as a copy by its body's hash; the trailer is in the commit chain, so that commit does not verify", body: bytes,
                                    issues: [("keyring_copy_damaged", b.frame(copy).location.offset), ("commit_mismatch", b.frame(copy + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-copy-flags-set")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                let at = Int(b.frame(0).location.offset)
                bytes[at + 1] = FrameHeader.sealedFlag
                Edit.fixCheck(&bytes, frameAt: at)
                return try b.vector("damaged", comment: "the first copy of the root keyring given the sealed flag (check recomputed): it breaks its row, so it is a damaged copy and the second copy is used; the commit covering it no longer verifies", body: bytes,
                                    issues: [("keyring_copy_damaged", UInt64(at)), ("commit_mismatch", b.frame(b.vault.structure.groups[0].commitFrame).location.offset)])
            },
            {
                let b = try VectorBuilder("recovered-commit-header-rebuilt")
                try b.commit([.entry(b.entry("first"))])
                try b.commit([.entry(b.entry("second")), .entry(b.entry("third"))])
                var bytes = try b.bytes()
                let commit = bytes.count - 28
                for i in 0..<8 { bytes[commit + i] ^= 0x5a }
                return try b.vector("recovered", comment: "the last commit's header overwritten beyond one-bit repair: read as a commit of each epoch held, its MAC verifies, so its header is rebuilt and its records stay committed (commit recovery)", body: bytes,
                                    issues: [("frame_repaired", UInt64(commit))])
            },
            {
                let b = try VectorBuilder("recovered-torn-tail-not-a-commit")
                try b.commit([.entry(b.entry("committed"))])
                let end = UInt64(try b.bytes().count)
                try b.commit([.entry(b.entry("written, not committed"))], expectReleased: false)
                var bytes = try b.bytes()
                for i in (bytes.count - 16)..<bytes.count { bytes[i] = 0 }
                for i in (bytes.count - 28)..<(bytes.count - 16) { bytes[i] ^= 0xff }
                return try b.vector("recovered", comment: "the last 28 bytes do not parse and do not carry a valid MAC: a torn write, not a damaged commit; its records are not released", body: bytes,
                                    issues: [("torn_tail", end)])
            },
            {
                let b = try VectorBuilder("recovered-commit-header-flip")
                try b.commit([.entry(b.entry("first"))])
                try b.commit([.entry(b.entry("second"))])
                var bytes = try b.bytes()
                let commit = bytes.count - 28
                Edit.flipBit(&bytes, byte: commit + 4, bit: 2)
                return try b.vector("recovered", comment: "a flipped bit in the last commit's length field is corrected, so nothing committed is lost", body: bytes, issues: [("frame_repaired", UInt64(commit))])
            },
            {
                let b = try VectorBuilder("recovered-unknown-critical-kind-in-tail")
                try b.commit([.entry(b.entry("committed"))])
                let end = UInt64(try b.bytes().count)
                let frame = FrameHeader(kind: RecordKind(rawValue: 0x3f), flags: 0, epoch: 1, bodyLength: 16).encoded() + [UInt8](repeating: 7, count: 16)
                return try b.vector("recovered", comment: "an unknown critical kind after the last commit is part of the torn tail, not an error", body: try b.bytes() + frame, issues: [("torn_tail", end)])
            },
        ]
        for (field, byte, bit) in [("kind", 0, 4), ("flags", 1, 1), ("epoch", 2, 0), ("length", 5, 3), ("check", 10, 7)] {
            list.append {
                let b = try VectorBuilder("recovered-frame-header-flip-\(field)")
                let idx = try b.commit([.entry(b.entry("header hit")), .entry(b.entry("neighbour"))])
                var bytes = try b.bytes()
                let offset = Int(b.frame(idx[0]!).location.offset)
                Edit.flipBit(&bytes, byte: offset + byte, bit: bit)
                return try b.vector("recovered", comment: "one flipped bit in a frame header's \(field) is corrected (the corrected frame is confirmed by the next header)", body: bytes, issues: [("frame_repaired", UInt64(offset))])
            }
        }
        return list
    }

    // MARK: - Damaged

    static var damaged: [Make] {
        var list: [Make] = []
        for (region, pick) in [("nonce", 12 + 3), ("ciphertext", 12 + 24 + 5), ("tag", -3)] as [(String, Int)] {
            list.append {
                let b = try VectorBuilder("damaged-flip-\(region)")
                let idx = try b.commit([.entry(b.entry("before")), .entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let f = b.frame(idx[1]!)
                let at = pick >= 0 ? Int(f.location.offset) + pick : Int(f.end) + pick
                Edit.flipBit(&bytes, byte: at, bit: 5)
                b.lose(frame: idx[1]!)
                let commit = b.frame(idx[2]! + 1).location.offset
                var issues = [("authentication_failed", f.location.offset)]
                if region == "tag" { issues.append(("commit_mismatch", commit)) }
                return try b.vector("damaged", comment: "a flipped bit in a record's \(region) loses that record only\(region == "tag" ? "; the tag is in the commit chain, so the commit does not verify either" : "")", body: bytes, issues: issues)
            }
        }
        list += [
            {
                let b = try VectorBuilder("damaged-frame-header-overwritten")
                let idx = try b.commit([.entry(b.entry("before")), .entry(b.entry("hit")), .entry(b.entry("after"))])
                try b.commit([.entry(b.entry("next commit"))])
                var bytes = try b.bytes()
                let f = b.frame(idx[1]!)
                for i in 3..<8 { bytes[Int(f.location.offset) + i] ^= 0xa5 }
                b.lose(frame: idx[1]!)
                return try b.vector("damaged", comment: "five bytes of a header overwritten: the reader resynchronises at the next frame; only that record is lost", body: bytes,
                                    issues: [("frame_damaged", f.location.offset), ("commit_mismatch", b.frame(idx[2]! + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-length-past-end-of-file")
                let idx = try b.commit([.entry(b.entry("before")), .entry(b.entry("hit")), .entry(b.entry("after"))])
                try b.commit([.entry(b.entry("next commit"))])
                var bytes = try b.bytes()
                let at = Int(b.frame(idx[1]!).location.offset)
                Edit.setUInt32(&bytes, at: at + 4, UInt32(bytes.count))
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[1]!)
                return try b.vector("damaged", comment: "a length (check recomputed) that runs past the end of the file, with committed frames after it: not a torn tail — the scanner resynchronises and only that record is lost", body: bytes,
                                    issues: [("frame_damaged", UInt64(at)), ("commit_mismatch", b.frame(idx[2]! + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-two-headers-intact-between")
                let idx = try b.commit((0..<6).map { i in .entry(b.entry("m-\(i)")) })
                var bytes = try b.bytes()
                let third = b.frame(idx[2]!), fifth = b.frame(idx[4]!)
                bytes[Int(third.location.offset) + 1] ^= 0xff
                bytes[Int(fifth.location.offset) + 1] ^= 0xff
                b.lose(frame: idx[2]!)
                b.lose(frame: idx[4]!)
                return try b.vector("damaged", comment: "two damaged headers with an intact frame between them: the checked frame that fits between the damage and the next confirmed frame is kept", body: bytes,
                                    issues: [("frame_damaged", third.location.offset), ("frame_damaged", fifth.location.offset), ("commit_mismatch", b.frame(idx[5]! + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-length-over-limit")
                let idx = try b.commit([.entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let at = Int(b.frame(idx[0]!).location.offset)
                Edit.setUInt32(&bytes, at: at + 4, UInt32(Limits.maxFrameBodyByteCount + 1))
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[0]!)
                return try b.vector("damaged", comment: "a body length over 16 MiB with a valid check is implausible: skipped as damage", body: bytes,
                                    issues: [("frame_damaged", UInt64(at)), ("commit_mismatch", b.frame(idx[1]! + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-length-under-minimum")
                let idx = try b.commit([.entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let at = Int(b.frame(idx[0]!).location.offset)
                Edit.setUInt32(&bytes, at: at + 4, 39)
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[0]!)
                return try b.vector("damaged", comment: "a sealed frame shorter than nonce plus tag (39 bytes) is implausible", body: bytes,
                                    issues: [("frame_damaged", UInt64(at)), ("commit_mismatch", b.frame(idx[1]! + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-reserved-flag")
                let idx = try b.commit([.entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let at = Int(b.frame(idx[0]!).location.offset)
                bytes[at + 1] |= 0x40
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[0]!)
                return try b.vector("damaged", comment: "a reserved flag bit set, check recomputed: implausible, skipped as damage", body: bytes,
                                    issues: [("frame_damaged", UInt64(at)), ("commit_mismatch", b.frame(idx[1]! + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-compressed-without-sealed")
                let idx = try b.commit([.entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let at = Int(b.frame(idx[0]!).location.offset)
                bytes[at + 1] = FrameHeader.compressedFlag
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[0]!)
                return try b.vector("damaged", comment: "the compressed flag without the sealed flag is implausible", body: bytes,
                                    issues: [("frame_damaged", UInt64(at)), ("commit_mismatch", b.frame(idx[1]! + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-entry-not-sealed")
                let idx = try b.commit([.entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let at = Int(b.frame(idx[0]!).location.offset)
                bytes[at + 1] = 0
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[0]!)
                return try b.vector("damaged", comment: "an entry revision frame without the sealed flag breaks its kind's rules", body: bytes,
                                    issues: [("malformed_frame", UInt64(at)), ("commit_mismatch", b.frame(idx[1]! + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-commit-kind-wrong-length")
                try b.commit([.entry(b.entry("first"))])
                let idx = try b.commit([.entry(b.entry("second"))])
                var bytes = try b.bytes()
                let commitAt = Int(b.frame(idx[0]! + 1).location.offset)
                let bogus = FrameHeader(kind: .commit, flags: 0, epoch: 1, bodyLength: 20).encoded() + b.random.bytes(20)
                bytes.insert(contentsOf: bogus, at: commitAt)
                return try b.vector("damaged", comment: "a commit-kind frame whose body is not 16 bytes is malformed and is not a commit boundary", body: bytes,
                                    issues: [("malformed_frame", UInt64(commitAt)), ("commit_mismatch", UInt64(commitAt + bogus.count))])
            },
            {
                let b = try VectorBuilder("damaged-record-from-other-vault")
                let other = try VectorBuilder("damaged-record-from-other-vault/other")
                let foreign = try SealedFrame.seal(kind: .entryRevision, payload: other.entry("foreign").encoded(), key: other.keys.writeKey!, vaultID: other.vaultID, compress: true, random: other.random)
                let idx = try b.commit([.entry(b.entry("mine")), .raw(foreign, release: nil), .entry(b.entry("mine too"))])
                return try b.vector("damaged", comment: "a sealed record copied from another vault does not authenticate here", issues: [("authentication_failed", b.frame(idx[1]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-record-bound-to-other-vault-id")
                let otherID = VaultID(using: b.random)
                let moved = try SealedFrame.seal(kind: .entryRevision, payload: b.entry("sealed with this vault's key, another vault id").encoded(), key: b.keys.writeKey!, vaultID: otherID, compress: true, random: b.random)
                let idx = try b.commit([.raw(moved, release: nil), .entry(b.entry("after"))])
                return try b.vector("damaged", comment: "the associated data binds the vault id: the right key under another vault id fails", issues: [("authentication_failed", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-records-reordered")
                let idx = try b.commit([.entry(b.entry("one")), .entry(b.entry("two")), .entry(b.entry("three"))])
                var bytes = try b.bytes()
                let f1 = b.frame(idx[0]!), f2 = b.frame(idx[1]!)
                let one = Array(bytes[Int(f1.location.offset)..<Int(f1.end)]), two = Array(bytes[Int(f2.location.offset)..<Int(f2.end)])
                bytes.replaceSubrange(Int(f1.location.offset)..<Int(f2.end), with: two + one)
                b.released.swapAt(b.released.count - 3, b.released.count - 2)
                return try b.vector("damaged", comment: "two committed records swapped: both still authenticate, the commit does not", body: bytes,
                                    issues: [("commit_mismatch", b.frame(idx[2]! + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-commits-reordered")
                let a = try b.commit([.entry(b.entry("A"))])
                let c = try b.commit([.entry(b.entry("B"))])
                let d = try b.commit([.entry(b.entry("C"))])
                var bytes = try b.bytes()
                let aStart = Int(b.frame(a[0]!).location.offset), aEnd = Int(b.frame(a[0]! + 1).end)
                let cEnd = Int(b.frame(c[0]! + 1).end)
                let first = Array(bytes[aStart..<aEnd]), second = Array(bytes[aEnd..<cEnd])
                bytes.replaceSubrange(aStart..<cEnd, with: second + first)
                let ra = b.released.count - 3
                b.released.swapAt(ra, ra + 1)
                let secondCommit = UInt64(aStart + second.count - 28)
                return try b.vector("damaged", comment: "two whole commits swapped: each breaks the chain, and so does the commit after them", body: bytes,
                                    issues: [("commit_mismatch", secondCommit), ("commit_mismatch", UInt64(cEnd - 28)), ("commit_mismatch", b.frame(d[0]! + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-record-duplicated")
                let idx = try b.commit([.entry(b.entry("one")), .entry(b.entry("twice"))])
                var bytes = try b.bytes()
                let f = b.frame(idx[1]!)
                let copy = Array(bytes[Int(f.location.offset)..<Int(f.end)])
                bytes.insert(contentsOf: copy, at: Int(f.end))
                b.released.append(b.released.last!)
                return try b.vector("damaged", comment: "a committed record duplicated inside its commit: detected by the commit", body: bytes,
                                    issues: [("commit_mismatch", f.end + UInt64(copy.count))])
            },
            {
                let b = try VectorBuilder("damaged-commit-replayed")
                try b.commit([.entry(b.entry("one"))])
                let idx = try b.commit([.entry(b.entry("replayed"))])
                var bytes = try b.bytes()
                let start = Int(b.frame(idx[0]!).location.offset)
                let copy = Array(bytes[start...])
                bytes += copy
                b.released.append(b.released.last!)
                return try b.vector("damaged", comment: "the last commit appended again (a replay): the copy does not chain", body: bytes,
                                    issues: [("commit_mismatch", UInt64(bytes.count - 28))])
            },
            {
                let b = try VectorBuilder("damaged-record-deleted")
                let idx = try b.commit([.entry(b.entry("kept")), .entry(b.entry("deleted")), .entry(b.entry("kept too"))])
                var bytes = try b.bytes()
                let f = b.frame(idx[1]!)
                bytes.removeSubrange(Int(f.location.offset)..<Int(f.end))
                b.lose(frame: idx[1]!)
                return try b.vector("damaged", comment: "a committed record cut out: the commit no longer verifies", body: bytes,
                                    issues: [("commit_mismatch", b.frame(idx[2]! + 1).location.offset - UInt64(f.end - f.location.offset))])
            },
            {
                let b = try VectorBuilder("damaged-commit-deleted")
                try b.commit([.entry(b.entry("one"))])
                let mid = try b.commit([.entry(b.entry("deleted with its commit"))])
                let last = try b.commit([.entry(b.entry("three"))])
                var bytes = try b.bytes()
                let start = Int(b.frame(mid[0]!).location.offset), end = Int(b.frame(mid[0]! + 1).end)
                bytes.removeSubrange(start..<end)
                b.lose(frame: mid[0]!)
                return try b.vector("damaged", comment: "a whole commit cut out: the next commit does not chain", body: bytes,
                                    issues: [("commit_mismatch", b.frame(last[0]! + 1).location.offset - UInt64(end - start))])
            },
            {
                let b = try VectorBuilder("damaged-spliced-from-other-vault")
                try b.commit([.entry(b.entry("mine"))])
                let other = try VectorBuilder("damaged-spliced-from-other-vault/other")
                let o = try other.commit([.entry(other.entry("theirs"))])
                let theirs = try other.bytes()
                let tail = Array(theirs[Int(other.frame(o[0]!).location.offset)...])
                var bytes = try b.bytes()
                let at = UInt64(bytes.count)
                bytes += tail
                return try b.vector("damaged", comment: "a commit from another vault spliced on the end", body: bytes,
                                    issues: [("authentication_failed", at), ("commit_mismatch", UInt64(bytes.count - 28))])
            },
            {
                let b = try VectorBuilder("damaged-commit-mac-flipped")
                let one = try b.commit([.entry(b.entry("one"))])
                try b.commit([.entry(b.entry("two"))])
                var bytes = try b.bytes()
                let commit = b.frame(one[0]! + 1)
                Edit.flipBit(&bytes, byte: Int(commit.location.offset) + 12 + 7, bit: 1)
                return try b.vector("damaged", comment: "a flipped bit in a commit's MAC: that commit does not verify; its records and the next commit are unaffected", body: bytes,
                                    issues: [("commit_mismatch", commit.location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-commit-unverifiable-epoch")
                try b.commit([.entry(b.entry("one"))])
                let idx = try b.commit([.entry(b.entry("under a commit of epoch 9"))])
                var bytes = try b.bytes()
                let at = Int(b.frame(idx[0]! + 1).location.offset)
                bytes[at + 2] = 9
                Edit.fixCheck(&bytes, frameAt: at)
                return try b.vector("damaged", comment: "a commit under epoch 9, for which no keyring exists, cannot be checked; its epoch-1 records are still current and released", body: bytes,
                                    issues: [("commit_unverifiable", UInt64(at))])
            },
        ]
        list += compression + padding + records + epochs
        return list
    }

    static var compression: [Make] {
        [
            {
                let b = try VectorBuilder("damaged-zstd-declared-over-limit")
                let huge = Compression.compress([UInt8](repeating: 0x41, count: Limits.maxRecordByteCount + 1))
                var plain = huge
                Padding.pad(&plain)
                let frame = Edit.sealedFrame(kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: plain, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector("damaged", comment: "a zstd frame declaring 16 MiB + 1 bytes is refused before decompressing", issues: [("size_limit_exceeded", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-zstd-real-size-exceeds-declared")
                let payload = b.entry(String(repeating: english, count: 10)).encoded()
                var z = Compression.compress(payload)
                // Frame header: magic (4), descriptor (1); a single-segment frame
                // then has its content size field; lower it by one.
                let descriptor = z[4]
                precondition(descriptor & 0x20 != 0 && descriptor >> 6 == 1, "expected a single-segment frame with a 2-byte size")
                let declared = Int(z[5]) | Int(z[6]) << 8
                z[5] = UInt8((declared - 1) & 0xff)
                z[6] = UInt8((declared - 1) >> 8)
                Padding.pad(&z)
                let frame = Edit.sealedFrame(kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector("damaged", comment: "a zstd frame whose content is one byte longer than it declares", issues: [("decompressed_size_mismatch", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-zstd-trailing-bytes")
                var z = Compression.compress(b.entry(english).encoded()) + [1, 2, 3]
                Padding.pad(&z)
                let frame = Edit.sealedFrame(kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil)])
                return try b.vector("damaged", comment: "bytes after the zstd frame inside the payload", issues: [("decompression_failed", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-zstd-not-a-frame")
                var z = b.random.bytes(200)
                Padding.pad(&z)
                let frame = Edit.sealedFrame(kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil)])
                return try b.vector("damaged", comment: "the compressed flag on a payload that is not a zstd frame", issues: [("decompression_failed", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-zstd-size-not-declared")
                let payload = b.entry("no declared size").encoded()
                // A zstd frame built by hand: magic, descriptor 0 (no size, not
                // single segment), window descriptor 0, one raw last block.
                var z: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00]
                let blockHeader = UInt32(payload.count) << 3 | 1
                z += [UInt8(blockHeader & 0xff), UInt8((blockHeader >> 8) & 0xff), UInt8(blockHeader >> 16)]
                z += payload
                Padding.pad(&z)
                let frame = Edit.sealedFrame(kind: .entryRevision, flags: 0x03, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: z, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil)])
                return try b.vector("damaged", comment: "a valid zstd frame that does not declare its decompressed size is refused", issues: [("decompression_failed", b.frame(idx[0]!).location.offset)])
            },
        ]
    }

    static var padding: [Make] {
        let cases: [(String, String, ([UInt8]) -> [UInt8])] = [
            ("no-marker", "a plaintext with no 0x80 marker", { p in p + [UInt8](repeating: 0, count: Padding.paddedCount(forPayload: p.count) - p.count) }),
            ("nonzero-after-marker", "a non-zero byte after the marker", { p in
                var x = p; Padding.pad(&x); x[x.count - 1] = 1; return x }),
            ("wrong-length", "marker present but the total is not Padmé(n + 1)", { p in p + [0x80] + [UInt8](repeating: 0, count: Padding.paddedCount(forPayload: p.count) - p.count + 3) }),
        ]
        return cases.map { (name, comment, pad) in
            {
                let b = try VectorBuilder("damaged-padding-\(name)")
                let plain = pad(b.entry(english + " padding").encoded())
                let frame = Edit.sealedFrame(kind: .entryRevision, flags: 0x01, key: b.keys.writeKey!, vaultID: b.vaultID, plaintext: plain, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector("damaged", comment: comment, issues: [("bad_padding", b.frame(idx[0]!).location.offset)])
            }
        }
    }

    static var records: [Make] {
        let cases: [(String, String, (VectorBuilder) -> [UInt8])] = [
            ("keys-unsorted", "map keys out of canonical order", { b in
                // {"revision": …, "entry": …}: "revision" sorts after "entry".
                [0xa2, 0x68] + Array("revision".utf8) + [0x50] + b.random.bytes(16) + [0x65] + Array("entry".utf8) + [0x50] + b.random.bytes(16) }),
            ("int-not-shortest", "an integer not in its shortest form", { b in
                [0xa3, 0x65] + Array("clock".utf8) + [0x18, 0x05]
                    + [0x65] + Array("entry".utf8) + [0x50] + b.random.bytes(16) + [0x68] + Array("revision".utf8) + [0x50] + b.random.bytes(16) }),
            ("missing-entry-id", "a revision without its entry id", { b in
                CBOREncoder.encode(.map(CBORMap(text: [("revision", .bytes(b.random.bytes(16)))]))) }),
            ("wrong-type", "a text field holding an integer", { b in
                CBOREncoder.encode(.map(CBORMap(text: [("entry", .bytes(b.random.bytes(16))), ("revision", .bytes(b.random.bytes(16))),
                                                       ("body", .map(CBORMap(text: [("text", .unsigned(5))])))]))) }),
            ("not-cbor", "a payload that is not CBOR at all", { b in [0xff] + b.random.bytes(40) }),
            ("too-deep", "an item at depth 17 (one past the limit)", { b in
                var v = CBOR.null
                for _ in 0..<16 { v = .array([v]) }
                return CBOREncoder.encode(.map(CBORMap(text: [("entry", .bytes(b.random.bytes(16))), ("revision", .bytes(b.random.bytes(16))), ("deep", v)]))) }),
            ("float-half", "a 2-byte float (floats must be 8 bytes)", { b in
                [0xa3, 0x61, 0x7a, 0xf9, 0x3c, 0x00]
                    + CBOREncoder.encode(.map(CBORMap(text: [("entry", .bytes(b.random.bytes(16))), ("revision", .bytes(b.random.bytes(16)))]))).dropFirst() }),
        ]
        return cases.map { (name, comment, make) in
            {
                let b = try VectorBuilder("damaged-malformed-\(name)")
                let idx = try b.commit([.sealed(.entryRevision, make(b), compress: false), .entry(b.entry("after"))])
                b.lose(frame: idx[0]!)
                return try b.vector("damaged", comment: "a record body that is not valid: \(comment)", issues: [("malformed_record", b.frame(idx[0]!).location.offset)])
            }
        }
    }

    static var epochs: [Make] {
        [
            {
                let b = try VectorBuilder("damaged-unknown-epoch")
                let stranger = EpochKey(epoch: 7, key: try SymmetricKey(bytes: b.random.bytes(32)))
                let frame = try SealedFrame.seal(kind: .entryRevision, payload: b.entry("epoch 7").encoded(), key: stranger, vaultID: b.vaultID, compress: true, random: b.random)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("epoch 1"))])
                return try b.vector("damaged", comment: "a record sealed under epoch 7, which no keyring defines", issues: [("unknown_epoch", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-stale-epoch-commit")
                let old = b.keys.writeKey!
                try b.commit([.entry(b.entry("epoch 1"))])
                try b.rotate(to: 2)
                try b.commit([.entry(b.entry("epoch 2"))])
                b.writeWith(old)
                let idx = try b.commit([.entry(b.entry("written with the old key after the rotation"))], expectReleased: false)
                return try b.vector("damaged", comment: "after epoch 2 began, a valid commit under epoch 1 (what a removed device could still make) is distrusted with its records",
                                    issues: [("stale_epoch", b.frame(idx[0]!).location.offset), ("stale_epoch", b.frame(idx[0]! + 1).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-stale-epoch-record")
                let old = b.keys.writeKey!
                try b.rotate(to: 2)
                let idx = try b.commit([.entry(b.entry("epoch 2"))])
                var bytes = try b.bytes()
                let frame = try SealedFrame.seal(kind: .entryRevision, payload: b.entry("old key, forged commit").encoded(), key: old, vaultID: b.vaultID, compress: true, random: b.random)
                let at = UInt64(bytes.count)
                bytes += frame + CommitChain.commitHeader(epoch: 1).encoded() + b.random.bytes(16)
                _ = idx
                return try b.vector("damaged", comment: "an epoch-1 record after epoch 2 began, under a commit that does not verify, is not released", body: bytes,
                                    issues: [("stale_epoch", at), ("commit_mismatch", UInt64(bytes.count - 28))])
            },
        ]
    }

    // MARK: - Attachments

    static func chunkVector(_ name: String, comment: String, issue: String, content: [UInt8]? = nil,
                            plan: @escaping (_ stream: StreamID, _ content: [UInt8]) -> [(UInt32, Bool, Range<Int>)],
                            manifestSize: ((Int) -> UInt64)? = nil, blobID: ((BlobID) -> BlobID)? = nil) -> Make {
        {
            let b = try VectorBuilder("damaged-\(name)")
            let data = content ?? b.random.bytes(150_000)
            let stream = StreamID(using: b.random)
            var items: [Item] = []
            for (index, isFinal, range) in plan(stream, data) {
                items.append(.raw(Edit.chunkFrame(stream: stream, index: index, isFinal: isFinal, content: Array(data[range]), key: b.keys.writeKey!, vaultID: b.vaultID, random: b.random), release: nil))
            }
            var id = BlobID(unchecked: BLAKE2b.mac(data, key: b.blobKey, byteCount: 32))
            if let blobID { id = blobID(id) }
            let manifest = BlobManifest(blob: id, stream: stream, byteCount: manifestSize?(data.count) ?? UInt64(data.count), mediaType: "image/jpeg")
            items.append(.sealed(.blobManifest, manifest.encoded(), compress: false))
            let idx = try b.commit(items)
            let manifestFrame = idx.last!!
            b.loseBlob(manifest: manifestFrame)
            return try b.vector("damaged", comment: comment, issues: [(issue, b.frame(manifestFrame).location.offset)])
        }
    }

    static var chunks: [Make] {
        let c = Limits.chunkByteCount
        return [
            chunkVector("chunk-missing", comment: "chunk 1 of 3 is missing", issue: "chunk_missing") { _, d in [(0, false, 0..<c), (2, true, 2 * c..<d.count)] },
            chunkVector("chunk-duplicated", comment: "chunk 1 appears twice", issue: "chunk_duplicate") { _, d in [(0, false, 0..<c), (1, false, c..<2 * c), (1, false, c..<2 * c), (2, true, 2 * c..<d.count)] },
            chunkVector("chunk-reordered", comment: "chunks 0 and 1 in the wrong order", issue: "chunk_out_of_order") { _, d in [(1, false, c..<2 * c), (0, false, 0..<c), (2, true, 2 * c..<d.count)] },
            chunkVector("chunk-final-missing", comment: "no chunk carries the final flag (a truncated stream)", issue: "chunk_final_missing", content: [UInt8](repeating: 8, count: 3 * c)) { _, d in [(0, false, 0..<c), (1, false, c..<2 * c), (2, false, 2 * c..<3 * c)] },
            chunkVector("chunk-final-twice", comment: "chunk 0 and chunk 2 both carry the final flag", issue: "chunk_final_repeated", content: [UInt8](repeating: 9, count: 2 * c + 10)) { _, d in [(0, true, 0..<c), (1, false, c..<2 * c), (2, true, 2 * c..<d.count)] },
            chunkVector("chunk-empty-final", comment: "exactly 65536 bytes followed by an empty final chunk: not the canonical encoding (the full chunk must be final)", issue: "chunk_noncanonical", content: [UInt8](repeating: 3, count: c)) { _, _ in [(0, false, 0..<c), (1, true, c..<c)] },
            chunkVector("chunk-short-nonfinal", comment: "a non-final chunk of 1000 bytes", issue: "chunk_noncanonical", content: [UInt8](repeating: 4, count: 70_000)) { _, d in [(0, false, 0..<1000), (1, true, 1000..<d.count)] },
            chunkVector("blob-size-mismatch", comment: "the manifest says 1000 bytes more than the chunks hold", issue: "blob_size_mismatch", content: [UInt8](repeating: 5, count: 2000), plan: { _, d in [(0, true, 0..<d.count)] }, manifestSize: { UInt64($0 + 1000) }),
            chunkVector("blob-stream-truncated", comment: "the manifest says 150000 bytes but the stream ends, final, after 2 chunks", issue: "blob_size_mismatch", plan: { _, _ in [(0, false, 0..<c), (1, true, c..<2 * c)] }),
            chunkVector("blob-id-mismatch", comment: "the chunks do not hash to the manifest's blob id", issue: "blob_id_mismatch", content: [UInt8](repeating: 6, count: 3000), plan: { _, d in [(0, true, 0..<d.count)] }, blobID: { id in var x = id.bytes; x[0] ^= 1; return BlobID(unchecked: x) }),
            chunkVector("chunk-final-oversized", comment: "a final chunk holding 65,537 bytes under a manifest of 65,536: the frame length passes (padding hides one byte), decryption finds one byte too many", issue: "chunk_noncanonical",
                        content: [UInt8](repeating: 2, count: c + 1), plan: { _, d in [(0, true, 0..<d.count)] }, manifestSize: { _ in UInt64(c) }),
            {
                let b = try VectorBuilder("damaged-two-manifests-one-stream")
                let data = b.random.bytes(100_000)
                let idx = try b.commit([.blob(data, mediaType: "image/png")])
                let m = try BlobManifest(decoding: b.released.last!.payload)
                var wrong = m
                wrong.byteCount += 1
                let second = try b.commit([.sealed(.blobManifest, wrong.encoded(), compress: false)])
                _ = idx
                return try b.vector("damaged", comment: "a second manifest names the same stream with a wrong size: every released manifest is checked, and only the second is reported",
                                    issues: [("blob_size_mismatch", b.frame(second[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-stale-chunk-ignored")
                let data = b.random.bytes(100_000)
                let old = b.keys.writeKey!
                let idx = try b.commit([.blob(data, mediaType: "image/png")])
                let stream = try BlobManifest(decoding: b.released.last!.payload).stream
                try b.rotate(to: 2)
                b.writeWith(old)
                // A removed device, which holds epoch 1, adds a duplicate chunk 0.
                let forged = Edit.chunkFrame(stream: stream, index: 0, isFinal: false, content: b.random.bytes(c), key: old, vaultID: b.vaultID, random: b.random)
                let stale = try b.commit([.raw(forged, release: nil)])
                _ = idx
                return try b.vector("damaged", comment: "a stale chunk (an epoch-1 chunk in a stale commit after epoch 2 began) neither joins nor breaks the stream: the attachment still reads whole",
                                    issues: [("stale_epoch", b.frame(stale[0]! + 1).location.offset)])
            },
            chunkVector("blob-without-chunks", comment: "a manifest whose stream has no chunks at all", issue: "chunk_missing", content: [UInt8](repeating: 7, count: 10)) { _, _ in [] },
            {
                let b = try VectorBuilder("damaged-chunk-ciphertext-flip")
                let idx = try b.commit([.blob(b.random.bytes(150_000), mediaType: "video/mp4"), .entry(b.entry("with a video"))])
                var bytes = try b.bytes()
                let manifest = idx[0]!
                let chunk1 = b.frame(manifest - 2)
                Edit.flipBit(&bytes, byte: Int(chunk1.location.offset) + 200, bit: 0)
                b.loseBlob(manifest: manifest)
                return try b.vector("damaged", comment: "a flipped bit in chunk 1 of 3: that chunk (so the attachment) fails; other records are fine; chunk 0 and 2 still read alone", body: bytes,
                                    issues: [("authentication_failed", chunk1.location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-chunk-compressed-flag")
                let data = b.random.bytes(1000)
                let stream = StreamID(using: b.random)
                var frame = Edit.chunkFrame(stream: stream, index: 0, isFinal: true, content: data, key: b.keys.writeKey!, vaultID: b.vaultID, random: b.random)
                frame[1] = 0x03
                Edit.fixCheck(&frame, frameAt: 0)
                let manifest = BlobManifest(blob: BlobID(unchecked: BLAKE2b.mac(data, key: b.blobKey, byteCount: 32)), stream: stream, byteCount: 1000)
                let idx = try b.commit([.raw(frame, release: nil), .sealed(.blobManifest, manifest.encoded(), compress: false)])
                b.loseBlob(manifest: idx[1]!)
                return try b.vector("damaged", comment: "attachment chunks are never compressed: a chunk frame with the compressed flag is malformed, so its stream lacks chunk 0",
                                    issues: [("malformed_frame", b.frame(idx[0]!).location.offset), ("chunk_missing", b.frame(idx[1]!).location.offset)])
            },
        ]
    }

    // MARK: - Keyrings

    static var keyrings: [Make] {
        [
            {
                let b = try VectorBuilder("damaged-keyring-escrow-slot-in-escrow-free")
                let newKey = EpochKey(epoch: 2, key: try SymmetricKey(bytes: b.random.bytes(32)))
                let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let body = KeyringBuilder.body(
                    epochKey: newKey, vaultID: b.vaultID, parents: [b.keyringIDs[1]!], isEscrowFree: true,
                    slots: [try SlotCrypto.recoverySlot(for: newKey, recovery: b.recovery, vaultID: b.vaultID, random: b.random),
                            try SlotCrypto.escrowSlot(for: newKey, escrowPublicKey: escrow.publicKey, vaultID: b.vaultID, random: b.random)],
                    content: KeyringContent(members: [KeyringMember(role: "recovery", publicKey: b.signer.publicKey, name: "Recovery key", added: b.now)],
                                            history: [HistoricKey(epoch: 1, key: b.keys.writeKey!.key)], blobKey: b.blobKey, created: b.now, reason: "escrow-free"),
                    signer: b.signer, random: b.random)
                let idx = try b.commit([.plaintext(.keyring, epoch: 2, body), .entry(b.entry("epoch 1 still"))])
                return try b.vector("damaged", comment: "a keyring that declares the vault escrow-free but holds an escrow slot is rejected", issues: [("escrow_forbidden", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-escrow-forbidden-unreached")
                let newKey = EpochKey(epoch: 2, key: try SymmetricKey(bytes: b.random.bytes(32)))
                let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let body = KeyringBuilder.body(
                    epochKey: newKey, vaultID: b.vaultID, parents: [b.keyringIDs[1]!], isEscrowFree: true,
                    slots: [try SlotCrypto.escrowSlot(for: newKey, escrowPublicKey: escrow.publicKey, vaultID: b.vaultID, random: b.random)],
                    content: KeyringContent(members: [KeyringMember(role: "recovery", publicKey: b.signer.publicKey, name: "Recovery key", added: b.now)],
                                            history: [HistoricKey(epoch: 1, key: b.keys.writeKey!.key)], blobKey: b.blobKey, created: b.now, reason: "escrow-free"),
                    signer: b.signer, random: b.random)
                let idx = try b.commit([.plaintext(.keyring, epoch: 2, body)])
                return try b.vector("damaged", comment: "an escrow-free keyring with an escrow slot is rejected from its public part alone, even when no credential reaches it",
                                    issues: [("escrow_forbidden", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-escrow-free-dropped", escrowFree: true)
                let idx = try b.rotate(to: 2, escrowFree: false, trust: false)
                try b.commit([.entry(b.entry("epoch 1 still"))])
                return try b.vector("damaged", comment: "escrow-free is for good: a successor of an escrow-free keyring that drops the flag is rejected (format.md §8.4 rule 5)",
                                    issues: [("escrow_forbidden", b.frame(idx).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-member-not-a-point")
                let e2 = EpochKey(epoch: 2, key: try SymmetricKey(bytes: b.random.bytes(32)))
                var notAPoint = [UInt8](repeating: 0xff, count: 32)
                notAPoint[31] = 0x7f
                let body = b.keyring(
                    e2, parents: [b.keyringIDs[1]!], slots: [try SlotCrypto.recoverySlot(for: e2, recovery: b.recovery, vaultID: b.vaultID, random: b.random)],
                    members: [KeyringMember(role: "recovery", publicKey: b.signer.publicKey, name: "Recovery key", added: b.now),
                              KeyringMember(role: "device", publicKey: notAPoint, name: "Ghost", added: b.now)],
                    history: [HistoricKey(epoch: 1, key: b.keys.writeKey!.key)])
                let idx = try b.commit([.plaintext(.keyring, epoch: 2, body), .entry(b.entry("epoch 1 still"))])
                return try b.vector("damaged", comment: "a keyring naming a member whose key is not a valid Ed25519 point (nothing could be wrapped to it) is malformed",
                                    issues: [("malformed_keyring", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-slot-mismatch")
                let e2 = EpochKey(epoch: 2, key: try SymmetricKey(bytes: b.random.bytes(32)))
                let other = EpochKey(epoch: 2, key: try SymmetricKey(bytes: b.random.bytes(32)))
                let body = b.keyring(
                    e2, parents: [b.keyringIDs[1]!], slots: [try SlotCrypto.recoverySlot(for: other, recovery: b.recovery, vaultID: b.vaultID, random: b.random)],
                    members: [KeyringMember(role: "recovery", publicKey: b.signer.publicKey, name: "Recovery key", added: b.now)],
                    history: [HistoricKey(epoch: 1, key: b.keys.writeKey!.key)])
                let idx = try b.commit([.plaintext(.keyring, epoch: 2, body), .entry(b.entry("epoch 1 still"))])
                return try b.vector("damaged", comment: "a keyring whose recovery slot opens to a key that does not open its sealed part is malformed",
                                    issues: [("malformed_keyring", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-blob-key-changed")
                let e2 = EpochKey(epoch: 2, key: try SymmetricKey(bytes: b.random.bytes(32)))
                let content = KeyringContent(members: [KeyringMember(role: "recovery", publicKey: b.signer.publicKey, name: "Recovery key", added: b.now)],
                                             history: [HistoricKey(epoch: 1, key: b.keys.writeKey!.key)], blobKey: try SymmetricKey(bytes: b.random.bytes(32)), created: b.now, reason: "rotate")
                let body = KeyringBuilder.body(
                    epochKey: e2, vaultID: b.vaultID, parents: [b.keyringIDs[1]!], isEscrowFree: false,
                    slots: [try SlotCrypto.recoverySlot(for: e2, recovery: b.recovery, vaultID: b.vaultID, random: b.random)],
                    content: content, signer: b.signer, random: b.random)
                let idx = try b.commit([.keyring(epoch: 2, body)])
                return try b.vector("damaged", comment: "a keyring whose blob key differs from its parents' is not trusted (the blob key is the vault's for life)",
                                    issues: [("keyring_unauthenticated", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-signed-by-outsider")
                let outsider = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let idx = try b.rotate(to: 2, signer: outsider, trust: false)
                try b.commit([.entry(b.entry("epoch 1 still"))])
                return try b.vector("damaged", comment: "a keyring signed by a key that is no member of its parent (someone who can write the file but holds no key) is not trusted",
                                    issues: [("keyring_unauthenticated", b.frame(idx).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-unknown-parent")
                let idx = try b.rotate(to: 2, parents: [KeyringID(using: b.random)], trust: false)
                return try b.vector("damaged", comment: "a keyring whose parent is not in the vault is not trusted", issues: [("keyring_unauthenticated", b.frame(idx).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-epoch-skips")
                let idx = try b.rotate(to: 3, parents: [b.keyringIDs[1]!], trust: false)
                return try b.vector("damaged", comment: "a keyring for epoch 3 whose parent is epoch 1 skips an epoch and is not trusted", issues: [("keyring_unauthenticated", b.frame(idx).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-bad-signature")
                let newKey = EpochKey(epoch: 2, key: try SymmetricKey(bytes: b.random.bytes(32)))
                let content = KeyringContent(members: [KeyringMember(role: "recovery", publicKey: b.signer.publicKey, name: "Recovery key", added: b.now)],
                                             history: [HistoricKey(epoch: 1, key: b.keys.writeKey!.key)], blobKey: b.blobKey, created: b.now, reason: "rotate")
                let pub = KeyringPublic(parents: [b.keyringIDs[1]!], isEscrowFree: false, slots: [try SlotCrypto.recoverySlot(for: newKey, recovery: b.recovery, vaultID: b.vaultID, random: b.random)])
                var sig = b.signer.sign(Array("not the keyring".utf8))
                sig[0] ^= 1
                let inner = KeyringInner(contentBytes: content.encoded(), signer: b.signer.publicKey, signature: sig)
                let sealed = KeyringRecord.seal(inner: inner, key: newKey, vaultID: b.vaultID, publicBytes: pub.encoded(), random: b.random)
                let body = KeyringRecord(epoch: 2, publicPart: pub, sealed: sealed).encodedBody()
                let idx = try b.commit([.plaintext(.keyring, epoch: 2, body)])
                return try b.vector("damaged", comment: "a keyring whose signature does not verify is not trusted", issues: [("keyring_unauthenticated", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-malformed")
                let idx = try b.commit([.plaintext(.keyring, epoch: 2, [0xa1, 0x66] + Array("public".utf8) + [0x40]), .entry(b.entry("fine"))])
                return try b.vector("damaged", comment: "a keyring body that is not a valid keyring (valid checksum) is reported and ignored", issues: [("malformed_keyring", b.frame(idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-checksum")
                try b.commit([.entry(b.entry("epoch 1"))])
                let k = try b.rotate(to: 2)
                let idx = try b.commit([.entry(b.entry("epoch 2, now unreadable"))])
                var bytes = try b.bytes()
                Edit.damageKeyring(&bytes, b, frame: k)
                b.lose(frame: idx[0]!)
                let copy = b.vault.structure.frames.first { $0.header.kind == .keyring && $0.trailer == b.frame(k).trailer && $0.location.index != k }!
                return try b.vector("damaged", comment: "both copies of the epoch-2 keyring damaged: their checksums fail, so epoch 2 cannot be unlocked; epoch-1 records still read", body: bytes,
                                    issues: [("malformed_keyring", b.frame(k).location.offset), ("malformed_keyring", copy.location.offset),
                                             ("unknown_epoch", b.frame(idx[0]!).location.offset), ("commit_unverifiable", b.frame(idx[0]! + 1).location.offset)])
            },
        ]
    }

    // MARK: - Removal and roots

    static let sam = [UInt8](repeating: 0x51, count: 32)      // a device that stays
    static let lost = [UInt8](repeating: 0x52, count: 32)     // a device that is removed

    /// A vault with devices `sam` and `lost`, then a keyring (epoch 2) that
    /// removes `lost`, wrapping to `sam` and the recovery key.
    static func removalVault(_ name: String, lostKeepsSlot: Bool = false) throws -> (VectorBuilder, removal: Int) {
        let b = try VectorBuilder(name, deviceSeed: sam, moreDeviceSeeds: [lost])
        try b.commit([.entry(b.entry("before the phone was lost"))])
        let samKey = try VectorBuilder.device(sam), lostKey = try VectorBuilder.device(lost)
        let e2 = EpochKey(epoch: 2, key: try SymmetricKey(bytes: b.random.bytes(32)))
        var slots = [try SlotCrypto.recoverySlot(for: e2, recovery: b.recovery, vaultID: b.vaultID, random: b.random),
                     try SlotCrypto.deviceSlot(for: e2, devicePublicKey: samKey.publicKey, vaultID: b.vaultID, random: b.random)]
        if lostKeepsSlot { slots.append(try SlotCrypto.deviceSlot(for: e2, devicePublicKey: lostKey.publicKey, vaultID: b.vaultID, random: b.random)) }
        let body = b.keyring(
            e2, parents: [b.keyringIDs[1]!], slots: slots,
            members: [KeyringMember(role: "recovery", publicKey: b.signer.publicKey, name: "Recovery key", added: b.now),
                      KeyringMember(role: "device", publicKey: samKey.publicKey, name: "Sam's phone", added: b.now)],
            removed: [KeyringMember(role: "device", publicKey: lostKey.publicKey, name: "Sam's laptop 1", added: b.now)],
            history: [HistoricKey(epoch: 1, key: b.keys.writeKey!.key)], reason: "remove")
        let index = try b.commit([.keyring(epoch: 2, body)])[0]!
        b.adopt(e2, frame: index, id: KeyringBuilder.id(ofBody: body))
        try b.commit([.entry(b.entry("after the removal"))])
        return (b, index)
    }

    static var removal: [Make] {
        [
            {
                let (b, _) = try removalVault("damaged-removed-device-signs-keyring")
                // The lost laptop, which holds epoch 1 and is a member of the
                // first keyring, makes a concurrent epoch 2 of its own and
                // wraps it to Sam's phone, hoping to be trusted again.
                let lostKey = try VectorBuilder.device(lost), samKey = try VectorBuilder.device(sam)
                let forged = EpochKey(epoch: 2, key: try SymmetricKey(bytes: b.random.bytes(32)))
                let body = b.keyring(
                    forged, parents: [b.keyringIDs[1]!],
                    slots: [try SlotCrypto.deviceSlot(for: forged, devicePublicKey: samKey.publicKey, vaultID: b.vaultID, random: b.random)],
                    members: [KeyringMember(role: "device", publicKey: lostKey.publicKey, name: "laptop", added: b.now),
                              KeyringMember(role: "device", publicKey: samKey.publicKey, name: "Sam's phone", added: b.now)],
                    history: [HistoricKey(epoch: 1, key: b.keys.keys(for: 1)[0].key)], signer: lostKey)
                let idx = try b.commit([.plaintext(.keyring, epoch: 2, body)])
                return try b.vector("damaged", comment: "sticky removal: a keyring signed by a member removed in another keyring, and not its ancestor, is not trusted (opened by the remaining device)",
                                    issues: [("keyring_unauthenticated", b.frame(idx[0]!).location.offset)], deviceSeed: sam)
            },
            {
                let (b, removal) = try removalVault("damaged-removed-device-listed-again")
                let lostKey = try VectorBuilder.device(lost)
                let e3 = EpochKey(epoch: 3, key: try SymmetricKey(bytes: b.random.bytes(32)))
                let body = b.keyring(
                    e3, parents: [b.keyringIDs[2]!],
                    slots: [try SlotCrypto.recoverySlot(for: e3, recovery: b.recovery, vaultID: b.vaultID, random: b.random)],
                    members: [KeyringMember(role: "recovery", publicKey: b.signer.publicKey, name: "Recovery key", added: b.now),
                              KeyringMember(role: "device", publicKey: lostKey.publicKey, name: "laptop again", added: b.now)],
                    history: [HistoricKey(epoch: 1, key: b.keys.keys(for: 1)[0].key), HistoricKey(epoch: 2, key: b.keys.keys(for: 2)[0].key)])
                let idx = try b.commit([.plaintext(.keyring, epoch: 3, body)])
                _ = removal
                return try b.vector("damaged", comment: "a keyring after a removal that lists the removed device again is rejected",
                                    issues: [("removed_device_slot", b.frame(idx[0]!).location.offset)])
            },
            {
                let (b, removal) = try removalVault("damaged-removed-device-own-view", lostKeepsSlot: true)
                // The removal keyring wrongly still wraps to the lost laptop.
                // The laptop sees itself removed there and must not use it.
                let after = b.released.last!.frame
                b.lose(frame: after)
                return try b.vector("damaged", comment: "a removed device that still finds a slot of its own in the keyring that removed it refuses it: it reads epoch 1 only",
                                    issues: [("removed_device_slot", b.frame(removal).location.offset), ("unknown_epoch", b.frame(after).location.offset),
                                             ("commit_unverifiable", b.frame(after + 1).location.offset)], deviceSeed: lost)
            },
            {
                // Someone who can write the file inserts a forged root
                // keyring (and a commit of their own) right after the header.
                let b = try VectorBuilder("damaged-forged-root-at-start", deviceSeed: sam)
                try b.commit([.entry(b.entry("real"))])
                let samKey = try VectorBuilder.device(sam)
                let attacker = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let fake = EpochKey(epoch: 1, key: try SymmetricKey(bytes: b.random.bytes(32)))
                let body = KeyringBuilder.body(
                    epochKey: fake, vaultID: b.vaultID, parents: [], isEscrowFree: false,
                    slots: [try SlotCrypto.deviceSlot(for: fake, devicePublicKey: samKey.publicKey, vaultID: b.vaultID, random: b.random)],
                    content: KeyringContent(members: [KeyringMember(role: "device", publicKey: attacker.publicKey, name: "x", added: b.now)], blobKey: b.blobKey, created: b.now, reason: "create"),
                    signer: attacker, random: b.random, vaultSalt: b.random.bytes(16))
                let frame = FrameHeader(kind: .keyring, flags: 0, epoch: 1, bodyLength: UInt32(body.count + 16)).encoded() + body + BLAKE2b.hash(body, byteCount: 16)
                var digest = CommitChain.Digest()
                digest.add(header: Array(frame[0..<12]), trailer: Array(frame.suffix(16)))
                let head = CommitChain.head(commitKey: fake.commitKey, vaultID: b.vaultID, previousHead: CommitChain.genesisHead, digest: digest.finalize(), commitHeader: CommitChain.commitHeader(epoch: 1))
                let inserted = frame + CommitChain.commitHeader(epoch: 1).encoded() + head
                var bytes = try b.bytes()
                let firstCommit = b.frame(b.vault.structure.groups[0].commitFrame).location.offset
                bytes.insert(contentsOf: inserted, at: 64)
                return try b.vector("damaged", comment: "a forged root keyring inserted before the real one: its signer does not derive the vault id, so it is not trusted; the shifted first commit no longer chains",
                                    body: bytes, issues: [("keyring_unauthenticated", 64), ("commit_mismatch", UInt64(64 + frame.count)), ("commit_mismatch", firstCommit + UInt64(inserted.count))], deviceSeed: sam)
            },
        ]
    }

    // MARK: - Errors

    static var errors: [Make] {
        func simple(_ name: String, _ code: String, _ comment: String, _ edit: @escaping (VectorBuilder, inout [UInt8]) throws -> Void, key: String? = nil, passphrase: String? = nil,
                    builder: ((String) throws -> VectorBuilder)? = nil) -> Make {
            {
                let b = try builder?("error-\(name)") ?? VectorBuilder("error-\(name)")
                try b.commit([.entry(b.entry("unreachable"))])
                var bytes = try b.bytes()
                try edit(b, &bytes)
                return try b.vector("error", comment: comment, body: bytes, error: code, key: key, passphrase: passphrase)
            }
        }
        let tinyPassphrase: (UInt64, UInt64) -> (String) throws -> VectorBuilder = { ops, mem in
            { name in
                try VectorBuilder(name, extraSlots: { key, id, r in
                    let salt = r.bytes(16)
                    // A slot with out-of-bounds costs is written by hand: the
                    // library refuses to make one.
                    if ops > Limits.maxArgon2OpsLimit || mem > Limits.maxArgon2MemLimitBytes {
                        return [.passphrase(salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: r.bytes(32), box: r.bytes(KeySlot.boxByteCount))]
                    }
                    var p = Array("hunter2".utf8)
                    return [try SlotCrypto.passphraseSlot(for: key, passphrase: SecureBytes(consuming: &p), opsLimit: ops, memLimitBytes: mem, vaultID: id, random: r)]
                })
            }
        }
        return [
            simple("empty-file", "truncated_header", "an empty file", { _, b in b = [] }),
            simple("header-cut", "truncated_header", "63 bytes: shorter than the header", { _, b in b = Array(b[0..<63]) }),
            simple("not-a-vault-random", "not_a_vault", "random bytes", { v, b in b = v.random.bytes(4096) }),
            simple("not-a-vault-zip", "not_a_vault", "a ZIP file", { _, b in b = [0x50, 0x4b, 0x03, 0x04] + [UInt8](repeating: 0, count: 100) }),
            simple("not-a-vault-text", "not_a_vault", "a text file", { _, b in b = Array(String(repeating: "Dear diary,\n", count: 20).utf8) }),
            simple("unsupported-version", "unsupported_version", "format version 2 in both header copies, checks valid", { _, b in
                b[8] = 2; b[40] = 2; Edit.fixHeaderCheck(&b, copy: 0); Edit.fixHeaderCheck(&b, copy: 1) }),
            simple("unsupported-feature", "unsupported_feature", "a header feature flag this reader does not know", { _, b in
                b[10] = 1; b[42] = 1; Edit.fixHeaderCheck(&b, copy: 0); Edit.fixHeaderCheck(&b, copy: 1) }),
            simple("header-both-copies-damaged", "header_damaged", "both header copies fail their check", { _, b in b[20] ^= 1; b[52] ^= 1 }),
            simple("header-copies-differ", "header_copies_differ", "both header copies are intact but name different vaults", { _, b in
                b[52] ^= 1; Edit.fixHeaderCheck(&b, copy: 1) }),
            {
                let b = try VectorBuilder("error-unknown-critical-kind")
                let frame = FrameHeader(kind: RecordKind(rawValue: 0x3f), flags: 0, epoch: 1, bodyLength: 20).encoded() + [UInt8](repeating: 1, count: 20)
                try b.commit([.raw(frame, release: nil)])
                return try b.vector("error", comment: "a committed record of unknown critical kind 0x3f stops the reader", error: "unknown_critical_kind")
            },
            {
                let b = try VectorBuilder("error-no-keyring", profile: false)
                var bytes = try b.bytes()
                bytes = Array(bytes[0..<64])
                return try b.vector("error", comment: "a header and nothing else: no keyring", body: bytes, error: "no_keyring")
            },
            simple("keyring-damaged", "malformed_keyring", "both copies of the only keyring are damaged", { v, b in Edit.damageKeyring(&b, v, frame: 0, at: 30) }),
            simple("wrong-recovery-key", "wrong_recovery_key", "a valid recovery code, for another vault", { _, _ in },
                   key: try! RecoveryKey(secret: SymmetricKey(bytes: [UInt8](repeating: 42, count: 32))).code()),
            {
                let b = try VectorBuilder("error-recovery-code-typo")
                return try b.vector("error", comment: "the right recovery code with one character changed: the checksum catches it before any key derivation",
                                    error: "recovery_code_invalid", key: typo(b.recovery.code()))
            },
            {
                let b = try VectorBuilder("error-wrong-device-key", deviceSeed: [UInt8](repeating: 0x5d, count: 32))
                return try b.vector("error", comment: "a device that was never enrolled (seed 5e×32) opens no slot", error: "wrong_device_key", deviceSeed: [UInt8](repeating: 0x5e, count: 32))
            },
            simple("wrong-passphrase", "wrong_passphrase", "the wrong passphrase", { _, _ in }, passphrase: "hunter3", builder: tinyPassphrase(1, 8192)),
            simple("kdf-ops-over-limit", "kdf_limits_exceeded", "a passphrase slot asking for Argon2id opslimit 9: refused before running", { _, _ in }, passphrase: "hunter2", builder: tinyPassphrase(9, 8192)),
            simple("kdf-decoy-slots", "kdf_limits_exceeded",
                   "four decoy passphrase slots, each with its own salt, before the real one: the reader stops after four Argon2id runs (keys.md §2.3)",
                   { _, _ in }, passphrase: "hunter2", builder: { name in
                       try VectorBuilder(name, extraSlots: { key, id, r in
                           var slots: [KeySlot] = []
                           for word in ["decoy 1", "decoy 2", "decoy 3", "decoy 4", "hunter2"] {
                               var p = Array(word.utf8)
                               slots.append(try SlotCrypto.passphraseSlot(for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id, random: r))
                           }
                           return slots
                       })
                   }),
            simple("kdf-memory-over-limit", "kdf_limits_exceeded", "a passphrase slot asking for 2 GiB of memory: refused before allocating", { _, _ in }, passphrase: "hunter2", builder: tinyPassphrase(1, 2 << 30)),
            {
                let b = try VectorBuilder("error-escrow-slot-in-escrow-free-vault", escrowFree: true, extraSlots: { key, id, r in
                    let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: r))
                    return [try SlotCrypto.escrowSlot(for: key, escrowPublicKey: escrow.publicKey, vaultID: id, random: r)]
                })
                return try b.vector("error", comment: "the first keyring declares the vault escrow-free yet holds an escrow slot", error: "escrow_forbidden")
            },
            {
                // Someone who can write the file but holds no key damages the
                // first keyring and appends a parentless keyring of their own
                // that wraps a key to the device's (public) key.
                let seed = [UInt8](repeating: 0x6a, count: 32)
                let b = try VectorBuilder("error-first-keyring-replaced", deviceSeed: seed)
                var bytes = try b.bytes()
                Edit.damageKeyring(&bytes, b, frame: 0)
                var s = seed
                let device = try Ed25519.KeyPair(seed: SecureBytes(consuming: &s))
                let attacker = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let key = EpochKey(epoch: 1, key: try SymmetricKey(bytes: b.random.bytes(32)))
                let body = KeyringBuilder.body(
                    epochKey: key, vaultID: b.vaultID, parents: [], isEscrowFree: false,
                    slots: [try SlotCrypto.deviceSlot(for: key, devicePublicKey: device.publicKey, vaultID: b.vaultID, random: b.random)],
                    content: KeyringContent(members: [KeyringMember(role: "device", publicKey: attacker.publicKey, name: "evil", added: b.now)], blobKey: b.blobKey, created: b.now, reason: "create"),
                    signer: attacker, random: b.random, vaultSalt: b.random.bytes(16))
                bytes += FrameHeader(kind: .keyring, flags: 0, epoch: 1, bodyLength: UInt32(body.count + 16)).encoded() + body + BLAKE2b.hash(body, byteCount: 16)
                bytes += CommitChain.commitHeader(epoch: 1).encoded() + b.random.bytes(16)
                return try b.vector("error", comment: "both copies of the root keyring damaged and a forged root appended: a root must be signed by the key the vault id commits to",
                                    body: bytes, error: "keyring_unauthenticated", deviceSeed: seed)
            },
            {
                // The first keyring signed by a key that is not among its members.
                let b = try VectorBuilder("error-first-keyring-not-self-signed", profile: false)
                let stranger = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let key = b.keys.writeKey!
                let body = KeyringBuilder.body(
                    epochKey: key, vaultID: b.vaultID, parents: [], isEscrowFree: false,
                    slots: [try SlotCrypto.recoverySlot(for: key, recovery: b.recovery, vaultID: b.vaultID, random: b.random)],
                    content: KeyringContent(members: [KeyringMember(role: "recovery", publicKey: b.signer.publicKey, name: "Recovery key", added: b.now)], blobKey: b.blobKey, created: b.now, reason: "create"),
                    signer: stranger, random: b.random, vaultSalt: b.random.bytes(16))
                let header = FileHeader(vaultID: b.vaultID).encoded()
                let frame = FrameHeader(kind: .keyring, flags: 0, epoch: 1, bodyLength: UInt32(body.count + 16)).encoded() + body + BLAKE2b.hash(body, byteCount: 16)
                var digest = CommitChain.Digest()
                digest.add(header: Array(frame[0..<12]), trailer: Array(frame.suffix(16)))
                let commitHeader = CommitChain.commitHeader(epoch: 1)
                let head = CommitChain.head(commitKey: key.commitKey, vaultID: b.vaultID, previousHead: CommitChain.genesisHead, digest: digest.finalize(), commitHeader: commitHeader)
                return try b.vector("error", comment: "the only root keyring is signed by a key whose salt-derived id is not this vault's", body: header + frame + commitHeader.encoded() + head, error: "keyring_unauthenticated")
            },
        ]
    }
}

extension Catalog {
    /// Replaces one character of a recovery code (for the typo vector).
    static func typo(_ code: String) -> String {
        var chars = Array(code)
        chars[5] = chars[5] == "7" ? "8" : "7"
        return String(chars)
    }
}
