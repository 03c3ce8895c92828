import Foundation
import Testing
@_spi(Format) import Quire
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
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
    /// from scratch. The input is a format-1 file: it is now refused at the
    /// header, before any key is tried (`Spec/format.md §3`).
    @Test func keyringEvaluatorCrash() throws {
        let vector = try Self.load("keyring-evaluator-crash.qv")
        let dir = TemporaryDirectory()
        let path = dir.file("v.quire")
        _ = FileManager.default.createFile(atPath: path, contents: Data(vector.body))
        #expect(throws: FormatError.unsupportedVersion(1)) { try VaultFile(path: path, writable: false) }
    }
}
