@_spi(Crypto) import QuireCrypto
@_spi(Format) public import QuireFormat

/// Who can decrypt which records of a vault, derived from the file alone
/// (`Spec/keys.md §8`): what `quire keys status` prints.
///
/// A key can decrypt the records of epoch `e` when it has a slot in a
/// trusted keyring whose epoch is `e` or whose history carries `e`'s key.
/// Records are counted from the frame headers (committed entry revisions and
/// attachment manifests, by epoch). Keys that can read older records but
/// not new ones — a removed device, a former passphrase, an escrow key
/// turned off — keep that power over those records until
/// `quire compact --rekey` re-encrypts them, and the statement says so.
public struct PrivacyStatement: Sendable {
    /// A key that can decrypt something.
    @_spi(Format) public struct Reader: Sendable, Hashable {
        /// What kind of key.
        public enum Kind: Int, Sendable, Hashable, Comparable {
            /// An enrolled device, the recovery key, a passphrase or an escrow recipient.
            case device, recovery, passphrase, escrow
            public static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
        }
        /// What kind of key.
        public let kind: Kind
        /// The Ed25519 key of a device or the recovery key; the X25519 key of
        /// a passphrase or an escrow recipient.
        public let publicKey: [UInt8]
        /// The device's name or the escrow recipient's label (empty otherwise).
        public let name: String
        /// When the key was taken out of use (device removed, passphrase
        /// replaced or removed, escrow key removed): milliseconds, UTC.
        public let retiredAt: Int64?
        /// For a retired passphrase or recovery key: true when it was replaced by another.
        public let replaced: Bool
        /// True for the device this statement was made on.
        public let isThisDevice: Bool
        /// Order of first appearance, to list readers stably.
        let order: Int

        /// The reader in plain words, such as `the device "Laptop" (this device)`.
        public var phrase: String {
            var s: String
            switch kind {
            case .device: s = "the device \"\(name)\""
            case .recovery: s = retiredAt == nil ? "the recovery key" : "a former recovery key"
            case .passphrase: s = retiredAt == nil ? "the passphrase" : "a former passphrase"
            case .escrow: s = name.isEmpty ? "an escrow key" : "the escrow key \"\(name)\""
            }
            var notes: [String] = []
            if isThisDevice { notes.append("this device") }
            if let at = retiredAt {
                let verb = (kind == .passphrase || kind == .recovery) && replaced ? "replaced" : "removed"
                notes.append("\(verb) \(PrivacyStatement.date(at))")
            }
            if !notes.isEmpty { s += " (" + notes.joined(separator: ", ") + ")" }
            return s
        }
    }

    /// Records of a run of epochs that the same extra keys can read.
    @_spi(Format) public struct Group: Sendable {
        /// The epochs, lowest to highest.
        public let epochs: ClosedRange<UInt32>
        /// When the first of them began, and when the one after the last
        /// began (nil for the current epoch): milliseconds, UTC.
        public let from: Int64, until: Int64?
        /// Committed entry revisions sealed under these epochs.
        public let entryRevisions: Int
        /// Committed attachments (manifests) sealed under these epochs.
        public let attachments: Int
        /// Keys that can read these records besides those that read new ones.
        public let extraReaders: [Reader]
    }

    /// The journal's name (from the profile), or empty.
    @_spi(Format) public let vaultName: String
    /// The vault id.
    @_spi(Format) public let vaultID: VaultID
    /// True when the vault is escrow-free.
    @_spi(Format) public let isEscrowFree: Bool
    /// When escrow-free mode began: milliseconds, UTC (nil when not escrow-free).
    @_spi(Format) public let escrowFreeSince: Int64?
    /// The epoch new records are sealed under.
    @_spi(Format) public let currentEpoch: UInt32
    /// A newer epoch the credential cannot open (it was removed, or is
    /// behind, `Spec/format.md §8.6`), if any: the statement then shows
    /// only what this credential can see.
    @_spi(Format) public let unreadableNewerEpoch: UInt32?
    /// When the current epoch began: milliseconds, UTC.
    @_spi(Format) public let currentSince: Int64
    /// The keys that can decrypt new records.
    @_spi(Format) public let currentReaders: [Reader]
    /// Records already in the file, grouped by the extra keys that can read them.
    @_spi(Format) public let groups: [Group]
    /// Things that weaken the statement, in plain words (a slot for a key the
    /// keyring does not name, a suspected rollback).
    @_spi(Format) public let notes: [String]

