import Foundation
import Quire  // alone: what an app sees
import Testing

/// A devices screen lists each enrolled device by its name and fingerprint
/// (`KeyState.devices`), with public names only (iOS trial of stop 40,
/// finding 4: a member's fingerprint had no public form): the fingerprint
/// shown for a member is the one that device shows of itself.
@Suite struct AppDevicesScreenTests {
    typealias Store = AppKeyStoreTests.KeychainLikeStore

    @Test func eachDeviceIsListedByItsNameAndTheFingerprintItShows() async throws {
        let dir = TemporaryDirectory()
        let (laptopStore, phoneStore) = (Store(), Store())
        let laptop = try laptopStore.loadOrCreate(name: "Laptop").0
        let phone = try phoneStore.loadOrCreate(name: "Phone").0
        let vault = try await Vault.create(
            at: dir.file("Journal.quire"), setup: VaultSetup(name: "Journal", recoveryKey: try RecoveryKey()), store: laptopStore)
        try await vault.enrollDevice(code: phone.code, name: "iPhone")
        let devices = try await vault.keyState().devices
        #expect(devices.map(\.name).sorted() == ["Laptop", "iPhone"])
        #expect(devices.first { $0.name == "Laptop" }?.fingerprint == laptop.fingerprint)
        #expect(devices.first { $0.name == "iPhone" }?.fingerprint == phone.fingerprint)
        #expect(try DeviceCode.fingerprint(ofCode: phone.code) == phone.fingerprint)
        #expect(laptop.fingerprint != phone.fingerprint && phone.fingerprint.count == 19)
    }
}
