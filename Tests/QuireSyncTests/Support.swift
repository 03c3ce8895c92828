import Testing
@_spi(Testing) @_spi(Format) import QuireKeys
import Foundation
@_spi(Format) @_spi(Crypto) import Quire

final class TemporaryDirectory {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.path + "/quire-sync-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// No flush, and torn tails cut at once (no sync tool writes into test files).
let fast = WriteOptions(synchronous: false, tornTailQuietSeconds: 0)
let t0: Int64 = 1_767_225_600_000

func bytes(_ path: String) -> [UInt8] { Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()) }

func copy(_ from: String, _ to: String) { try! FileManager.default.copyItem(atPath: from, toPath: to) }

func device(_ name: String) -> DeviceIdentity {
    try! DeviceIdentity.generate(name: name, now: t0, using: SeededRandom(label: "sync device " + name))
}

/// The sorted texts of the live entries `credential` reads at `path`.
func texts(_ path: String, _ credential: Credential) throws -> [String] {
    try Vault.open(at: path, credential: credential, writable: false, options: fast).entries().map(\.body.text).sorted()
}

/// A vault with a laptop and a phone enrolled and one entry, and a copy of
/// it (what a sync tool holds on the other device).
struct TwoCopies {
    let dir = TemporaryDirectory()
    let laptop = device("Laptop")
    let phone = device("Phone")
    let recovery: RecoveryKey
    var a: String { dir.file("Journal.quire") }
    var b: String { dir.file("Journal.sync-conflict-20261129-101530-ABCDEF1.quire") }

    init(_ label: String) throws {
        recovery = try RecoveryKey(using: SeededRandom(label: "sync recovery " + label))
        let vault = try Vault.create(
            at: dir.file("Journal.quire"), setup: VaultSetup(name: "Journal", recoveryKey: recovery, device: laptop, now: t0),
            random: SeededRandom(label: "sync " + label), options: fast)
        try vault.enrollDevice(code: phone.code, name: "Phone", now: t0 + 1)
        try vault.add(EntryBody(created: t0 + 2, text: "shared"))
        copy(dir.file("Journal.quire"), dir.file("Journal.sync-conflict-20261129-101530-ABCDEF1.quire"))
    }

    func onLaptop(_ path: String) throws -> Vault { try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast) }
    func onPhone(_ path: String) throws -> Vault { try Vault.open(at: path, credential: .device(phone.keyPair), options: fast) }
}

/// Lets a test make passphrase slots below the writer floor (2 passes over
/// 64 MiB), so Argon2id runs fast; readers accept such slots anyway.
struct WeakPassphraseCost: TestTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await SlotCrypto.$allowsWeakPassphraseCost.withValue(true) { try await function() }
    }
}

extension Trait where Self == WeakPassphraseCost {
    /// See ``WeakPassphraseCost``.
    static var weakPassphraseCost: Self { Self() }
}
