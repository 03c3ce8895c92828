@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// Trust decided over the keyrings of both sides of a merge at once
/// (`Spec/merge.md §3.2`): what the result will hold. A keyring trusted in
/// one file alone — a removed device's fork, trusted in a copy that lacks
/// the removal — is not trusted here when the other file's keyrings cut it,
/// so its key neither verifies nor carries anything, nor becomes the key the
/// merge commits with.
struct KeyringUnion {
    /// The credential's keys, keyrings and members over both files.
    let unlocked: UnlockedKeys
    /// The epoch of each trusted keyring, by id.
    let trustedEpochs: [KeyringID: UInt32]
    /// The key id (`keyCommit[0..<6]`) of each trusted keyring, by id.
    let trustedKeyIDs: [KeyringID: KeyID]
    /// Ids of keyrings the credential opened (trusted or not).
    let opened: Set<KeyringID>
    /// Ids of keyrings it opened or judged from their public part and
    /// rejected, with why.
    let rejected: [KeyringID: String]
    /// The epoch of each keyring the credential did not open that a member
    /// made: one of its links opens under the key of a trusted parent and
    /// carries the signature of a member of that parent, removed or not
    /// (the check of `Spec/format.md §8.6`), with an epoch at most one above
    /// its trusted parents'. Merge carries no other unopened keyring (ninth
    /// review R9-2), and such a keyring also from a commit it cannot verify
    /// when that commit is under the keyring's own key (`Spec/merge.md
    /// §3.2`, eighth review R8-3).
    let memberMade: [KeyringID: UInt32]

    /// Writes the first intact copy of every keyring of `sides` — parents
    /// before children, then in the order of the sides and their files — and
    /// one commit frame to a hidden temporary file beside `folder`'s vault,
    /// unlocks it with `credential`, and removes it.
    ///
    /// - Throws: ``SyncError/keys(_:)`` when the credential opens no keyring
    ///   the union trusts; ``SyncError/io(_:)``.
    /// The temporary file it could not remove (an I/O error), said by the merge.
    private(set) var temporariesLeft: [String] = []

