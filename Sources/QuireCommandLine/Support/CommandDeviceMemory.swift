@_spi(Format) import Quire
import Synchronization

/// The key store a command opens its vaults with: this device's key and
/// index caches come from the store on disk as they are, but the device
/// memory of each vault file (`Spec/keys.md §7`) is written once, when the
/// command ends (``flush()``), after every commit the command made — not
/// also when the vault was opened and when its index was built (issue 14:
/// each write costs an fsync of the memory file and one of its folder).
///
/// Crash safety stays that of the store's own writes: the memory never
/// gets ahead of the vault file (it is written after the commits, which
/// are flushed first), and a command killed before the end leaves the
/// memory as the previous command wrote it, which the file extends — the
/// same as a kill just before an immediate write.
final class CommandDeviceKeyStore: DeviceKeyStore, Sendable {
    let base: FileDeviceKeyStore
    /// Memories asked to be remembered and not yet written, by vault id and
    /// path, in the order first asked.
    private let pending = Mutex<[(key: String, memory: VaultMemory)]>([])

    init(base: FileDeviceKeyStore) { self.base = base }

    func load() throws(QuireError) -> DeviceIdentity? { try base.load() }

    func create(_ identity: DeviceIdentity) throws(QuireError) { try base.create(identity) }

    var indexCacheFolder: String? { base.indexCacheFolder }

    var keepsMemoryPerPath: Bool { base.keepsMemoryPerPath }

    /// What the command last asked to remember of this vault file, else
    /// what the store holds.
    func memory(of vaultID: VaultID, path: String) throws(QuireError) -> VaultMemory? {
        let key = Self.key(vaultID, path)
        if let held = pending.withLock({ list in list.first { $0.key == key }?.memory }) { return held }
        return try base.memory(of: vaultID, path: path)
    }

    /// Holds `memory` until ``flush()``. Never fails here: a failure to
    /// write is reported when the command ends.
    func remember(_ memory: VaultMemory) throws(QuireError) {
        let key = Self.key(memory.vaultID, memory.path)
        pending.withLock { list in
            if let at = list.firstIndex(where: { $0.key == key }) {
                list[at].memory = memory
            } else {
                list.append((key, memory))
            }
        }
    }

    /// Writes every memory held, each once; returns the vault paths whose
    /// memory could not be written, with why.
    func flush() -> [(path: String, error: DeviceStoreError)] {
        let list = pending.withLock { list in
            defer { list.removeAll() }
            return list
        }
        var failed: [(path: String, error: DeviceStoreError)] = []
        for (_, memory) in list {
            do throws(DeviceStoreError) { try base.writeMemory(memory) } catch { failed.append((memory.path, error)) }
        }
        return failed
    }

    private static func key(_ vaultID: VaultID, _ path: String) -> String { vaultID.description + "\u{0}" + path }
}
