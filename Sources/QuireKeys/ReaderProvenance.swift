@_spi(Format) import QuireFormat

/// Who brought each reader into the key graph, for a removal by the
/// recovery key (`Spec/keys.md §6.3`, *suspects*).
///
/// A keyring *brings in* a reader — a device or recovery member, a passphrase slot's
/// key, an escrow custodian's key — that it lists and none of its parents
/// lists (a root brings in all it lists). A join or rotation by an honest
/// member carries what its parents list and brings in nothing, so judging
/// by who brought a reader in, not by who lists it, leaves a thief's
/// readers suspect even when an honest member built on them (seventeenth
/// review F2). The file cannot tell a thief's puppet from a device the user
/// enrolled on the lost one: the caller keeps what the user vouches for.
struct ReaderProvenance {
    /// A reader of the key graph, by kind and key.
    enum Reader: Hashable {
        /// A member of role `"device"` or `"recovery"`, by its Ed25519 key.
        case device([UInt8])
        /// A passphrase slot, by its X25519 `publicKey`.
        case passphrase([UInt8])
        /// An escrow custodian, by its X25519 key.
        case escrow([UInt8])
    }

    /// The targets, and every device or recovery member that only
    /// keyrings signed by a suspect brought in, but for the kept ones and
    /// the exempt key: to a fixed point, since a
    /// suspect's puppet may enrol more.
    let suspects: Set<[UInt8]>
    private let rings: [KeyringInfo]
    /// For each reader, the indices of the keyrings of `rings` that
    /// brought it in.
    private let broughtBy: [Reader: [Int]]

    /// - Parameters:
    ///   - rings: the keyrings that passed rules 1–5, with their content.
    ///   - targets: the devices being removed (Ed25519 keys).
    ///   - kept: devices the caller vouches for: never suspects.
    ///   - exempt: keys never made suspects (the recovery key signing).
    init(_ rings: [KeyringInfo], targets: Set<[UInt8]>, keeping kept: Set<[UInt8]>, exempt: Set<[UInt8]> = []) {
        let byID = Dictionary(rings.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { a, _ in a })
        let readers = rings.map(Self.readers(of:))
        var broughtBy: [Reader: [Int]] = [:]
        for (i, ring) in rings.enumerated() {
            var inParents = Set<Reader>()
            for p in ring.parents { if let j = byID[p] { inParents.formUnion(readers[j]) } }
            for r in readers[i] where !inParents.contains(r) { broughtBy[r, default: []].append(i) }
        }
        // The recovery key signing the lockdown is never a suspect, whatever
        // else lists it: a thief's keyring naming it a "device" would
        // otherwise make its own keyrings suspect (review 18 R18-1). Only
        // that key: a thief can make any key a recovery member on a side
        // branch (review 19 R19-1). The targets are suspects whatever they
        // are.
        let recoveryKeys = exempt
        var suspects = targets
        var grew = true
        while grew {
            grew = false
            for (reader, by) in broughtBy {
                guard case .device(let key) = reader, !kept.contains(key), !suspects.contains(key), !recoveryKeys.contains(key) else {
                    continue
                }
                if by.allSatisfy({ rings[$0].signer.map(suspects.contains) ?? false }) {
                    suspects.insert(key)
                    grew = true
                }
            }
        }
        self.suspects = suspects
        self.rings = rings
        self.broughtBy = broughtBy
    }

    /// Whether the keyring at index `i` brought in one of the devices
    /// `keys`.
    func bringsIn(_ keys: Set<[UInt8]>, at i: Int) -> Bool {
        keys.contains { broughtBy[.device($0)]?.contains(i) == true }
    }

    /// The passphrase and escrow readers that a keyring of `ancestry`
    /// (indices into the keyrings given at `init`) not signed by a suspect
    /// brought in.
    func honestReaders(in ancestry: Set<Int>) -> Set<Reader> {
        Set(
            broughtBy.compactMap { reader, by in
                if case .device = reader { return nil }
                return by.contains { ancestry.contains($0) && !(rings[$0].signer.map(suspects.contains) ?? false) } ? reader : nil
            })
    }

    /// The readers a keyring lists: its device and recovery members, its
    /// passphrase slots' keys and its escrow custodians' keys.
    static func readers(of ring: KeyringInfo) -> Set<Reader> {
        var out = Set<Reader>()
        // A recovery member counts as a member like a device: a key a thief
        // made the recovery member of a side branch, or that branch's
        // enrolments, are judged by who brought them in too (review 20
        // R20-1).
        for m in ring.content?.members ?? [] where m.role == "device" || m.role == "recovery" { out.insert(.device(m.publicKey)) }
        for case .passphrase(_, _, _, let pk, _) in ring.record.publicPart.slots { out.insert(.passphrase(pk)) }
        for e in ring.content?.escrow ?? [] { out.insert(.escrow(e.publicKey)) }
        return out
    }
}
