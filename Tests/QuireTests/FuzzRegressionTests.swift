import Foundation
import Testing
import Quire
import QuireFormat
import QuireKeys
import QuireVectors

/// Inputs the fuzzers found that once crashed the library. Each must now
/// give a typed result (an error or an opened vault), never a crash.
@Suite struct FuzzRegressionTests {
    static let directory: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path + "/Fixtures/fuzz"
    }()

    static func load(_ name: String) throws -> VectorFile {
        try VectorFile.parse(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))))
    }

    /// fuzz-vault, 2026-11-29: this input crashed the fuzz binary in
    /// `KeyringEvaluator.unlock` (a SEGV releasing a `KeyError`). The cause
    /// was a stale incremental fuzz build (a module compiled against an
    /// older `KeyError` layout), not the library; `make fuzz` now builds
    /// from scratch. The input was made before recovery slots became sealed
    /// boxes, so its keyring is now malformed for its slot layout; the path
    /// it once exercised (a slot opens, the sealed part does not) has its
    /// own test in `KeyringEvaluatorTests`.
    @Test func keyringEvaluatorCrash() throws {
        let vector = try Self.load("keyring-evaluator-crash.qv")
        let dir = TemporaryDirectory()
        let path = dir.file("v.quire")
        _ = FileManager.default.createFile(atPath: path, contents: Data(vector.body))
        let file = try VaultFile(path: path, writable: false)
        let recovery = try RecoveryKey(code: vector.recoveryKey!)
        #expect(throws: KeyError.self) { try KeyringEvaluator.unlock(file, with: .recoveryKey(recovery)) }
        do {
            _ = try KeyringEvaluator.unlock(file, with: .recoveryKey(recovery))
        } catch {
            #expect(error.code == "malformed_keyring")
            #expect(error.description.contains("recovery slot needs a 98-byte \"box\""))
        }
    }
}
