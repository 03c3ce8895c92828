import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireExport

/// A fresh temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.path + "/quire-export-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// Every name in the directory (recursively), sorted, as relative paths.
    func listing(_ sub: String = "") -> [String] {
        let root = sub.isEmpty ? path : file(sub)
        let items = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String]) ?? []
        return items.sorted()
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The fixtures folder.
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path + "/Fixtures"

/// Milliseconds since 1970 (UTC) of a proleptic Gregorian UTC date and time.
func utcMilliseconds(_ y: Int, _ mo: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0, _ s: Int = 0) -> Int64 {
    // Days from civil (H. Hinnant).
    let yy = mo <= 2 ? y - 1 : y
    let era = (yy >= 0 ? yy : yy - 399) / 400
    let yoe = yy - era * 400
    let doy = (153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    let days = Int64(era * 146_097 + doe - 719_468)
    return (days * 86_400 + Int64(h * 3600 + mi * 60 + s)) * 1000
}

func makeVault(_ dir: TemporaryDirectory, name: String = "v.quire", title: String = "Test Journal", seed: String = "export") throws -> Vault {
    let recovery = RecoveryKey(secret: try SymmetricKey(bytes: BLAKE2b.hash(Array(seed.utf8), byteCount: 32)))
    return try Vault.create(
        at: dir.file(name), setup: VaultSetup(name: title, recoveryKey: recovery, now: 1_700_000_000_000),
        random: SeededRandom(label: seed), options: WriteOptions(synchronous: false))
}

/// The hostile string used in every escaping test.
let hostile = "<script>alert(\"x&y\")</script> <b>unbalanced & 'quoted' </i>]]> \u{0} end"

/// A small vault exercising every field: a photo, hostile text, every CBOR
/// type in `extra`, Cyrillic, a same-day slug collision.
func makeSampleVault(_ dir: TemporaryDirectory) throws -> Vault {
    let vault = try makeVault(dir, title: "Sample & <Journal>")
    let photo = fixtures + "/photo.jpg"
    let extra = CBORMap(text: [
        ("richText", .text("{\"a\":1}")), ("count", .unsigned(18_446_744_073_709_551_615)), ("neg", .negative(41)),
        ("pi", .double(3.141592653589793)), ("whole", .double(2)), ("tiny", .double(1e-300)), ("raw", .bytes([0, 255, 16])),
        ("flag", .bool(true)), ("none", .null), ("list", .array([.text("a\nb"), .unsigned(1)])),
        ("nested", .map(CBORMap([(.unsigned(7), .text("seven")), (.text("$x"), .bool(false))]))),
    ])
    try vault.commit { tx in
        let stored = try tx.storeAttachment(fromFile: photo, mediaType: "image/jpeg")
        let ref = AttachmentReference(id: [1, 2, 3, 4], blob: stored.blob, mediaType: "image/jpeg", fileName: "cover <1>.jpg", extra: CBORMap(text: [("md5", .text("abc"))]))
        try tx.add(EntryBody(
            created: utcMilliseconds(1660, 1, 11, 22, 1, 15), modified: utcMilliseconds(1660, 1, 11, 23, 8, 15), timeZone: "Europe/London",
            text: "Jan. 1st (Lord’s day). This *morning* I rose, put on my **suit**.\n\n# A heading\n\n> A letter\n> quoted\n\n![The portrait](quire-attachment://01020304)\n\nSee [the site](https://example.org/?a=1&b=2).",
            tags: ["1660", "church"], mood: 4, isStarred: true, journal: "Pepys Diary",
            location: Location(latitude: 51.5098, longitude: -0.0796, placeName: "Seething Lane", locality: "London", country: "England"),
            weather: Weather(temperatureCelsius: -1.5, conditions: "Frost"), attachments: [ref], extra: extra))
        try tx.add(EntryBody(
            created: utcMilliseconds(2024, 2, 29, 12), timeZone: "Asia/Tokyo", isAllDay: true, text: hostile + "\n\nSecond *para* with <em>",
            tags: ["<tag>&\"q\"", "work"], isPinned: true, journal: "J\"&<>'"))
        try tx.add(EntryBody(
            created: utcMilliseconds(1852, 6, 1, 19, 29, 43), timeZone: "Europe/Moscow", text: "Іюня 1. Пятигорскъ. Утромъ писалъ.",
            tags: ["1852"], journal: "Tolstoy Diary"))
        try tx.add(EntryBody(created: utcMilliseconds(2024, 3, 1, 9), timeZone: "UTC", text: "Same words", tags: ["work"], journal: "Pepys Diary"))
        try tx.add(EntryBody(created: utcMilliseconds(2024, 3, 1, 10), timeZone: "UTC", text: "Same words!", journal: "Pepys Diary"))
    }
    // The books' language is the profile's; British English, whatever the machine's.
    try vault.commit { tx in try tx.setProfile(name: "Sample & <Journal>", settings: CBORMap(text: [("locale", .text("en_GB"))])) }
    return vault
}

/// A vault built from a corpus JSONL file (`{"date","text","lang"}` lines):
/// entries at 22:00 UTC on each date, tagged with the year, in `journal`;
/// when `photos`, the first entry of each year gets `photo.jpg`.
func makeCorpusVault(_ dir: TemporaryDirectory, jsonl: String, journal: String, timeZone: String, photos: Bool = false, limit: Int = .max) throws -> Vault {
    let vault = try makeVault(dir, name: journal + ".quire", title: journal, seed: journal)
    let data = try String(contentsOfFile: fixtures + "/" + jsonl, encoding: .utf8)
    var bodies: [EntryBody] = []
    for line in data.split(separator: "\n").prefix(limit) {
        let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
        let date = (obj["date"] as! String).split(separator: "-").map { Int($0)! }
        bodies.append(EntryBody(
            created: utcMilliseconds(date[0], date[1], date[2], 22) + Int64(bodies.count % 60) * 1000, timeZone: timeZone,
            text: obj["text"] as! String, tags: [String(date[0])], journal: journal))
    }
    try vault.commit { tx in
        var blob: BlobID?
        var lastYear = ""
        for var body in bodies {
            if photos, body.tags[0] != lastYear {
                lastYear = body.tags[0]
                if blob == nil { blob = try tx.storeAttachment(fromFile: fixtures + "/photo.jpg", mediaType: "image/jpeg").blob }
                body.attachments = [AttachmentReference(id: [9, 9], blob: blob!, mediaType: "image/jpeg", fileName: "portrait.jpg")]
                body.text += "\n\n![](quire-attachment://0909)"
            }
            try tx.add(body)
        }
    }
    return vault
}

/// The text of a file.
func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

/// Whether a golden file matches; writes `<name>.actual` beside it when not
/// (set QUIRE_UPDATE_GOLDEN=1 to rewrite the golden file).
func matchesGolden(_ actual: String, _ name: String) throws -> Bool {
    let path = fixtures + "/export/" + name
    if ProcessInfo.processInfo.environment["QUIRE_UPDATE_GOLDEN"] == "1" {
        try actual.write(toFile: path, atomically: true, encoding: .utf8)
        return true
    }
    let expected = (try? read(path)) ?? ""
    if expected != actual { try? actual.write(toFile: path + ".actual", atomically: true, encoding: .utf8) }
    return expected == actual
}
