import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireImport
import QuireZip

/// A fresh temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.path + "/quire-import-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A new vault in `dir` with a fixed recovery key and seeded randomness, no fsync.
func makeVault(_ dir: TemporaryDirectory, name: String = "v.quire") throws -> Vault {
    let recovery = RecoveryKey(secret: try SymmetricKey(bytes: BLAKE2b.hash(Array("import-test".utf8), byteCount: 32)))
    return try Vault.create(
        at: dir.file(name), setup: VaultSetup(name: "Import Test", recoveryKey: recovery, now: 1_700_000_000_000),
        random: SeededRandom(label: name), options: WriteOptions(synchronous: false))
}

/// The shared corpus cases, copied into the fixtures.
let casesFolder = importFixtures + "/dayone-cases"
let samplesFolder = importFixtures + "/dayone"

/// Every entry, keyed by its Day One uuid (uppercase hex of the id).
func entriesByUUID(_ vault: Vault) throws -> [String: EntrySnapshot] {
    var out: [String: EntrySnapshot] = [:]
    for e in try vault.entries() { out[e.id.description.uppercased()] = e }
    return out
}

/// The Day One entry objects of a JSON file, parsed by Foundation (an independent reader).
func foundationEntries(_ path: String) throws -> [[String: Any]] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let root = try JSONSerialization.jsonObject(with: data) as! [String: Any]
    return root["entries"] as? [[String: Any]] ?? []
}

/// Reads a zip member fully (test helper).
func zipMember(_ zipPath: String, _ name: String) throws -> [UInt8] {
    let zip = try ZipReader(path: zipPath)
    return try zip.readAll(zip.member(named: name)!, limit: 1 << 30)
}
