import Foundation
import Quire  // alone: what an app sees
import Testing

/// iOS review 29 §2 item 7 and §4 item 5: a conflict screen shows each
/// version of an entry with its text, its time and the device that wrote
/// it ("iPhone's version, 10:32"), with public names only.
@Suite struct EntryVersionTests {
    typealias Store = AppKeyStoreTests.KeychainLikeStore

    @Test func twoDevicesEditOneEntryApartAndBothVersionsNameTheirDeviceAndTime() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let phonePath = dir.file("phone.quire")
        let (laptopStore, phoneStore) = (Store(), Store())
        _ = try laptopStore.loadOrCreate(name: "Laptop")
        let phoneCode = try phoneStore.loadOrCreate(name: "Phone's own name").0.code
        let recovery = try RecoveryKey()
        let laptop = try await Vault.create(at: path, setup: VaultSetup(name: "Journal", recoveryKey: recovery), store: laptopStore)
        try await laptop.enrollDevice(code: phoneCode, name: "iPhone")
        let base = try await laptop.commit { tx in try tx.add(EntryBody(created: Date(), text: "A walk.")) }
        let id = base.entryID
        #expect(try await laptop.versions(of: id).map(\.deviceName) == ["Laptop"])

        // The phone edits its copy of the file while the laptop edits its own.
        try FileManager.default.copyItem(atPath: path, toPath: phonePath)
        let phone = try await Vault.open(at: phonePath, store: phoneStore)
        let phoneStart = Date()
        try await phone.commit { tx in try tx.edit(id, body: EntryBody(created: Date(), text: "A walk by the river."), replacing: [base.revisionID]) }
        let phoneEnd = Date()
        try await Task.sleep(for: .milliseconds(5))
        let laptopStart = Date()
        try await laptop.commit { tx in try tx.edit(id, body: EntryBody(created: Date(), text: "A walk in the rain."), replacing: [base.revisionID]) }
        let laptopEnd = Date()
        _ = try await laptop.merge(copyAt: phonePath)

        let entry = try #require(try await laptop.entry(id))
        let versions = try await laptop.versions(of: id)
        #expect(versions.count == 2)
        // The shown version first, then the other heads in their order.
        #expect(versions.map(\.id) == [entry.revision.revisionID] + entry.conflictingHeads)
        #expect(versions.first?.body == entry.body)
        let fromPhone = try #require(versions.first { $0.body.text == "A walk by the river." })
        let fromLaptop = try #require(versions.first { $0.body.text == "A walk in the rain." })
        #expect(fromPhone.deviceName == "iPhone")  // the name the keyring gave it
        #expect(fromLaptop.deviceName == "Laptop")
        #expect(!fromPhone.isDeleted && !fromLaptop.isDeleted)
        // Each version's time is when it was written, to the millisecond.
        #expect(fromPhone.modified >= phoneStart.addingTimeInterval(-0.001) && fromPhone.modified <= phoneEnd)
        #expect(fromLaptop.modified >= laptopStart.addingTimeInterval(-0.001) && fromLaptop.modified <= laptopEnd)
        #expect(fromPhone.modified < fromLaptop.modified)

        // Resolving replaces every version's revision: one version is left.
        let resolved = try await laptop.commit { tx in
            try tx.edit(id, body: EntryBody(created: Date(), text: "A walk by the river, in the rain."), replacing: versions.map(\.id))
        }
        let after = try await laptop.versions(of: id)
        #expect(after.map(\.id) == [resolved.revisionID])
        #expect(after.map(\.deviceName) == ["Laptop"])
        #expect(after.first?.body.text == "A walk by the river, in the rain.")
    }

    @Test func aVersionNoDeviceWroteNamesNoDeviceAndADeletionIsAVersion() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let copy = dir.file("copy.quire")
        let store = Store()
        _ = try store.loadOrCreate(name: "Laptop")
        let recovery = try RecoveryKey()
        let laptop = try await Vault.create(at: path, setup: VaultSetup(name: "Journal", recoveryKey: recovery), store: store)
        let base = try await laptop.commit { tx in try tx.add(EntryBody(created: Date(), text: "Draft")) }
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        // Written with the recovery key, not by a device.
        let rescue = try await Vault.open(at: copy, credential: .recoveryKey(recovery))
        try await rescue.commit { tx in try tx.edit(base.entryID, body: EntryBody(created: Date(), text: "Draft, recovered"), replacing: [base.revisionID]) }
        try await laptop.commit { tx in try tx.delete(base.entryID) }
        _ = try await laptop.merge(copyAt: copy)

        let versions = try await laptop.versions(of: base.entryID)
        #expect(versions.count == 2)
        let recovered = try #require(versions.first { !$0.isDeleted })
        #expect(recovered.body.text == "Draft, recovered")
        #expect(recovered.deviceName == nil)
        #expect(versions.first { $0.isDeleted }?.deviceName == "Laptop")

        #expect(try await laptop.versions(of: EntryID(hex: String(repeating: "0", count: 32))!).isEmpty)
    }
}
