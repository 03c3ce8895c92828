// Deterministic, English-like journal entries for the benchmarks.

@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat

/// SplitMix64: a small seeded generator, so every run writes the same text.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// Makes journal entries of 500–2000 bytes of English-like text with tags.
struct EntryGenerator {
    private var rng: SplitMix64
    private let ids: SeededRandom
    private var serial = 0
    /// 2015-01-01T00:00:00Z in milliseconds; entries are 30 minutes apart.
    private let start: Int64 = 1_420_070_400_000

    init(seed: UInt64) {
        rng = SplitMix64(seed: seed)
        ids = SeededRandom(label: "quire-bench ids \(seed)")
    }

    static let words: [String] = """
        the of and to a in that it was i he for on with as his at by had not be but from this they which have you \
        all were one we her she an there been so my their if would when who will more no out up into what some \
        could them only other than then its over also time about after first two like day our down did back \
        now way me just may good little most very through new where much before well years any same old should \
        because work many long even here great those still own while people make these between life both under \
        might never world each came again house never last made home morning evening went walked garden letter \
        wrote read book friend river town road rain sun wind cold warm light dark window door table tea coffee \
        bread dinner supper church market office office busy quiet tired happy glad sorry thought felt heard \
        saw found told asked answered began kept left took brought gave called carried talked laughed waited \
        slept woke early late today yesterday tomorrow week month year spring summer autumn winter snow fire \
        city street bridge ship boat sea shore hill field tree flower bird dog cat horse child children mother \
        father brother sister wife husband cousin neighbour doctor captain clerk master servant king court \
        news paper money price bill shop ride coach walk journey dinner music play singing dancing game cards \
        letters accounts business meeting matter trouble pleasure hope fear doubt reason truth mind heart head \
        hand eyes face voice word name place part side end case point fact kind sort manner course order while
        """.split(separator: " ").map(String.init)

    static let tags = [
        "work", "family", "travel", "health", "reading", "garden", "music", "friends", "weather", "money",
        "ideas", "gratitude", "dreams", "food", "walks", "church", "navy", "london", "plague", "fire",
    ]

    static let zones = ["Europe/London", "Europe/Paris", "America/New_York", "Asia/Tokyo", "Australia/Sydney"]

    /// A word, skewed towards the common ones (index ~ n·u²).
    private mutating func word() -> String {
        let u = rng.unit()
        return Self.words[min(Self.words.count - 1, Int(Double(Self.words.count) * u * u))]
    }

    /// About `length` bytes of sentences and paragraphs.
    mutating func text(length: Int) -> String {
        var out = ""
        out.reserveCapacity(length + 32)
        var sentencesInParagraph = 0
        while out.utf8.count < length {
            let n = rng.int(6...18)
            var sentence = ""
            for i in 0..<n {
                var w = word()
                if i == 0 { w = w.prefix(1).uppercased() + w.dropFirst() }
                if i > 0 { sentence += (rng.int(0...9) == 0 && i < n - 1) ? ", " : " " }
                sentence += w
            }
            sentence += rng.int(0...11) == 0 ? "!" : (rng.int(0...9) == 0 ? "?" : ".")
            if !out.isEmpty { out += sentencesInParagraph >= rng.int(3...6) ? "\n\n" : " " }
            if out.hasSuffix("\n\n") { sentencesInParagraph = 0 }
            out += sentence
            sentencesInParagraph += 1
        }
        // Cut at the last word boundary at or before `length`.
        var bytes = Array(out.utf8)
        if bytes.count > length {
            bytes.removeSubrange(length...)
            while let last = bytes.last, last != 0x20 { bytes.removeLast() }
            if !bytes.isEmpty { bytes.removeLast() }
            bytes.append(0x2E)  // "."
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The body of the next entry: 500–2000 bytes of text, 0–3 tags, a zone, a mood.
    mutating func body() -> EntryBody {
        serial += 1
        let created = start + Int64(serial) * 1_800_000
        var tags: [String] = []
        for _ in 0..<rng.int(0...3) {
            let t = Self.tags[rng.int(0...(Self.tags.count - 1))]
            if !tags.contains(t) { tags.append(t) }
        }
        return EntryBody(
            created: created, timeZone: Self.zones[rng.int(0...(Self.zones.count - 1))], text: text(length: rng.int(500...2000)),
            tags: tags, mood: rng.int(0...3) == 0 ? nil : Int64(rng.int(1...5)))
    }

    /// A first revision of a new entry holding the next body.
    mutating func revision() -> EntryRevision {
        let b = body()
        return EntryRevision(
            entryID: EntryID(using: ids), revisionID: RevisionID(using: ids), parents: [],
            clock: HybridLogicalClock(milliseconds: UInt64(b.createdMilliseconds), counter: 0), body: b)
    }
}
