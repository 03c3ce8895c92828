import Foundation
import QuireTestSupport
import Testing
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys

/// Random sequences of operations checked against a model. Each seed is one
/// test case; every expectation message names the seed and the step, so a
/// failure can be replayed with `PropertyTests.Run(seed:)`.
@Suite struct PropertyTests {
    static let seeds: [UInt64] = Array(1...20)
    static let stepCount = 30

    /// What the vault should hold.
    struct Model {
        struct Entry {
            var created: Int64
            var text: String
            var attachments: [AttachmentReference]
            var isDeleted: Bool
            var revisionCount: Int
        }

        var entries: [EntryID: Entry] = [:]
        var blobs: [BlobID: [UInt8]] = [:]

        /// Live entries in `Vault.entries()` order: creation time, then id.
        var live: [(EntryID, Entry)] {
            entries.filter { !$0.value.isDeleted }.sorted { a, b in
                a.value.created != b.value.created ? a.value.created < b.value.created : a.key < b.key
            }
        }
    }

    /// Pieces random texts are made of: ASCII, Markdown, Chinese, Cyrillic,
    /// emoji (with ZWJ sequences and flags), combining marks, control-ish
    /// whitespace.
    static let fragments = [
        "Today", " ", "walked", "home", "# Heading\n", "- [ ] task\n", "**bold**", "`code`", "\n", "\t", "...",
        "今天", "天气很好", "我们去了长城。", "日记", "Дневник", "Привет, мир!", "ёлка", "Щука", "🙂", "📓", "👩‍💻",
        "🇬🇧", "🏳️‍🌈", "e\u{301}", "é", "ﬁ", "Ω", "\u{200B}", "Ελληνικά", "עברית", "العربية", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    ]

    static func randomText(_ rng: inout DmgRNG) -> String {
        let n = rng.below(4) == 0 ? 0 : 1 + rng.below(40)
        var s = ""
        for _ in 0..<n { s += rng.pick(fragments) }
        return s
    }

    static func randomAttachmentSize(_ rng: inout DmgRNG) -> Int {
        switch rng.below(6) {
        case 0: 0
        case 1: 1
        case 2: 65_535
        case 3: 65_536
        case 4: 65_537
        default: rng.below(300_001)
        }
    }

    @Test(arguments: PropertyTests.seeds)
    func randomOperationsMatchTheModel(seed: UInt64) throws {
        try Run(seed: seed).go()
    }

    final class Run {
        let seed: UInt64
        var rng: DmgRNG
        let dir = TemporaryDirectory()
        let path: String
        let recovery: RecoveryKey
        var vault: Vault
        var model = Model()
        var nextCreated: Int64 = 1_700_000_000_000
        var stats: [String: Int] = [:]

        init(seed: UInt64) throws {
            self.seed = seed
            rng = DmgRNG(seed: seed)
            (vault, recovery) = try makeVault(dir, seed: "property-\(seed)")
            path = dir.file("v.quire")
        }

        func go() throws {
            for step in 0..<PropertyTests.stepCount {
                let ctx = "seed \(seed) step \(step)"
                let roll = rng.below(100)
                if roll < 30 || model.entries.isEmpty {
                    try add(ctx)
                } else if roll < 50 {
                    try edit(ctx)
                } else if roll < 62 {
                    try delete(ctx)
                } else if roll < 82 {
                    try attach(ctx)
                } else {
                    try reopen(ctx)
                }
                compareEntries(ctx + " (same handle)")
            }
            let commits = 1 + PropertyTests.stepCount - stats["reopen", default: 0]
            try reopen("seed \(seed) final")
            let report = vault.verify()
            #expect(report.issues.map(DmgIssue.init) == [], "seed \(seed) final verify")
            #expect(report.commitCount == commits, "seed \(seed) commit count \(stats)")
        }

        func add(_ ctx: String) throws {
            stats["add", default: 0] += 1
            let text = PropertyTests.randomText(&rng)
            let created = nextCreated
            nextCreated += Int64(1 + rng.below(3)) * (rng.chance(1, in: 5) ? 0 : 1)  // sometimes equal times: order falls back to ids
            let r = try vault.add(dmgBody(text, created: created))
            #expect(r.body.text == text, "\(ctx)")
            model.entries[r.entryID] = Model.Entry(created: created, text: text, attachments: [], isDeleted: false, revisionCount: 1)
        }

        func someEntry() -> EntryID {
            let ids = model.entries.keys.sorted()
            return ids[rng.below(ids.count)]
        }

        func edit(_ ctx: String) throws {
            stats["edit", default: 0] += 1
            let id = someEntry()
            var e = model.entries[id]!
            e.text = PropertyTests.randomText(&rng)
            if rng.chance(1, in: 3) { e.attachments = [] }
            // A deleted entry comes back only through an explicit restore.
            let body = dmgBody(e.text, created: e.created, attachments: e.attachments)
            let r = e.isDeleted ? try vault.restore(id, body: body) : try vault.edit(id, body: body)
            #expect(r.entryID == id, "\(ctx)")
            e.isDeleted = false
            e.revisionCount += 1
            model.entries[id] = e
        }