    init(_ sides: [Side], vaultPath: String, credential: Credential, random: any RandomSource) throws(SyncError) {
        struct Ring {
            let id: KeyringID
            let frame: [UInt8]
            let parents: [KeyringID]
        }
        var rings: [Ring] = []
        // Per id, the first intact copy whose frame header's key id is its
        // key commitment's, else the first intact one (`Spec/format.md
        // §8.1`): a keyless writer's copy under another key id, placed first
        // in either file, must not stand for the keyring (thirteenth review
        // R13-1).
        var slot: [KeyringID: (ring: Int, rightHeader: Bool)] = [:]
        for side in sides {
            let s = side.file.structure
            // By header first: a frame value is built only for keyrings
            // (not for each of 10,000 entries' frames).
            for i in 0..<s.committedFrameCount where s.frames.header(at: i).kind == .keyring {
                let f = s.frames[i]
                guard f.malformation == nil && f.checksumIntact == true else { continue }
                let id = KeyringID(unchecked: f.trailer)
                guard slot[id]?.rightHeader != true, let body = f.plaintextBody else { continue }
                let record = try? KeyringRecord(body: body, location: nil)
                let rightHeader = record.map { f.header.keyID == KeyID(commitment: $0.publicPart.keyCommit) } ?? false
                if slot[id] != nil && !rightHeader { continue }
                let frame: [UInt8]
                do { frame = try side.bytes(of: f.location.index) } catch { throw error.asSyncError }
                let ring = Ring(id: id, frame: frame, parents: record?.publicPart.parents ?? [])
                if let known = slot[id] {
                    rings[known.ring] = ring
                    slot[id] = (known.ring, true)
                } else {
                    slot[id] = (rings.count, rightHeader)
                    rings.append(ring)
                }
            }
        }
        // Parents first (a keyring names its parents by id), otherwise as found.
        var placed = Set<KeyringID>()
        var ordered: [Ring] = []
        var remaining = rings
        let present = Set(rings.map(\.id))
        while !remaining.isEmpty {
            let next = remaining.firstIndex { r in r.parents.allSatisfy { placed.contains($0) || !present.contains($0) } } ?? 0
            let ring = remaining.remove(at: next)
            placed.insert(ring.id)
            ordered.append(ring)
        }
        let folder = FileSystem.directory(of: vaultPath)
        let name = String(vaultPath.split(separator: "/").last ?? "vault")
        // Named as a temporary this process owns (`.NAME.keys.tmp-PID-HEX`), so
        // that the next write removes it if this process is killed before
        // its name is removed below (``Leftovers``).
        let temp = Leftovers.temporaryPath(for: folder + "/." + name + ".keys", random: random)
        do {
            let out = try SystemFile(path: temp, mode: .createExclusive(permissions: 0o600))
            var bytes = FileHeader(vaultID: sides[0].file.vaultID).encoded()
            for r in ordered { bytes += r.frame }
            // One commit frame, so that the keyrings count as committed; the
            // key layer does not look at its head.
            bytes += CommitChain.commitHeader(keyID: KeyID(rawValue: 0)).encoded() + [UInt8](repeating: 0, count: CommitChain.bodyByteCount)
            try out.write(bytes, at: 0)
        } catch {
            try? FileSystem.remove(temp)
            throw .io(error)
        }
        let file: VaultFile
        do { file = try VaultFile(path: temp) } catch {
            try? FileSystem.remove(temp)
            throw error.asSyncError
        }
        // The open file stays readable once its name is gone: remove the name
        // now, twice, then say it (the next write beside the vault removes it).
        var left: [String] = []
        if (try? FileSystem.remove(temp)) == nil && FileSystem.nameExists(temp) && (try? FileSystem.remove(temp)) == nil {
            left.append(temp)
        }
        do { unlocked = try KeyringEvaluator.unlock(file, with: credential) } catch { throw .keys(error) }
        var trusted: [KeyringID: UInt32] = [:]
        var trustedKeyIDs: [KeyringID: KeyID] = [:]
        var opened = Set<KeyringID>()
        var rejected: [KeyringID: String] = [:]
        for ring in unlocked.keyrings {
            if ring.isTrusted {
                trusted[ring.id] = ring.epoch
                trustedKeyIDs[ring.id] = KeyID(commitment: ring.record.publicPart.keyCommit)
            }
            if ring.content != nil { opened.insert(ring.id) }
            if !ring.isTrusted, let problem = ring.problem { rejected[ring.id] = problem.description }
        }
        for id in present where !unlocked.keyrings.contains(where: { $0.id == id }) {
            rejected[id] = "its public part is malformed"
        }
        let vaultID = sides[0].file.vaultID
        var memberMade: [KeyringID: UInt32] = [:]
        do {
            for ring in unlocked.keyrings where try unlocked.memberMade(ring, vaultID: vaultID) { memberMade[ring.id] = ring.epoch }
        } catch {
            throw .keys(error)
        }
        self.memberMade = memberMade
        trustedEpochs = trusted
        self.trustedKeyIDs = trustedKeyIDs
        self.opened = opened
        self.rejected = rejected
        temporariesLeft = left
    }

    /// The frame index → epoch of every intact copy, in `side`'s file, of a
    /// keyring the union trusts (what the floor counts, `Spec/format.md §9.3`).
    func trustedKeyrings(in side: Side) -> [Int: UInt32] {
        let s = side.file.structure
        var out: [Int: UInt32] = [:]
        for i in 0..<s.committedFrameCount where s.frames.header(at: i).kind == .keyring {
            let f = s.frames[i]
            guard f.malformation == nil && f.checksumIntact == true else { continue }
            // A copy under another key id is damaged and counts for nothing
            // (`Spec/format.md §8.1`, thirteenth review R13-1).
            if let epoch = trustedEpochs[KeyringID(unchecked: f.trailer)], f.header.keyID == trustedKeyIDs[KeyringID(unchecked: f.trailer)]
            {
                out[f.location.index] = epoch
            }
        }
        return out
    }

    /// Whether the keyring frame with id `id` is carried, and if not why
    /// (`Spec/merge.md §3.2`): a trusted keyring is; a keyring the credential
    /// did not open is when a member made it within one epoch of its trusted
    /// parents (``memberMade``, ninth review R9-2) and its commit verified or
    /// is under its own key; a keyring it opened and rejected, or whose
    /// public part is malformed, is not.
    func verdict(_ id: KeyringID) -> Verdict {
        if trustedEpochs[id] != nil { return .trusted }
        if let why = rejected[id] { return .rejected(why) }
        return opened.contains(id) ? .rejected("it is not trusted") : .unopened
    }

    enum Verdict: Equatable {
        case trusted
        case unopened
        case rejected(String)
    }
}
