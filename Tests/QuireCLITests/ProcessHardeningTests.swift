import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

@Suite struct ProcessHardeningTests {
    /// The shim's switch itself (the CLI calls it first thing; `coreDumpsAreOff`
    /// checks the running binary's limit from outside).
    @Test func disablingCoreDumpsSetsTheLimitAndTheDumpableFlag() throws {
        #expect(ProcessHardening.disableCoreDumps())
        #expect(ProcessHardening.coreDumpsDisabled)
    }
}