        func delete(_ ctx: String) throws {
            stats["delete", default: 0] += 1
            let id = someEntry()
            let r = try vault.delete(id)
            #expect(r.isDeleted, "\(ctx)")
            model.entries[id]!.isDeleted = true
            model.entries[id]!.revisionCount += 1
        }

        func attach(_ ctx: String) throws {
            stats["attach", default: 0] += 1
            let size = PropertyTests.randomAttachmentSize(&rng)
            let content = rng.bytes(size)
            let text = PropertyTests.randomText(&rng)
            let created = nextCreated
            nextCreated += 1
            let refID = rng.bytes(8)
            let entryID = EntryID(unchecked: rng.bytes(16))
            let revisionID = RevisionID(unchecked: rng.bytes(16))
            var stored: StoredBlob?
            var ref: AttachmentReference?
            try vault.commit { (tx: VaultTransaction) throws(QuireError) in
                let s = try tx.storeAttachment(from: MemoryByteSource(content), mediaType: "application/octet-stream")
                stored = s
                ref = AttachmentReference(id: refID, blob: s.blob, mediaType: "application/octet-stream", fileName: "file-\(size).bin")
                try tx.append(EntryRevision(
                    entryID: entryID, revisionID: revisionID, clock: HybridLogicalClock(milliseconds: UInt64(created), counter: 0),
                    body: dmgBody(text, created: created, attachments: [ref!])))
            }
            let s = try #require(stored, "\(ctx)")
            #expect(s.byteCount == UInt64(size), "\(ctx) size \(size)")
            if let known = model.blobs[s.blob] {
                #expect(known == content, "\(ctx): a blob id was reused for other content")
                #expect(s == .deduplicated(s.blob, byteCount: UInt64(size)), "\(ctx) size \(size)")
            } else {
                guard case .stored(let m) = s else {
                    Issue.record("\(ctx): new content of \(size) bytes was reported as deduplicated")
                    return
                }
                #expect(m.byteCount == UInt64(size) && m.chunkCount == UInt64((referencePadme(size + 1) + 65_535) / 65_536), "\(ctx) size \(size)")
                model.blobs[s.blob] = content
            }
            model.entries[entryID] = Model.Entry(created: created, text: text, attachments: [ref!], isDeleted: false, revisionCount: 1)
        }

        func reopen(_ ctx: String) throws {
            stats["reopen", default: 0] += 1
            vault = try dmgOpen(path, recovery)
            compareEntries(ctx + " (reopened)")
            compareAttachments(ctx + " (reopened)")
            #expect(vault.verify().issues.map(DmgIssue.init) == [], "\(ctx)")
        }

        func compareEntries(_ ctx: String) {
            do {
                let got = try vault.entries()
                let want = model.live
                #expect(got.map(\.id) == want.map(\.0), "\(ctx): ids")
                #expect(got.map { Array($0.body.text.utf8) } == want.map { Array($0.1.text.utf8) }, "\(ctx): texts")
                #expect(got.map(\.body.attachments) == want.map(\.1.attachments), "\(ctx): attachment references")
                #expect(got.map(\.body.createdMilliseconds) == want.map(\.1.created), "\(ctx): created")
                #expect(got.allSatisfy { $0.conflictingHeads.isEmpty }, "\(ctx): conflicts")
                for (id, e) in model.entries {
                    let snapshot = try vault.entry(id)
                    #expect(snapshot?.isDeleted == e.isDeleted, "\(ctx): deleted state of \(id)")
                    #expect(snapshot?.revisionCount == e.revisionCount, "\(ctx): revision count of \(id)")
                    if !e.isDeleted { #expect(snapshot.map { Array($0.body.text.utf8) } == Array(e.text.utf8), "\(ctx): text of \(id)") }
                }
            } catch {
                Issue.record("\(ctx): \(error)")
            }
        }

        func compareAttachments(_ ctx: String) {
            for (blob, content) in model.blobs {
                do {
                    let reader = try vault.openAttachment(blob)
                    #expect(reader.manifest.byteCount == UInt64(content.count), "\(ctx): size of \(blob)")
                    #expect(try reader.readAll() == content, "\(ctx): bytes of \(blob) (\(content.count) bytes)")
                } catch {
                    Issue.record("\(ctx): attachment \(blob) of \(content.count) bytes: \(error)")
                }
            }
        }
    }
}

/// The Padmé length (`Spec/format.md §6.2`), written from the paper's
/// definition: the low E − S bits of L rounded up, E = ⌊log₂ L⌋,
/// S = ⌊log₂ E⌋ + 1.
private func referencePadme(_ length: Int) -> Int {
    guard length >= 2 else { return length }
    let e = Int.bitWidth - 1 - length.leadingZeroBitCount
    let s = Int.bitWidth - e.leadingZeroBitCount
    let mask = (1 << (e - s)) - 1
    return (length + mask) & ~mask
}
