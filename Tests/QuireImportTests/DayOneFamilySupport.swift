import Foundation
@_spi(Format) import Quire
import QuireDayOne
import QuireExport
import QuireImport
import QuireZip
import Testing

/// The families of issue 16, each from public bug reports against other
/// tools that read Day One exports (`Tests/Fixtures/import/dayone-families/*.md`
/// say which reports and what is expected).
let familiesFolder = importFixtures + "/dayone-families"

/// Every entry of `vault` by its Day One uuid (uppercase hex of the id).
func bodies(_ vault: Vault) throws -> [String: EntryBody] {
    try entriesByUUID(vault).mapValues(\.body)
}

func uuid(_ family: Int, _ n: Int) -> String { "0FA\(family)" + String(format: "%028X", n) }
func identifier(_ family: Int, _ n: Int) -> String { "F\(family)ED" + String(format: "%028X", n) }
func md5(_ family: Int, _ n: Int) -> String { "f\(family)a0" + String(format: "%028x", n) }
