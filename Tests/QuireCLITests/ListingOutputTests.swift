import Foundation
@_spi(Format) import Quire
import QuireTestSupport
import Testing

@testable import QuireCommandLine

/// Issue 14: `list`, `search` and `show` print the same bytes as before
/// while making their dates, lines and JSON without ICU formatters or
/// JSONEncoder per entry.
@Suite struct ListingOutputTests {
    /// Instants from 1550 to 10050 (seeded), and every 15 minutes across
    /// the 2026 clock changes of the zones below.
    static let instants: [Int64] = {
        var out: [Int64] = [0, -1, 1, -11_676_096_000_001, 253_402_300_799_999, 253_402_300_800_000, -12_000_000_000_000]
        var state: UInt64 = 14
        for _ in 0..<3000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // 1550-01-01 … 10050-01-01, in milliseconds.
            out.append(-13_254_000_000_000 + Int64(state >> 20) % 268_260_000_000_000)
        }
        // 2026-03-29 (EU), 2026-03-08 (US), 2026-04-05 (Lord Howe), 2026-10-25 (EU), 2026-11-01 (US), 2026-10-04 (Lord Howe).
        for day: Int64 in [
            1_774_742_400_000, 1_772_928_000_000, 1_775_347_200_000, 1_792_886_400_000, 1_793_491_200_000, 1_790_985_600_000,
        ] {
            for quarter in Int64(-8)..<Int64(8 * 4 + 8) { out.append(day + quarter * 900_000 + 59_999) }
        }
        return out
    }()

    static let zones = [
        "UTC", "Europe/London", "Europe/Dublin", "America/New_York", "America/St_Johns", "Asia/Kathmandu", "Asia/Kolkata",
        "Australia/Lord_Howe", "Pacific/Chatham", "Africa/Monrovia", "America/Sao_Paulo", "", "Not/AZone",
    ]

    /// 1583-01-02 UTC: from here on ICU's calendar is the proleptic
    /// Gregorian one the arithmetic follows (before, ICU switches to Julian).
    static let gregorianInICU: Int64 = -12_212_467_200_000

    @Test func entryDatesAreWhatTheFormattersPrint() {
        for zone in Self.zones {
            let tz = TimeZone(identifier: zone) ?? TimeZone(identifier: "UTC")!
            for ms in Self.instants where ms >= Self.gregorianInICU {
                #expect(DateText.day(ms, zoneName: zone) == DateText.formatted(ms, "yyyy-MM-dd", tz), "\(zone) \(ms)")
                #expect(DateText.iso(ms, zoneName: zone) == DateText.isoFormatted(ms, zoneName: zone), "\(zone) \(ms)")
            }
        }
    }

    @Test func localDatesAreWhatTheFormattersPrint() {
        for ms in Self.instants where ms >= Self.gregorianInICU {
            #expect(DateText.local(ms) == DateText.formatted(ms, "yyyy-MM-dd HH:mm", .current), "\(ms)")
            #expect(DateText.localDay(ms) == DateText.formatted(ms, "yyyy-MM-dd", .current), "\(ms)")
            #expect(DateText.localTime(ms) == DateText.formatted(ms, "HH:mm", .current), "\(ms)")
        }
    }

    @Test func theCalendarArithmeticKnowsLeapDays() throws {
        // 2024-02-29 23:59:59.999 UTC, and the next millisecond.
        let leap = CivilTime(1_709_251_199_999, zone: TimeZone(identifier: "UTC")!)
        #expect([leap.year, leap.month, leap.day, leap.hour, leap.minute, leap.second] as [Int] == [2024, 2, 29, 23, 59, 59])
        let march = CivilTime(1_709_251_200_000, zone: TimeZone(identifier: "UTC")!)
        #expect([march.year, march.month, march.day, march.hour] as [Int] == [2024, 3, 1, 0])
        // 1900 was not a leap year.
        let y1900 = CivilTime(-2_203_891_200_000, zone: TimeZone(identifier: "UTC")!)
        #expect([y1900.year, y1900.month, y1900.day] as [Int] == [1900, 3, 1])
    }

    /// Trial 25, F1: every `Int64` instant is shown as its proleptic
    /// Gregorian date (the formatters clamp at about ±5.8 million years,
    /// print nothing beyond, and switch to the Julian calendar before 1582).
    @Test func everyInt64InstantIsShownProlepticGregorian() {
        #expect(DateText.iso(.max) == "292278994-08-17T07:12:55Z")
        #expect(DateText.iso(.min) == "-292275055-05-16T16:47:04Z")
        #expect(DateText.iso(.max, zoneName: "Asia/Tokyo") == "292278994-08-17T16:12:55+09:00")
        #expect(DateText.day(.min, zoneName: "Europe/London") == "-292275055-05-16")
        #expect(DateText.day(-62_135_596_800_001, zoneName: "UTC") == "0000-12-31")
        #expect(DateText.day(-62_135_596_800_000, zoneName: "UTC") == "0001-01-01")
        #expect(DateText.day(-12_000_000_000_000, zoneName: "UTC") == "1589-09-26")
        #expect(DateText.day(-15_000_000_000_000, zoneName: "UTC") == "1494-09-01")
        #expect(DateText.day(253_402_300_800_000, zoneName: "UTC") == "10000-01-01")
        #expect(DateText.iso(-9_600_000_000_000, zoneName: "Europe/London") == "1665-10-14T21:18:45-00:01:15")
        #expect(DateText.dayNumber(.max, zoneName: "UTC") == 106_751_991_167)
        #expect(DateText.day(number: -106_751_991_168) == "-292275055-05-16")
        #expect(EntryFilter.monthDay(.max, zoneName: "UTC") == "08-17")
    }

    /// Summaries holding every character class the encoder escapes.
    static func tricky() -> EntryListJSON {
        var text = "Title \"quoted\" \\ back/slash\ttab\u{8}\u{c}\r\n"
        for c in 0..<0x20 { text += String(UnicodeScalar(UInt8(c))) }
        text += "\u{7f} \u{85} \u{2028} \u{202e} é 日本 👩‍👩‍👧"
        var summaries: [EntrySummaryJSON] = []
        for i in 0..<4 {
            let body = EntryBody(
                created: 1_772_353_800_000 + Int64(i) * 86_400_000, timeZone: i == 1 ? "Asia/Kathmandu" : "Europe/London",
                isAllDay: i == 2, text: i == 3 ? "" : text, tags: i == 0 ? [] : ["a/b", "Café", "q\"uote"], mood: i == 1 ? 4 : nil,
                isStarred: i == 1, journal: i == 2 ? "Work/\u{1b}" : "")
            summaries.append(
                EntrySummaryJSON(
                    id: EntryID(unchecked: Array(repeating: UInt8(i * 37), count: 16)), body: body, conflict: i == 3, attested: i != 2))
        }
        var unread = UnreadRecordsJSON(UnreadRecords())
        unread.count = 2
        unread.records = [
            .init(code: "authentication_failed", offset: 6_475_330, frame: 5042, message: "frame 5042: \"bad\"\n"),
            .init(code: "damaged", offset: nil, frame: nil, message: ""),
        ]
        return EntryListJSON(count: summaries.count, entries: summaries, unreadRecords: unread)
    }

    @Test func entryListsWriteWhatJSONEncoderWrites() {
        let full = Self.tricky()
        #expect(PrettyJSON.encode(full) == Output.encodedByJSONEncoder(full))
        let empty = EntryListJSON(count: 0, entries: [], unreadRecords: UnreadRecordsJSON(UnreadRecords()))
        #expect(PrettyJSON.encode(empty) == Output.encodedByJSONEncoder(empty))
        #expect(String(decoding: PrettyJSON.encode(empty), as: UTF8.self).contains("\"entries\" : [\n\n  ],"))
        // Output.encode takes the written path for these.
        #expect(Output.encode(full) == String(decoding: Output.encodedByJSONEncoder(full), as: UTF8.self))
    }

    @Test func anEntryLineHasItsIdDateTitleTagsAndMarks() {
        let body = EntryBody(
            created: 1_772_353_800_000, text: "\n  First line  \nsecond", tags: ["walk", "river"], mood: 4, isStarred: true,
            attachments: [
                AttachmentReference(
                    id: [1], blob: BlobID(unchecked: Array(repeating: 1, count: BlobID.byteCount)), mediaType: "image/jpeg"),
                AttachmentReference(
                    id: [2], blob: BlobID(unchecked: Array(repeating: 2, count: BlobID.byteCount)), mediaType: "audio/mpeg"),
            ])
        let id = EntryID(unchecked: [0xa1, 0xb2, 0xc3, 0xd4] + Array(repeating: 0, count: 12))
        let line = EntryFormat.line(id: id, body: body, conflict: true)
        let expected = "a1b2c3d4  \(DateText.local(1_772_353_800_000))  First line  #walk #river  (starred, mood 4, 1 photo, conflict)"
        #expect(line.rendered(escaping: false, colour: false) == expected)
        #expect(
            line.rendered(escaping: true, colour: true)
                == "\u{1b}[33ma1b2c3d4\u{1b}[0m  \(DateText.local(1_772_353_800_000))  First line  \u{1b}[36m#walk\u{1b}[0m \u{1b}[36m#river\u{1b}[0m  (starred, mood 4, 1 photo, conflict)"
        )
        #expect(EntryFormat.short(id) == "a1b2c3d4")
    }

    @Test func idPrefixesMatchTheHexDigits() {
        let bytes: [UInt8] = [0x0a, 0xf3, 0x90] + Array(repeating: 0xff, count: 13)
        #expect(EntryFormat.hasHexPrefix(bytes, "0af3"))
        #expect(EntryFormat.hasHexPrefix(bytes, "0af39"))
        #expect(EntryFormat.hasHexPrefix(bytes, EntryFormat.hex(bytes)))
        #expect(!EntryFormat.hasHexPrefix(bytes, "0af4"))
        #expect(!EntryFormat.hasHexPrefix(bytes, "af39"))
        #expect(!EntryFormat.hasHexPrefix(bytes, EntryFormat.hex(bytes) + "f"))
    }

    /// An entry id prefix matches an id through its words (no array per id)
    /// exactly when the id's hex digits start with it: every length from 4
    /// to 32 digits, across the two words' boundary, matching and not.
    @Test func anIDPrefixMatchesAsItsHexDigitsDo() throws {
        var rng = SplitMix64(seed: 38)
        for _ in 0..<400 {
            let bytes = rng.bytes(16)
            let id = EntryID(unchecked: bytes)
            let hex = EntryFormat.hex(bytes)
            for length in 4...32 {
                var digits = Array(hex.prefix(length))
                if rng.chance(1, in: 2) {
                    // One digit changed: no longer a prefix of this id.
                    let at = rng.below(length)
                    let all = Array("0123456789abcdef")
                    digits[at] = all[(all.firstIndex(of: digits[at])! + 1 + rng.below(15)) % 16]
                }
                let text = String(digits)
                let prefix = try EntryIDPrefix(argument: rng.chance(1, in: 4) ? text.uppercased() : text)
                #expect(prefix.matches(id) == EntryFormat.hasHexPrefix(bytes, text), "\(text) against \(hex)")
            }
        }
        #expect(try EntryIDPrefix(argument: "0AF3").matches(EntryID(unchecked: [0x0a, 0xf3] + Array(repeating: 0, count: 14))))
    }

    /// The nine real Day One exports of `Tests/Fixtures/import/dayone/`
    /// imported into one vault (ids come from the exports' UUIDs), listed
    /// and searched in New York time: the bytes are those the listing
    /// printed before it stopped using ICU formatters and JSONEncoder per
    /// entry (`Tests/Fixtures/listing/`, written by the quire of `01c85c9`).
    @Test func aListingPrintsWhatItPrintedBefore() throws {
        let box = try Sandbox()
        try box.makeVault()
        let exports = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/Tests/Fixtures/import/dayone")
            .filter { $0.hasSuffix(".json") }.sorted()
        #expect(exports.count == 9)
        for name in exports {
            let r = try box.quire(["import", "dayone", repositoryRoot + "/Tests/Fixtures/import/dayone/" + name, "Journal.quire"])
            #expect(r.status == 0, "\(r)")
        }
        let zone = ["TZ": "America/New_York"]
        for (file, args) in [
            ("dayone-list.txt", ["list", "Journal.quire"]),
            ("dayone-list-newest-40.json", ["list", "Journal.quire", "-n", "40", "--json"]),
            ("dayone-search-garden.txt", ["search", "Journal.quire", "garden"]),
            ("dayone-search-pizza-5.json", ["search", "Journal.quire", "pizza", "--json", "-n", "5"]),
        ] {
            let expected = try String(contentsOfFile: repositoryRoot + "/Tests/Fixtures/listing/" + file, encoding: .utf8)
            // Twice: the second `list -n` answers from the index cache the first wrote.
            for _ in 0..<2 {
                let r = try box.quire(args, env: zone)
                #expect(r.status == 0 && r.stderr == "", "\(r)")
                #expect(r.stdout == expected, "\(args.joined(separator: " ")) differs from \(file)")
            }
        }
        #expect(try Self.cacheFiles(box).count == 1)
    }

    /// The index cache files in the sandbox's key store.
    static func cacheFiles(_ box: Sandbox) throws -> [String] {
        let folder = box.path("home/caches")
        guard FileManager.default.fileExists(atPath: folder) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".qic") }
    }

    /// `list -n N` (newest first) and `show ID` through the device's index
    /// cache print what the full listing prints: the newest N lines of
    /// `list`, reversed; the same `show` before and after the cache exists,
    /// and after another entry was added (read from the tail).
    @Test func aPageFromTheCachePrintsWhatTheFullListingPrints() throws {
        let box = try Sandbox()
        try box.makeVault()
        var ids: [String] = []
        for i in 0..<12 {
            ids.append(
                try box.add(
                    "Entry \(i) of the page test\nsecond line", ["--date", "2024-03-\(10 + i)T09:30", "--tag", i % 2 == 0 ? "even" : "odd"])
            )
        }
        let full = try box.quire(["list", "Journal.quire"])
        #expect(full.status == 0 && full.stderr == "", "\(full)")
        let newestFive = full.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().suffix(5).reversed().map {
            $0 + "\n"
        }.joined()
        let showFirst = try box.quire(["show", "Journal.quire", ids[3]])
        #expect(showFirst.status == 0, "\(showFirst)")
        for round in 0..<2 {
            let page = try box.quire(["list", "Journal.quire", "-n", "5"])
            #expect(page.status == 0 && page.stderr == "", "\(page)")
            #expect(page.stdout == newestFive, "round \(round)")
            let json = try box.quire(["list", "Journal.quire", "-n", "5", "--json"])
            let fullJSON = try box.quire(["list", "Journal.quire", "--json"])
            let pageEntries = try #require(try json.json()["entries"] as? [[String: Any]])
            let fullEntries = try #require(try fullJSON.json()["entries"] as? [[String: Any]])
            #expect(pageEntries.map { $0["id"] as? String } == fullEntries.suffix(5).reversed().map { $0["id"] as? String })
            let show = try box.quire(["show", "Journal.quire", ids[3]])
            #expect(show.stdout == showFirst.stdout && show.stderr == showFirst.stderr, "round \(round)")
        }
        #expect(try Self.cacheFiles(box).count == 1)
        // Another entry: read from the tail after the cache.
        let newest = try box.add("The newest entry", ["--date", "2024-04-01T08:00"])
        let page = try box.quire(["list", "Journal.quire", "-n", "1"])
        #expect(page.stdout.hasPrefix(String(newest.prefix(8))), "\(page)")
        let missing = try box.quire(["show", "Journal.quire", "ffffffff"])
        #expect(missing.status != 0 && missing.stderr.contains("no entry has an id starting with ffffffff"), "\(missing)")
    }
}