    /// Derives the statement.
    ///
    /// - Parameters:
    ///   - unlocked: the keys and keyrings a credential reached (a device, the
    ///     recovery key or a passphrase — any that opens the current keyring).
    ///   - structure: the scanned file, for the record counts.
    ///   - vaultName: the journal's name, or empty.
    ///   - thisDevice: this device's Ed25519 public key, to mark it.
    ///   - warnings: key warnings to repeat, such as a suspected rollback.
    /// - Throws: ``KeyError/operationRefused(reason:)`` when no keyring is trusted.
    package init(
        unlocked: UnlockedKeys, structure: VaultStructure, vaultName: String, thisDevice: [UInt8]?, warnings: [KeyError] = []
    ) throws(KeyError) {
        let vaultID = structure.header.vaultID
        let state = try KeyState(unlocked, vaultID: vaultID)
        self.vaultName = vaultName
        self.vaultID = vaultID
        isEscrowFree = state.isEscrowFree
        let trusted = state.trusted

        // When each key was taken out of use, and in which keyring.
        var removedAt: [[UInt8]: Int64] = [:]
        var retiredAt: [[UInt8]: (Int64, replaced: Bool)] = [:]
        for ring in trusted {
            let c = ring.content!
            for m in c.removed where removedAt[m.publicKey] == nil { removedAt[m.publicKey] = c.created }
            let hasPassphrase = ring.record.publicPart.slots.contains { if case .passphrase = $0 { true } else { false } }
            for k in c.retired where retiredAt[k] == nil { retiredAt[k] = (c.created, hasPassphrase) }
        }
        // A recovery key is replaced by the first keyring (oldest first) that
        // names another recovery key and not it.
        var recoverySeen: Set<[UInt8]> = []
        for ring in trusted {
            let c = ring.content!
            let listed = Set(c.members.filter { $0.role == "recovery" }.map(\.publicKey))
            for k in recoverySeen where !listed.contains(k) && !listed.isEmpty && retiredAt[k] == nil { retiredAt[k] = (c.created, true) }
            recoverySeen.formUnion(listed)
        }
        escrowFreeSince = isEscrowFree ? trusted.filter { $0.record.publicPart.isEscrowFree }.map { $0.content!.created }.min() : nil

        // Each keyring's readers, and the epochs it reaches.
        let trustedByID = Dictionary(trusted.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var reachMemo: [KeyringID: Set<UInt32>] = [:]
        func ancestorEpochs(_ ring: KeyringInfo) -> Set<UInt32> {
            if let known = reachMemo[ring.id] { return known }
            var set: Set<UInt32> = [ring.epoch]
            for p in ring.parents { if let parent = trustedByID[p] { set.formUnion(ancestorEpochs(parent)) } }
            reachMemo[ring.id] = set
            return set
        }
        var order = 0
        var known: [String: Reader] = [:]
        func reader(_ kind: Reader.Kind, _ key: [UInt8], _ name: String) -> Reader {
            let id = "\(kind.rawValue):" + hex(key)
            if let r = known[id] { return r }
            let retired: (Int64, replaced: Bool)? = kind == .device ? removedAt[key].map { ($0, false) } : retiredAt[key]
            let r = Reader(
                kind: kind, publicKey: key, name: name, retiredAt: retired?.0, replaced: retired?.replaced ?? false,
                isThisDevice: kind == .device && key == thisDevice, order: order)
            order += 1
            known[id] = r
            return r
        }
        // Names from the newest keyring that lists a key.
        var names: [[UInt8]: String] = [:]
        for ring in trusted {
            for m in ring.content!.members + ring.content!.removed { names[m.publicKey] = Self.printable(m.name) }
            for e in ring.content!.escrow { names[e.publicKey] = Self.printable(e.label) }
        }
        var readersByEpoch: [UInt32: Set<Reader>] = [:]
        var notes: [String] = []
        for ring in trusted {
            let c = ring.content!
            var readers: [Reader] = []
            for m in c.members {
                switch m.role {
                case "device": readers.append(reader(.device, m.publicKey, names[m.publicKey] ?? Self.printable(m.name)))
                case "recovery": readers.append(reader(.recovery, m.publicKey, ""))
                default: break
                }
            }
            var deviceSlots = 0
            var recoverySlots = 0
            var escrowSlots = 0
            for slot in ring.record.publicPart.slots {
                switch slot {
                case .device: deviceSlots += 1
                case .recovery: recoverySlots += 1
                case .escrow: escrowSlots += 1
                case .passphrase(_, _, _, let publicKey, _): readers.append(reader(.passphrase, publicKey, ""))
                case .unknown: break
                }
            }
            for e in c.escrow where escrowSlots > 0 {
                readers.append(reader(.escrow, e.publicKey, names[e.publicKey] ?? Self.printable(e.label)))
            }
            let deviceMembers = c.members.filter { $0.role == "device" }.count
            let recoveryMembers = c.members.filter { $0.role == "recovery" }.count
            if deviceSlots > deviceMembers || recoverySlots > recoveryMembers || escrowSlots > c.escrow.count {
                notes.append(
                    "The keyring of epoch \(ring.epoch) made \(Self.date(c.created)) has more key slots than the keys it names (\(deviceSlots) device, \(recoverySlots) recovery, \(escrowSlots) escrow slots for \(deviceMembers) devices, \(recoveryMembers) recovery keys, \(c.escrow.count) escrow keys): someone not listed here may be able to decrypt epoch \(ring.epoch) and earlier."
                )
            }
            let unknownSlots = ring.record.publicPart.slots.filter { if case .unknown = $0 { true } else { false } }.count
            if unknownSlots > 0 {
                notes.append(
                    "The keyring of epoch \(ring.epoch) has \(unknownSlots) key slot\(unknownSlots == 1 ? "" : "s") of a kind this version does not know; whoever holds \(unknownSlots == 1 ? "it" : "them") can decrypt epoch \(ring.epoch) and earlier."
                )
            }
            // A keyring reaches its own epoch and, through the parent keys it
            // carries, every epoch of its ancestors.
            for e in ancestorEpochs(ring) { readersByEpoch[e, default: []].formUnion(readers) }
        }

        // The current epoch and its readers.
        currentEpoch = state.epoch
        unreadableNewerEpoch = unlocked.unreadableNewerEpoch
        currentSince = trusted.filter { $0.epoch == state.epoch }.map { $0.content!.created }.min() ?? 0
        let current = readersByEpoch[state.epoch] ?? []
        currentReaders = current.sorted(by: Self.listOrder)

        // Records by epoch, from the frame headers.
        var revisions: [UInt32: Int] = [:]
        var attachments: [UInt32: Int] = [:]
        var unheldRevisions = 0
        var unheldAttachments = 0
        for frame in structure.frames[0..<structure.committedFrameCount] where frame.malformation == nil && frame.header.isSealed {
            guard let epoch = unlocked.keys.keys(for: frame.header.keyID).map(\.epoch).max() else {
                // Sealed under a key this credential does not hold: counted,
                // not dropped, though who reads it cannot be said here.
                if frame.header.kind == .entryRevision { unheldRevisions += 1 }
                if frame.header.kind == .blobManifest { unheldAttachments += 1 }
                continue
            }
            if frame.header.kind == .entryRevision { revisions[epoch, default: 0] += 1 }
            if frame.header.kind == .blobManifest { attachments[epoch, default: 0] += 1 }
        }
        if unheldRevisions + unheldAttachments > 0 {
            var what: [String] = []
            if unheldRevisions > 0 { what.append("\(unheldRevisions) entry revision\(unheldRevisions == 1 ? "" : "s")") }
            if unheldAttachments > 0 { what.append("\(unheldAttachments) attachment\(unheldAttachments == 1 ? "" : "s")") }
            notes.append(
                "\(what.joined(separator: " and ")) in the file \(unheldRevisions + unheldAttachments == 1 ? "is" : "are") sealed under keys this key does not hold: this statement cannot say who can decrypt \(unheldRevisions + unheldAttachments == 1 ? "it" : "them")."
            )
        }
        var started: [UInt32: Int64] = [:]
        for ring in trusted { started[ring.epoch] = min(started[ring.epoch] ?? .max, ring.content!.created) }

        // Group consecutive epochs (newest first) whose extra readers are the same.
        let epochs = Set(revisions.keys).union(attachments.keys).union(readersByEpoch.keys).sorted(by: >)
        var groups: [Group] = []
        var i = 0
        while i < epochs.count {
            let extra = (readersByEpoch[epochs[i]] ?? []).subtracting(current)
            var j = i
            while j + 1 < epochs.count && (readersByEpoch[epochs[j + 1]] ?? []).subtracting(current) == extra { j += 1 }
            // The run, narrowed to the epochs that hold records.
            let holding = epochs[i...j].filter { (revisions[$0] ?? 0) + (attachments[$0] ?? 0) > 0 }
            if let high = holding.first, let low = holding.last {
                let run = low...high
                let rev = run.reduce(0) { $0 + (revisions[$1] ?? 0) }
                let att = run.reduce(0) { $0 + (attachments[$1] ?? 0) }
                let above = epochs.filter { $0 > high }.min()
                groups.append(
                    Group(
                        epochs: run, from: started[low] ?? 0, until: high >= state.epoch ? nil : above.flatMap { started[$0] },
                        entryRevisions: rev, attachments: att, extraReaders: extra.sorted(by: Self.listOrder)))
            }
            i = j + 1
        }
        self.groups = groups
        if let removed = unlocked.removedIn {
            notes.append(
                "This key is listed as removed in the keyring of epoch \(removed.epoch). This statement shows only what this key can see; ask an enrolled device for the current one."
            )
        } else if let newest = unlocked.newerKeyrings.max(by: { $0.epoch < $1.epoch }) {
            // Name the member who made it (Spec/format.md §8.6): the user
            // who does not trust that member knows whom to remove.
            let maker = newest.signer.map(Self.phrase(for:)) ?? "a member"
            notes.append(
                "This key cannot open epoch \(newest.epoch), which \(maker) made: this key was removed, or left out of it. This statement shows only what this key can see; ask an enrolled device for the current one."
            )
        }
        for w in warnings where w.code == "rollback_suspected" {
            notes.append(w.description.prefix(1).uppercased() + w.description.dropFirst() + ".")
        }
        self.notes = notes
    }

    /// How a keyring member is named in messages: `the recovery key` or
    /// `the device "Name"`, its name made ``printable(_:)``.
    @_spi(Format) public static func phrase(for member: KeyringMember) -> String {
        member.role == "recovery" ? "the recovery key" : "the device \"\(printable(member.name))\""
    }

    /// A name from the file as it may be printed: any control, format or
    /// line-separator character (which a hostile keyring could use to forge
    /// lines of this statement) becomes `\u{XXXX}`, and names are cut at 64
    /// characters (`Spec/keys.md §8`).
    static func printable(_ name: String) -> String {
        var out = ""
        for (i, s) in name.unicodeScalars.enumerated() {
            if i == 64 {
                out += "…"
                break
            }
            if DeviceIdentity.isLineBreaking(s) {
                out += "\\u{" + String(s.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(s)
            }
        }
        return out
    }

    static func listOrder(_ a: Reader, _ b: Reader) -> Bool {
        if (a.retiredAt == nil) != (b.retiredAt == nil) { return a.retiredAt == nil }
        if a.kind != b.kind { return a.kind < b.kind }
        return a.order < b.order
    }

    /// A UTC date such as `2026-11-29`.
    static func date(_ milliseconds: Int64) -> String {
        let (y, m, d) = CivilCalendar.date(fromDays: CivilCalendar.floorDivide(milliseconds, 86_400_000).quotient)
        func pad(_ v: Int, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))"
    }

    static func count(_ n: Int, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }

    static func records(_ revisions: Int, _ attachments: Int) -> String {
        var parts: [String] = []
        if revisions > 0 || attachments == 0 { parts.append(count(revisions, "entry revision", "entry revisions")) }
        if attachments > 0 { parts.append(count(attachments, "attachment", "attachments")) }
        return parts.joined(separator: " and ")
    }

    /// The statement in plain words, one fact per line, dates in UTC.
    public var text: String {
        var lines: [String] = []
        let title = vaultName.isEmpty ? "This vault" : "\"\(Self.printable(vaultName))\""
        lines.append("\(title) (vault \(hex(vaultID.bytes))): who can decrypt it. Dates are UTC.")
        if let since = escrowFreeSince {
            lines.append(
                "Escrow-free since \(Self.date(since)): no escrow key can decrypt what is written from then on, and none can be added.")
        } else {
            lines.append("Standard mode: an enrolled device or the recovery key may add an escrow key. None is set.")
            if let escrow = currentReaders.first(where: { $0.kind == .escrow }) {
                lines[lines.count - 1] = "Standard mode: \(escrow.phrase) can decrypt everything listed below as readable by it."
            }
        }
        lines.append("")
        if unreadableNewerEpoch != nil {
            lines.append(
                "The newest epoch this key can open (epoch \(currentEpoch), since \(Self.date(currentSince))) can be decrypted with:")
        } else {
            lines.append("New records (epoch \(currentEpoch), since \(Self.date(currentSince))) can be decrypted with:")
        }
        for r in currentReaders { lines.append("  - \(r.phrase)") }
        lines.append("")
        if groups.isEmpty {
            lines.append("The file holds no entries or attachments yet.")
        } else {
            lines.append("Records already in the file:")
            for g in groups {
                let epochs = g.epochs.count == 1 ? "epoch \(g.epochs.lowerBound)" : "epochs \(g.epochs.lowerBound)–\(g.epochs.upperBound)"
                let span =
                    g.until.map { until in
                        Self.date(g.from) == Self.date(until) ? " (\(Self.date(g.from)))" : " (\(Self.date(g.from)) to \(Self.date(until)))"
                    } ?? (g.epochs.count > 1 ? " (since \(Self.date(g.from)))" : "")
                let what = Self.records(g.entryRevisions, g.attachments)
                if g.extraReaders.isEmpty {
                    lines.append("  - \(what) in \(epochs)\(span): the same keys as new records.")
                } else {
                    lines.append("  - \(what) in \(epochs)\(span): the same keys as new records, and also:")
                    for r in g.extraReaders { lines.append("      - \(r.phrase)") }
                    lines.append(
                        "    \(g.extraReaders.count == 1 ? "This key" : "These keys") can read \(g.entryRevisions + g.attachments == 1 ? "that record" : "those records") until the vault is compacted with a rekey."
                    )
                }
            }
        }
        if !notes.isEmpty {
            lines.append("")
            lines.append("Notes:")
            for n in notes { lines.append("  - \(n)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
