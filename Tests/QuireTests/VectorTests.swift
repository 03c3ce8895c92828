import Foundation
import Testing
import QuireVectors

/// Every file in `Vectors/files` as one parameterized test: the library's
/// outcome must match the vector's header exactly (`Vectors/README.md`).
@Suite struct VectorTests {
    static let directory: String = {
        // Tests/QuireTests/VectorTests.swift → repository root
        let here = URL(fileURLWithPath: #filePath)
        return here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path + "/Vectors/files"
    }()

    static let names: [String] = (try? FileManager.default.contentsOfDirectory(atPath: directory))?
        .filter { $0.hasSuffix(".qv") }.sorted() ?? []

    @Test func thereAreEnoughVectors() {
        #expect(Self.names.count >= 80, "only \(Self.names.count) vectors in \(Self.directory)")
    }

    @Test(arguments: VectorTests.names)
    func vector(_ name: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.directory + "/" + name))
        let vector = try VectorFile.parse(Array(bytes))
        let dir = TemporaryDirectory()
        let outcome = Checker.outcome(of: vector, scratch: dir.file("vector.quire"))
        #expect(Checker.mismatch(vector, outcome) == nil, "\(name): \(vector.comment)")
    }
}
