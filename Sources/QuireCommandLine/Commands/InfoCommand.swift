import Foundation
@_spi(Crypto) @_spi(Format) import Quire
import QuireSystem

/// `quire info [VAULT]`: what the file shows without any key.
struct InfoCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "info", abstract: "what the file shows without a key",
        discussion: """
            Needs no key: reads only what anyone holding the file can read
            (Spec/threat-model.md §2).

            The keyring shown is the head of the keyring chain (the newest key
            change); keyrings in a torn tail after the last commit do not count.
            """,
        json: InfoJSON.self, section: .file)

    @VaultArgument var vault: String
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        try Unlock.requireVault(vault)
        let s: VaultStructure
        do { s = try VaultScanner.scan(path: vault) } catch {
            if case .damagedHeader(let reason) = VaultError.diagnosing(error, path: vault) {
                throw CLIFailure(
                    "\(vault) is a Quire vault whose header is damaged: \(reason)",
                    hint: "restore it from a copy (another device's copy, or a backup); 'quire verify' says the same",
                    code: "header_damaged")
            }
            throw CLIFailure(
                "\(vault) is not a readable Quire vault: \(error.description)", hint: CLIFailure.hint(for: error, path: vault),
                code: error.code)
        }
        var byKind: [String: Int] = [:]
        var epochs = Set<UInt32>()
        var framesByKey: [KeyID: Int] = [:]
        var streams = Set<StreamID>()
        // Keyrings: only committed ones (a torn tail's are not part of the vault),
        // each once (it is stored twice, under the same id: its frame trailer).
        var keyrings: [(id: [UInt8], ring: KeyringRecord)] = []
        for (index, f) in s.frames.enumerated() {
            byKind[f.header.kind.description, default: 0] += 1
            if index < s.committedFrameCount { framesByKey[f.header.keyID, default: 0] += 1 }
            if let chunk = f.chunk { streams.insert(chunk.stream) }
            if index < s.committedFrameCount, f.header.kind == .keyring, !keyrings.contains(where: { $0.id == f.trailer }),
                let body = f.plaintextBody, let ring = try? KeyringRecord(body: body, location: f.location)
            {
                keyrings.append((f.trailer, ring))
                // Epoch numbers are public in keyrings (frame headers carry key ids).
                epochs.insert(ring.epoch)
            }
        }
        // Each key id with the epoch of the keyrings whose key commitment it
        // begins (Spec/format.md §5.1, §14); nil when no keyring defines it.
        let keys = framesByKey.keys.sorted().map { id -> InfoJSON.Key in
            let defining = Set(keyrings.filter { KeyID(commitment: $0.ring.publicPart.keyCommit) == id }.map(\.ring.epoch))
            return InfoJSON.Key(keyID: id.description, epoch: defining.min(), frames: framesByKey[id] ?? 0)
        }
        let heads = Self.keyringHeads(keyrings)
        // The head with the highest epoch (the last in the file among equals).
        let latest = heads.enumerated().max { a, b in
            a.element.epoch != b.element.epoch ? a.element.epoch < b.element.epoch : a.offset < b.offset
        }?.element
        var slots: [String: Int] = [:]
        for slot in latest?.publicPart.slots ?? [] { slots[slot.kind, default: 0] += 1 }
        let passphrases = (latest?.publicPart.slots ?? []).compactMap { slot -> InfoJSON.Passphrase? in
            if case .passphrase(_, let ops, let mem, _, _) = slot { return InfoJSON.Passphrase(opsLimit: ops, memLimitBytes: mem) }
            return nil
        }
        let copyDamaged: Bool
        if case .copyDamaged = s.headerDamage { copyDamaged = true } else { copyDamaged = false }
        let out = c.out
        out.line("\(vault): Quire vault, format version \(s.header.version)")
        out.line("vault id:     \(s.header.vaultID)")
        out.line("size:         \(formatBytes(s.fileSize)) (\(s.fileSize) bytes)")
        let kinds = byKind.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        out.line("frames:       \(s.frames.count) in \(plural(s.groups.count, "commit"))\(kinds.isEmpty ? "" : ": " + kinds)")
        out.line("epochs:       \(epochs.isEmpty ? "none" : epochs.sorted().map(String.init).joined(separator: ", "))")
        let keyText = keys.map { k in "\(k.keyID) (\(k.epoch.map { "epoch \($0)" } ?? "no keyring"), \(plural(k.frames, "frame")))" }
        out.line("key ids:      \(keyText.isEmpty ? "none" : keyText.joined(separator: ", "))")
        out.line("attachments:  \(plural(streams.count, "chunk stream")) (sizes to within 64 KiB)")
        if let latest {
            let slotText = slots.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            out.line(
                "keyrings:     \(keyrings.count) (each stored twice); the newest, epoch \(latest.epoch) (key id \(KeyID(commitment: latest.publicPart.keyCommit))), has key slots: \(slotText)"
            )
            if heads.count > 1 {
                out.line("key heads:    \(heads.count) concurrent keyrings (copies changed keys apart; the next key change joins them)")
            }
            out.line("escrow-free:  \(latest.publicPart.isEscrowFree ? "yes" : "no")")
            for p in passphrases { out.line("passphrase:   Argon2id, \(p.opsLimit) passes, \(formatBytes(p.memLimitBytes))") }
        } else {
            out.line("keyrings:     none intact")
        }
        if s.tailByteCount > 0 {
            out.line("torn tail:    \(s.tailByteCount) bytes after the last commit (ignored; cut off at the next write)")
        }
        for leftover in RewriteLeftovers.stale(besideVault: vault) { out.line("leftover:     \(RewriteLeftovers.describe(leftover))") }
        if !s.damagedRegions.isEmpty { out.line("damage:       \(plural(s.damagedRegions.count, "damaged region")); run 'quire verify'") }
        if copyDamaged { out.line("header:       one of its two copies is damaged; the other was used") }
        out.line("Not visible without a key: text, dates, tags, places, names, attachments' content and types, device names.")
        out.emit(
            InfoJSON(
                path: vault, formatVersion: Int(s.header.version), vaultID: s.header.vaultID.description, fileBytes: s.fileSize,
                frames: s.frames.count,
                framesByKind: NamedMap(values: byKind, keyName: "kind", valueName: "count"), commits: s.groups.count,
                epochs: epochs.sorted(), keys: keys,
                attachmentStreams: streams.count, keyrings: keyrings.count, keyringHeads: heads.count,
                latestKeyring: latest.map {
                    InfoJSON.Keyring(
                        epoch: $0.epoch, keyID: KeyID(commitment: $0.publicPart.keyCommit).description,
                        slots: NamedMap(values: slots, keyName: "kind", valueName: "count"),
                        escrowFree: $0.publicPart.isEscrowFree,
                        passphrases: passphrases)
                }, tornTailBytes: s.tailByteCount, damagedRegions: s.damagedRegions.count, headerCopyDamaged: copyDamaged))
        return .success
    }

    /// The keyrings no other keyring in `keyrings` names as a parent (the
    /// heads of the keyring chain, `Spec/keys.md §5`), in file order. Read
    /// from the public parts only: without a key nothing tells a genuine
    /// keyring from an appended one.
    static func keyringHeads(_ keyrings: [(id: [UInt8], ring: KeyringRecord)]) -> [KeyringRecord] {
        var named = Set<[UInt8]>()
        for k in keyrings { for p in k.ring.publicPart.parents { named.insert(p.bytes) } }
        return keyrings.filter { !named.contains($0.id) }.map(\.ring)
    }
}

