import Dispatch
@_spi(Format) import Quire
@_spi(Format) import QuireExport
import Testing

/// An export must not change state a caller shares (issue 13): two exports
/// of one vault that overlap in time leave its settings as they found them.
@Suite struct SharedStateTests {
    @Test func overlappingExportsLeaveTheVaultsSettingsAlone() throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        #expect(vault.retainsEntryBodies)
        let aStarted = DispatchSemaphore(value: 0), bStarted = DispatchSemaphore(value: 0), aDone = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        let pathA = dir.file("a.json"), pathB = dir.file("b.json")
        DispatchQueue.global().async(group: group) {
            var first = true
            _ = try? exportJournal(vault, format: .json, to: pathA) { _ in
                if first {
                    first = false
                    aStarted.signal()
                    bStarted.wait()
                }
            }
            aDone.signal()
        }
        DispatchQueue.global().async(group: group) {
            aStarted.wait()
            var first = true
            _ = try? exportJournal(vault, format: .json, to: pathB) { _ in
                if first {
                    first = false
                    bStarted.signal()
                    aDone.wait()
                }
            }
        }
        group.wait()
        // A (started first) finished first, then B: both exports ran, and
        // the vault still keeps entry bodies as it was opened to.
        #expect(vault.retainsEntryBodies)
        #expect(try vault.entries().count > 0)
    }
}
