import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireExport
@testable import QuirePDF

/// A fresh temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.path + "/quire-pdf-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// Names in the directory, sorted.
    var listing: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

enum Fixtures {
    static let directory: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path + "/Fixtures"
    }()

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
    }

    /// The `{"date","text","lang"}` lines of a corpus journal, the first `limit`.
    static func journal(_ name: String, limit: Int = .max) throws -> [(date: String, text: String)] {
        let data = try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
        var out: [(String, String)] = []
        for line in data.split(separator: "\n") where out.count < limit {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            out.append((object["date"] as! String, object["text"] as! String))
        }
        return out
    }
}

/// Milliseconds since 1970 UTC of `yyyy-mm-dd` at `hour`:00 local time, `offset` seconds east.
func instant(_ date: String, hour: Int = 22, offset: Int64) -> Int64 {
    let parts = date.split(separator: "-").map { Int64($0)! }
    var (y, m, d) = (parts[0], parts[1], parts[2])
    y -= m <= 2 ? 1 : 0
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    let days = era * 146_097 + doe - 719_468
    return (days * 86_400 + Int64(hour) * 3600 - offset) * 1000
}

/// A vault named `name` holding `entries` (date, text), each at 22:00 in
/// `zone` (`offset` seconds east of UTC); every `photoEvery`-th entry (when
/// > 0) has `photo.jpg` attached.
func makeVault(
    _ dir: TemporaryDirectory, name: String, entries: [(date: String, text: String)], zone: String, offset: Int64,
    photoEvery: Int = 0, tags: (Int) -> [String] = { _ in [] }
) throws -> Vault {
    let recovery = RecoveryKey(secret: try SymmetricKey(bytes: BLAKE2b.hash(Array(name.utf8), byteCount: 32)))
    let vault = try Vault.create(
        at: dir.file("v.quire"), setup: VaultSetup(name: name, recoveryKey: recovery, now: 1_700_000_000_000),
        random: SeededRandom(label: name), options: WriteOptions(synchronous: false))
    let photo = try Fixtures.bytes("photo.jpg")
    try vault.commit { tx in
        var blob: BlobID?
        for (n, e) in entries.enumerated() {
            var body = EntryBody(created: instant(e.date, offset: offset), timeZone: zone, utcOffsetSeconds: offset, text: e.text, tags: tags(n))
            if photoEvery > 0, n % photoEvery == 0 {
                if blob == nil { blob = try tx.storeAttachment(from: MemoryByteSource(photo), mediaType: "image/jpeg").blob }
                body.attachments = [AttachmentReference(id: [UInt8(n % 256), 1], blob: blob!, mediaType: "image/jpeg", fileName: "photo.jpg")]
            }
            try tx.add(body)
        }
    }
    return vault
}

/// Runs a tool from poppler-utils or qpdf; returns its exit status and standard output.
func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/" + tool)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The text of a PDF as `pdftotext` extracts it (UTF-8, layout off).
func pdfText(_ path: String) throws -> String {
    try run("pdftotext", ["-enc", "UTF-8", path, "-"]).output
}

/// Page 1 rendered with `pdftoppm -r 50 -gray`: the share of pixels darker than mid-grey.
func darkPixelRatio(_ path: String, page: Int = 1, in dir: TemporaryDirectory) throws -> Double {
    let prefix = dir.file("page")
    let r = try run("pdftoppm", ["-r", "50", "-f", "\(page)", "-l", "\(page)", "-gray", "-singlefile", path, prefix])
    precondition(r.status == 0, "pdftoppm failed")
    let pgm = Array(try Data(contentsOf: URL(fileURLWithPath: prefix + ".pgm")))
    // "P5\n<w> <h>\n255\n" then one byte a pixel.
    var fields: [String] = []
    var i = 0
    var current = ""
    while fields.count < 4 {
        let c = pgm[i]
        i += 1
        if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 {
            if !current.isEmpty { fields.append(current); current = "" }
        } else {
            current.append(Character(Unicode.Scalar(c)))
        }
    }
    let pixels = pgm[i...]
    let width = Int(fields[1])!, height = Int(fields[2])!
    precondition(pixels.count == width * height)
    return Double(pixels.filter { $0 < 128 }.count) / Double(pixels.count)
}

func fileBytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
