import Testing
import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Testing) @_spi(Format) import QuireKeys

/// Helpers shared by the key tests (`KeyScenarioTests`, `KeyAttackTests`).
enum KeyTestSupport {
    /// 2026-01-01 00:00 UTC, in milliseconds.
    static let t0: Int64 = 1_767_225_600_000
    /// One day in milliseconds.
    static let day: Int64 = 86_400_000

    /// A passphrase (or any secret) in guarded memory.
    static func secret(_ text: String) -> SecureBytes {
        var bytes = Array(text.utf8)
        return try! SecureBytes(consuming: &bytes)
    }

    /// The texts of the entries `credential` can read at `path`, sorted.
    static func texts(_ path: String, _ credential: Credential) throws -> [String] {
        try Vault.open(at: path, credential: credential, writable: false, options: fast).entries().map(\.body.text).sorted()
    }

    /// Appends to `target` every committed frame of the copy at `copyPath`
    /// that `target` lacks, in one commit: the union merge in its simplest
    /// form (enough to bring two keyring heads together; issue 4 brings the
    /// real one).
    static func fold(_ copyPath: String, into target: Vault) throws {
        let copy = try VaultFile(path: copyPath, writable: false)
        let have = Set(target.file.structure.frames.map { $0.headerBytes + $0.trailer })
        var carry: [[UInt8]] = []
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: copyPath)))
        for frame in copy.structure.frames[0..<copy.structure.committedFrameCount] where !frame.isCommit {
            guard !have.contains(frame.headerBytes + frame.trailer) else { continue }
            carry.append(Array(bytes[Int(frame.location.offset)..<Int(frame.end)]))
        }
        try target.file.commit(random: SeededRandom(label: "fold"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            for frame in carry { try tx.appendRaw(frame: frame) }
        }
        try target.reload()
    }
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