/// What `quire info --json` prints.
struct InfoJSON: JSONShape {
    struct Passphrase: Encodable {
        let opsLimit: UInt64
        let memLimitBytes: UInt64
    }

    /// One key id found in committed frame headers.
    struct Key: Encodable {
        let keyID: String
        /// The epoch of the keyring whose key commitment the id begins; nil
        /// when no committed keyring defines it.
        @OrNull var epoch: UInt32?
        let frames: Int
    }

    struct Keyring: Encodable {
        let epoch: UInt32
        let keyID: String
        let slots: NamedMap<Int>
        let escrowFree: Bool
        let passphrases: [Passphrase]
    }

    let path: String
    let formatVersion: Int
    let vaultID: String
    let fileBytes: UInt64
    let frames: Int
    let framesByKind: NamedMap<Int>
    let commits: Int
    let epochs: [UInt32]
    let keys: [Key]
    let attachmentStreams: Int
    let keyrings: Int
    let keyringHeads: Int
    @OrNull var latestKeyring: Keyring?
    let tornTailBytes: UInt64
    let damagedRegions: Int
    let headerCopyDamaged: Bool

    static var example: InfoJSON {
        InfoJSON(
            path: "", formatVersion: 2, vaultID: "", fileBytes: 0, frames: 0,
            framesByKind: NamedMap(values: [:], keyName: "kind", valueName: "count"),
            commits: 0, epochs: [], keys: [Key(keyID: "", epoch: 1, frames: 0)], attachmentStreams: 0, keyrings: 0, keyringHeads: 0,
            latestKeyring: Keyring(
                epoch: 1, keyID: "", slots: NamedMap(values: [:], keyName: "kind", valueName: "count"), escrowFree: false,
                passphrases: [Passphrase(opsLimit: 0, memLimitBytes: 0)]), tornTailBytes: 0, damagedRegions: 0, headerCopyDamaged: false)
    }
}
