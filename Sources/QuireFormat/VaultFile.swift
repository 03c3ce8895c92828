public import QuireCrypto
import Dispatch
import QuireSystem

/// How appends reach the disk.
public struct WriteOptions: Sendable {
    /// Flush to stable storage (`fsync`) after the records and again after the
    /// commit frame. Turning it off is only for benchmarks and tests.
    public var synchronous: Bool

    /// How long a writer waits for another writer's lock before giving up
    /// with ``FormatError/locked(path:seconds:)``, in seconds. Default 60.
    public var lockTimeoutSeconds: Double

    /// How long the file must stay unchanged (size and modification time)
    /// before a writer cuts a torn tail, in seconds (`Spec/format.md §10.3`):
    /// a sync tool may still be writing another device's append in place.
    /// Default 2.
    public var tornTailQuietSeconds: Double

    /// Options with `synchronous` on by default.
    public init(synchronous: Bool = true, lockTimeoutSeconds: Double = 60, tornTailQuietSeconds: Double = 2) {
        self.synchronous = synchronous
        self.lockTimeoutSeconds = lockTimeoutSeconds
        self.tornTailQuietSeconds = tornTailQuietSeconds
    }
}

/// A vault file at the container level (`Spec/format.md`): its structure,
/// the verification of its commit chain and attestations, reading sealed
/// records and appending commits.
///
/// Opening scans the file without a key (``VaultScanner``). Give it the keys
/// with ``verifyCommits(keys:trustedKeyrings:attestors:removedMembers:)``, then read records
/// or append. A reader never modifies the file. A writer serializes with other
/// writers through an advisory lock (`flock`), appends only, and never
/// rewrites a committed byte.
public final class VaultFile: @unchecked Sendable {
    /// The path the vault was opened at.
    public let path: String
    let file: SystemFile
    /// True when opened for appending.
    public let isWritable: Bool
    /// The structure found by the last scan, kept up to date by appends.
    public internal(set) var structure: VaultStructure
    /// The verdict on each commit group, after ``verifyCommits(keys:trustedKeyrings:attestors:removedMembers:)``,
    /// attestations included: reading it checks those not checked yet.
    public var commits: CommitReport {
        lock.withLock {
            checkAttestations(of: Array(uncheckedAttestations.keys))
            return verdicts
        }
    }
    /// The verdicts as they stand: the attestation of each group in
    /// ``uncheckedAttestations`` is still `.notChecked`.
    var verdicts: CommitReport { didSet { tamperedCache = nil } }
    /// ``CommitReport/tampered`` of ``verdicts``, once asked for: every
    /// commit asks, and a vault written one entry per commit has as many
    /// groups as entries. Any change to the verdicts forgets it (an append
    /// of a verified commit puts it back).
    var tamperedCache: [Int]?
    /// Verified commit groups whose attestation has not been checked yet,
    /// with the key that verified each. ``verifyCommits(keys:trustedKeyrings:attestors:removedMembers:)``
    /// leaves every attestation for when it is needed: each is an Ed25519
    /// signature check (about 0.1 ms), most of the cost of opening a vault
    /// written one commit at a time, and nothing that opening decides needs
    /// them, except for the rare group holding an unknown critical kind.
    var uncheckedAttestations: [Int: EpochKey] = [:]
    /// How many commit groups' attestations are still unchecked (tests
    /// count them to show a path checks only what it needs).
    @_spi(Testing) public var uncheckedAttestationCount: Int {
        lock.withLock { uncheckedAttestations.count }
    }
    /// The keys given to ``verifyCommits(keys:trustedKeyrings:attestors:removedMembers:)``.
    public internal(set) var keys: KeySet
    /// Frame index → epoch, for the keyrings the key layer trusts.
    public internal(set) var trustedKeyrings: [Int: UInt32]
    /// Ed25519 public keys of the members (devices and recovery keys) of
    /// trusted keyrings: who may attest a commit (`Spec/format.md §9.4`).
    public internal(set) var attestors: Set<[UInt8]> = []
    /// Ed25519 public keys a trusted keyring lists as removed: their
    /// attestations do not count as a member's (`Spec/format.md §9.4`).
    public internal(set) var removedMembers: Set<[UInt8]> = []
    var streamIndexCache: [StreamID: [Int]]?
    /// The zstd context ``openRecord(frame:)`` reuses (under ``lock``):
    /// making a fresh one for every record cost more than decompressing a
    /// typical entry, and compaction, merge and the entry index open records
    /// one at a time.
    lazy var recordDecompression = DecompressionContext()
    /// The zstd context commits seal records with (under ``lock``, which a
    /// commit holds throughout): a fresh one per record cost more than
    /// compressing a typical entry.
    lazy var recordCompression = CompressionContext()
    /// Serialises this handle's methods: one handle may be shared between
    /// threads. (Read the public properties from one thread at a time.)
    let lock = RecursiveLock()
    /// The file's identity when opened; a different one at `path` means a
    /// sync tool replaced the file.
    let identity: FileIdentity?
    /// True when ``verifyCommits(keys:trustedKeyrings:attestors:removedMembers:)`` repaired
    /// the last commit's header (`Spec/format.md §10.3`); the key layer should
    /// look again, as the recovered commit may hold a keyring.
    public internal(set) var recoveredCommit = false
    /// True once a commit through this handle looked for a killed writer's
    /// temporary files beside the vault (``Leftovers``).
    var leftoversChecked = false

    /// The vault id from the header.
    public var vaultID: VaultID { structure.header.vaultID }

    /// Opens and scans the vault at `path`.
    ///
    /// An unknown critical kind does not stop the scan: whether it is fatal
    /// depends on its commit, which only keys can check
    /// (``fatalCriticalKind``).
    ///
    /// - Throws: the header errors of `Spec/format.md §3`, or
    ///   ``FormatError/io(_:)``.
    public convenience init(path: String, writable: Bool = false) throws(FormatError) {
        let file: SystemFile
        do { file = try SystemFile(path: path, mode: writable ? .readWrite : .readOnly) } catch { throw .io(error) }
        try self.init(file: file, writable: writable)
    }

    init(file: SystemFile, writable: Bool) throws(FormatError) {
        self.file = file
        path = file.path
        identity = try? file.identity()
        isWritable = writable
        structure = try VaultScanner.scan(file: file)
        verdicts = CommitReport()
        keys = KeySet()
        trustedKeyrings = [:]
    }

    /// Creates a vault at `path` holding one commit, which `build` fills.
    ///
    /// The file is written under a temporary name, flushed and linked into
    /// place, so `path` never names a partial vault.
    ///
    /// - Throws: ``FormatError/alreadyExists(path:)`` or any error of the
    ///   commit.
    public static func create(
        at path: String, vaultID: VaultID, keys: KeySet, random: any RandomSource, options: WriteOptions = WriteOptions(),
        attestWith signer: Ed25519.KeyPair?, build: (PendingCommit) throws(FormatError) -> Void
    ) throws(FormatError) -> VaultFile {
        if FileSystem.exists(path) { throw .alreadyExists(path: path) }
        Leftovers.removeStale(besideVault: path, holdingLock: false)
        let temporary = Leftovers.temporaryPath(for: path, random: random)
        let file: SystemFile
        do {
            file = try SystemFile(path: temporary, mode: .createExclusive(permissions: 0o600))
        } catch {
            // Name the path the caller asked for, not the temporary one.
            throw .io(SystemError(operation: "create", path: path, code: error.code))
        }
        do throws(FormatError) {
            do { try file.write(FileHeader(vaultID: vaultID).encoded(), at: 0) } catch { throw FormatError.io(error) }
            let vault = try VaultFile(file: file, writable: true)
            vault.keys = keys
            try vault.commit(random: random, options: options, attestWith: signer, build)
            do {
                try FileSystem.link(temporary, to: path)
            } catch {
                if error.isAlreadyExists { throw FormatError.alreadyExists(path: path) }
                throw FormatError.io(error)
            }
            try? FileSystem.remove(temporary)
            if options.synchronous {
                do { try FileSystem.syncDirectory(FileSystem.directory(of: path)) } catch { throw FormatError.io(error) }
            }
            return try VaultFile(path: path, writable: true)
        } catch {
            try? FileSystem.remove(temporary)
            throw error
        }
    }
}

/// The verdict on each commit group of a vault (`Spec/format.md §9.3`, §9.4).
public struct CommitReport: Sendable {
    /// What verification found for one commit.
    public enum Status: Sendable, Equatable {
        /// The head verifies, the commit is on the chain (the next commit whose
        /// head verifies chains from it, or none follows), and it is not stale.
        case verified
        /// The head does not verify with any held key.
        case mismatch
        /// The head does not verify, yet a later commit chains from its stored
        /// head, and nothing in its group is damaged: its frames were deleted,
        /// replaced or inserted after it was written (`Spec/format.md §9.3`).
        /// Writes are refused while the file holds one.
        case tampered
        /// No key with the commit's key id is held.
        case unverifiable
        /// The head verifies, but the chain passes it by: the next commit
        /// whose head verifies does not chain from it, or a later one chains
        /// from a commit before it. An inserted group, or one followed only by
        /// commits this reader cannot check; its records are unverified.
        case orphaned
        /// The head verifies, but its key's epoch is below a trusted keyring
        /// before it.
        case stale(epoch: UInt32, current: UInt32)

        /// True for the statuses whose records are released as unverified
        /// (`Spec/format.md §9.3` step 2).
        public var isUnverified: Bool {
            switch self {
            case .mismatch, .tampered, .unverifiable, .orphaned: true
            case .verified, .stale: false
            }
        }
    }

    /// What a verified commit's attestation says (`Spec/format.md §9.4`).
    public enum Attestation: Sendable, Equatable {
        /// Not checked: the commit is not verified.
        case notChecked
        /// 96 zero bytes: no member attested the group.
        case unattested
        /// A member attested the group; its Ed25519 public key.
        case attested(signer: [UInt8])
        /// A member that a trusted keyring lists as removed attested the
        /// group: the file cannot show whether it did so before its removal,
        /// so the records are not shown as a member's (`Spec/format.md §9.4`).
        case removedMember(signer: [UInt8])
        /// The attestation does not check; the records are unattested.
        case failed(reason: String)
    }

    /// One status per commit group, in file order.
    public internal(set) var statuses: [Status] = []
    /// One attestation per commit group, in file order.
    public internal(set) var attestations: [Attestation] = []
    /// The computed head after each commit.
    public internal(set) var computedHeads: [[UInt8]] = []
    /// The epoch of the key each commit was made with (0 when unknown).
    public internal(set) var epochs: [UInt32] = []
    /// floor_k for each commit: the highest epoch of a trusted keyring that
    /// counts in a commit before it (`Spec/format.md §9.3`).
    public internal(set) var floors: [UInt32] = []
    /// The floor after the last commit.
    public internal(set) var currentFloor: UInt32 = 0
    /// The stored head a writer chains its next commit from: that of the
    /// last commit whose head verifies (`Spec/format.md §9.1`), or `h_0`
    /// when none does.
    public internal(set) var tipHead: [UInt8] = CommitChain.genesisHead

    /// An empty report.
    public init() {}

    /// True when every commit verified.
    public var allVerified: Bool { statuses.allSatisfy { $0 == .verified } }

    /// The groups whose commit was tampered with, in file order.
    public var tampered: [Int] { statuses.indices.filter { statuses[$0] == .tampered } }

    /// True when commit group `g` is verified and attested by a member.
    public func isAttested(_ g: Int) -> Bool {
        guard g < attestations.count, case .attested = attestations[g] else { return false }
        return true
    }

    /// The member that attested commit group `g`, if one did.
    public func attestor(_ g: Int) -> [UInt8]? {
        guard g < attestations.count, case .attested(let signer) = attestations[g] else { return nil }
        return signer
    }

    /// The removed member whose attestation covers commit group `g`, if any.
    public func removedAttestor(_ g: Int) -> [UInt8]? {
        guard g < attestations.count, case .removedMember(let signer) = attestations[g] else { return nil }
        return signer
    }
}

extension VaultFile {
    /// How many earlier commits whose heads verified a commit may chain
    /// from, past the one before it (`Spec/format.md §9.3`): the bound keeps
    /// verification linear in the file.
    public static let chainLookback = 64

    /// Verifies every commit with `keys` (`Spec/format.md §9.3`) and checks
    /// the attestation of each verified one against `attestors` (§9.4).
    ///
    /// `trustedKeyrings` maps the frame index of each intact copy of a
    /// keyring the key layer trusts to its epoch; a keyring raises the floor
    /// that makes old-epoch commits stale after the first verified commit
    /// that holds it and that a member not in `removedMembers` attested.
    /// `removedMembers` are the keys a trusted keyring lists as removed: their
    /// attestations are reported as ``CommitReport/Attestation/removedMember(signer:)``.
    /// If the last commit's header is damaged but its head verifies, the
    /// commit is recovered first (§10.3).
    public func verifyCommits(keys: KeySet, trustedKeyrings: [Int: UInt32], attestors: Set<[UInt8]>, removedMembers: Set<[UInt8]> = []) {
        lock.withLock {
            verifyCommitsLocked(keys: keys, trustedKeyrings: trustedKeyrings, attestors: attestors, removedMembers: removedMembers)
        }
    }

    func verifyCommitsLocked(keys: KeySet, trustedKeyrings: [Int: UInt32], attestors: Set<[UInt8]>, removedMembers: Set<[UInt8]>) {
        self.keys = keys
        self.trustedKeyrings = trustedKeyrings
        self.attestors = attestors
        self.removedMembers = removedMembers
        var (report, unchecked) = chainReport()
        if recoverDamagedLastCommit(previousHeads: [report.tipHead, structure.groups.last?.storedHead ?? CommitChain.genesisHead]) {
            (report, unchecked) = chainReport()
        }
        verdicts = report
        uncheckedAttestations = unchecked
    }

    /// Verifies every commit group (`Spec/format.md §9.3`, §9.4).
    ///
    /// First, for each commit, the held key and the earlier head its stored
    /// head is computed from: the stored or computed head of the commit before
    /// it, or else the stored head of one of the last ``chainLookback``
    /// commits whose heads verified (or `h_0` within that reach). Then which
    /// commits the chain passes by (orphaned) and which mismatches a later
    /// commit vouches for (tampered). Last, in file order, the floor, stale
    /// commits and attestations. Linear in the number of commits.
    func chainReport() -> (report: CommitReport, unchecked: [Int: EpochKey]) {
        let groups = structure.groups
        let n = groups.count
        var report = CommitReport()
        var unchecked: [Int: EpochKey] = [:]
        // 1. Links.
        var from = [Int?](repeating: nil, count: n)       // chained from commit j (−1: h_0)
        var fromComputed = [Bool](repeating: false, count: n)
        var keyOf = [EpochKey?](repeating: nil, count: n)
        var computed: [[UInt8]] = []
        computed.reserveCapacity(n)
        var matchedOrder: [Int] = []                     // commits whose heads verified, in order
        var latestWithHead: [[UInt8]: Int] = [:]          // stored head → last such commit
        var bridge = [[UInt8]?](repeating: nil, count: n)  // a mismatch's previous head, by its repaired digest
        for k in 0..<n {
            let frame = structure.frames[groups[k].commitFrame]
            let candidates = keys.keys(for: frame.header.keyID)
            let previousStored = k == 0 ? CommitChain.genesisHead : groups[k - 1].storedHead
            guard let first = candidates.first else {
                computed.append(previousStored)
                continue
            }
            keyOf[k] = first
            var tries: [([UInt8], Int, Bool)] = [(previousStored, k - 1, false)]
            if k > 0, computed[k - 1] != previousStored { tries.append((computed[k - 1], k - 1, true)) }
            var found: (EpochKey, Int, Bool, [UInt8])?
            func attempt(_ tries: [([UInt8], Int, Bool)]) -> (EpochKey, Int, Bool, [UInt8])? {
                for key in candidates {
                    for (previous, j, viaComputed) in tries {
                        guard let head = try? CommitChain.head(key: key, vaultID: vaultID, previousHead: previous, digest: groups[k].digest, commitHeader: frame.header)
                        else { continue }
                        if constantTimeEqual(head, groups[k].storedHead) { return (key, j, viaComputed, previous) }
                    }
                }
                return nil
            }
            found = attempt(tries)
            if found == nil {
                // Past an inserted group or a junk commit: the stored heads of
                // the last commits whose heads verified, newest first.
                let window = matchedOrder.suffix(Self.chainLookback)
                var back: [([UInt8], Int, Bool)] = window.reversed().filter { $0 != k - 1 }.map { (groups[$0].storedHead, $0, false) }
                if k > 0 && matchedOrder.count < Self.chainLookback { back.append((CommitChain.genesisHead, -1, false)) }
                found = attempt(back)
            }
            if let (key, j, viaComputed, previous) = found {
                // The link goes to the commit whose head that is: h_0, or the
                // last commit whose head verified with that stored head (so a
                // junk commit that copies a stored head, or an unverifiable
                // one whose computed head passes the one before it through,
                // does not take the link); else the commit it was found at.
                if previous == CommitChain.genesisHead {
                    from[k] = -1
                } else if let known = latestWithHead[previous] {
                    from[k] = known
                } else {
                    from[k] = j
                    fromComputed[k] = viaComputed
                }
                keyOf[k] = key
                computed.append(groups[k].storedHead)
                matchedOrder.append(k)
                latestWithHead[groups[k].storedHead] = k
            } else {
                let head = (try? CommitChain.head(key: first, vaultID: vaultID, previousHead: previousStored, digest: groups[k].digest, commitHeader: frame.header))
                    ?? previousStored
                computed.append(head)
                // A body hash hit by damage breaks the group digest, not the
                // chain: with each frame's trailer recomputed from its intact
                // body, the head may still verify from the commit before, which
                // the next commit then confirms through this one.
                if let repaired = repairedDigest(groups[k]) {
                    var previous = [previousStored]
                    if k > 0, computed[k - 1] != previousStored { previous.append(computed[k - 1]) }
                    bridge[k] = previous.first { prev in
                        candidates.contains { key in
                            (try? CommitChain.head(key: key, vaultID: vaultID, previousHead: prev, digest: repaired, commitHeader: frame.header))
                                .map { constantTimeEqual($0, groups[k].storedHead) } ?? false
                        }
                    }
                }
            }
        }
        // Which commit a mismatch's content verifiably chains from: through
        // its computed head (the next commit chained from it), or through its
        // repaired digest; nil when nothing shows it.
        func resolve(_ value: [UInt8], before limit: Int) -> Int? {
            if value == CommitChain.genesisHead { return -1 }
            return latestWithHead[value].flatMap { $0 < limit ? $0 : nil }
        }
        func realPredecessor(of next: Int) -> Int? {
            guard let j = from[next] else { return nil }
            guard j >= 0, from[j] == nil, keyOf[j] != nil else { return fromComputed[next] ? nil : j }
            if fromComputed[next] { return j > 0 ? resolve(groups[j - 1].storedHead, before: j) : -1 }
            return bridge[j].flatMap { resolve($0, before: j) }
        }
        // 2. The chain: a commit whose head verified is on it when the next
        // such commit chains from it (or none follows) and no later commit
        // chains from a commit before it.
        var onChain = [Bool](repeating: false, count: n)
        var skipDepth = [Int](repeating: 0, count: n + 1)
        for k in matchedOrder {
            guard let j = from[k], j < k - 1 else { continue }
            skipDepth[j + 1] += 1
            skipDepth[k] -= 1
        }
        var depth = 0
        var skipped = [Bool](repeating: false, count: n)
        for k in 0..<n {
            depth += skipDepth[k]
            skipped[k] = depth > 0
        }
        for (position, k) in matchedOrder.enumerated() {
            let next = position + 1 < matchedOrder.count ? matchedOrder[position + 1] : nil
            let confirmed = next.map { from[$0] == k && !fromComputed[$0] || realPredecessor(of: $0) == k } ?? true
            onChain[k] = confirmed && !skipped[k]
        }
        // A mismatch that a later commit chains from by its stored head was
        // intact when that commit was written.
        var vouched = [Bool](repeating: false, count: n)
        for k in matchedOrder { if let j = from[k], j >= 0, !fromComputed[k], from[j] == nil, keyOf[j] != nil { vouched[j] = true } }
        // 3. In file order: floor, stale, attestation.
        var floor: UInt32 = 0
        for k in 0..<n {
            let group = groups[k]
            report.floors.append(floor)
            report.computedHeads.append(computed[k])
            report.epochs.append(keyOf[k]?.epoch ?? 0)
            var status: CommitReport.Status
            var attestation = CommitReport.Attestation.notChecked
            if keyOf[k] == nil {
                status = .unverifiable
            } else if from[k] == nil {
                status = vouched[k] && !groupIsDamaged(group) ? .tampered : .mismatch
            } else if !onChain[k] {
                status = .orphaned
            } else if let key = keyOf[k], key.epoch < floor {
                status = .stale(epoch: key.epoch, current: floor)
            } else {
                status = .verified
                // The attestation decides the floor only where the commit
                // would raise it; elsewhere it is checked when first asked
                // for (an Ed25519 check each, most of the cost of opening a
                // vault written one commit at a time).
                let key = keyOf[k]!
                if key.epoch > floor || group.members.contains(where: { (trustedKeyrings[$0] ?? 0) > floor }) {
                    attestation = self.attestation(of: group, key: key)
                } else {
                    unchecked[k] = key
                }
            }
            report.statuses.append(status)
            report.attestations.append(attestation)
            // The floor rises only where a current member vouches for it: a
            // verified commit it attested raises it to its own key's epoch
            // and to that of every trusted keyring it holds an intact copy of
            // (Spec/format.md §9.3). A copy placed elsewhere counts for nothing.
            if case .attested = attestation {
                floor = max(floor, keyOf[k]!.epoch)
                for index in group.members { if let epoch = trustedKeyrings[index] { floor = max(floor, epoch) } }
            }
        }
        report.currentFloor = floor
        // With no commit whose head verifies, a writer chains from h_0: it
        // then vouches for none of the commits before it.
        report.tipHead = matchedOrder.last.map { groups[$0].storedHead } ?? CommitChain.genesisHead
        return (report, unchecked)
    }

    /// The group digest of `group` with the trailer of every frame whose body
    /// hash does not match its body replaced by the hash of that body (for a
    /// sealed frame, under the first held key of its key id): what the writer
    /// committed, if only body hashes were hit. Nil when no trailer differs,
    /// or a frame cannot be recomputed (a chunk, a sealed frame under no held
    /// key, a damaged region in the group).
    func repairedDigest(_ group: CommitGroup) -> [UInt8]? {
        guard !group.containsDamage else { return nil }
        let window = FileWindow(file: file, fileSize: structure.fileSize, preferredByteCount: 0)
        var digest = CommitChain.Digest()
        var changed = false
        for i in group.members {
            let f = structure.frames[i]
            guard f.header.kind != .blobChunk, f.malformation == nil else {
                digest.add(header: f.headerBytes, trailer: f.trailer)
                continue
            }
            let commitment: [UInt8]? = f.header.isSealed ? keys.keys(for: f.header.keyID).first?.commitment : []
            guard let commitment else {
                digest.add(header: f.headerBytes, trailer: f.trailer)
                continue
            }
            guard let hash = try? window.withBytes(f.bodyOffset, Int(f.header.bodyLength), { (body: UnsafeRawBufferPointer) throws(FormatError) -> [UInt8] in
                let content = UnsafeRawBufferPointer(rebasing: body[0..<(body.count - FrameHeader.bodyHashByteCount)])
                return f.header.isSealed ? SealedFrame.sealedBodyHash(keyCommitment: commitment, content) : SealedFrame.bodyHash(content)
            }) else { return nil }
            if hash != f.trailer { changed = true }
            digest.add(header: f.headerBytes, trailer: hash)
        }
        return changed ? digest.finalize() : nil
    }

    /// True when the bytes of group `group` show damage: a damaged region, a
    /// repaired header, a malformed frame, or a frame whose body hash (for a
    /// chunk, its AEAD tag) does not check with the keys held. A frame the
    /// reader cannot check counts as intact (`Spec/format.md §9.3`).
    func groupIsDamaged(_ group: CommitGroup) -> Bool {
        if group.containsDamage || structure.frames[group.commitFrame].repaired { return true }
        let window = FileWindow(file: file, fileSize: structure.fileSize, preferredByteCount: 0)
        for i in group.members {
            let f = structure.frames[i]
            if f.repaired || f.malformation != nil { return true }
            if !f.header.isSealed {
                if f.checksumIntact == false { return true }
                continue
            }
            let candidates = keys.keys(for: f.header.keyID)
            guard !candidates.isEmpty else { continue }
            if f.chunk != nil {
                if chunkAuthenticates(frame: i) == false { return true }
                continue
            }
            let intact = (try? window.withBytes(f.bodyOffset, Int(f.header.bodyLength)) { (body: UnsafeRawBufferPointer) throws(FormatError) -> Bool in
                candidates.contains { SealedFrame.sealedBodyHashMatches(body, keyCommitment: $0.commitment) }
            }) ?? false
            if !intact { return true }
        }
        return false
    }

    /// The attestation of a verified commit (`Spec/format.md §9.4`).
    func attestation(of group: CommitGroup, key: EpochKey) -> CommitReport.Attestation {
        let header = structure.frames[group.commitFrame].header
        switch CommitChain.checkAttestation(body: group.commitBody, digest: group.digest, key: key, vaultID: vaultID, commitHeader: header) {
        case .unattested: return .unattested
        case .failed(let reason): return .failed(reason: reason)
        case .signed(let signer):
            if removedMembers.contains(signer) { return .removedMember(signer: signer) }
            return attestors.contains(signer) ? .attested(signer: signer) : .failed(reason: "the signer is not a member of this vault")
        }
    }

    /// Checks the attestations of those of `groups` still unchecked and
    /// records them, on every core: the checks are independent of one
    /// another and of the chain.
    func checkAttestations(of groups: [Int]) {
        let jobs = groups.compactMap { g in uncheckedAttestations[g].map { (group: g, key: $0) } }
        guard !jobs.isEmpty else { return }
        var results = [CommitReport.Attestation](repeating: .notChecked, count: jobs.count)
        if jobs.count == 1 {
            results[0] = attestation(of: structure.groups[jobs[0].group], key: jobs[0].key)
        } else {
            let groups = structure.groups
            results.withUnsafeMutableBufferPointer { out in
                let slots = UncheckedMutableBuffer(out)
                DispatchQueue.concurrentPerform(iterations: jobs.count) { i in
                    slots.buffer[i] = attestation(of: groups[jobs[i].group], key: jobs[i].key)
                }
            }
        }
        for (job, result) in zip(jobs, results) {
            verdicts.attestations[job.group] = result
            uncheckedAttestations[job.group] = nil
        }
    }

    /// Checks the attestations of the groups that hold a frame of a critical
    /// kind this reader does not know: whether such a frame is fatal depends
    /// on them (`Spec/format.md §4.3`).
    func checkAttestationsOfUnknownCriticalKinds() {
        var groups: [Int] = []
        for (g, group) in structure.groups.enumerated() where uncheckedAttestations[g] != nil {
            if group.members.contains(where: { !structure.frames[$0].header.kind.isKnown && structure.frames[$0].header.kind.isCritical }) {
                groups.append(g)
            }
        }
        checkAttestations(of: groups)
    }

    /// Commit recovery (`Spec/format.md §10.3`): a tail of whole frames
    /// followed by exactly one commit's worth of bytes whose header is
    /// damaged but whose head verifies under a held key, chained from one of
    /// `previousHeads` (the writer's chain tip, or the last stored head).
    /// Returns true when it recovered the commit.
    func recoverDamagedLastCommit(previousHeads: [[UInt8]]) -> Bool {
        let s = structure
        let commitLength = FrameHeader.byteCount + CommitChain.bodyByteCount
        guard !s.uncommittedFrames.isEmpty, !s.tailHasDamage, let lastFrame = s.frames.last,
              s.fileSize == lastFrame.end + UInt64(commitLength),
              let tail = try? file.read(count: commitLength, at: lastFrame.end),
              tail.count == commitLength
        else { return false }
        var digest = CommitChain.Digest()
        for f in s.frames[s.uncommittedFrames] { digest.add(header: f.headerBytes, trailer: f.trailer) }
        let d = digest.finalize()
        let body = Array(tail[FrameHeader.byteCount...])
        let stored = Array(body[0..<CommitChain.headByteCount])
        var previous: [[UInt8]] = []
        for h in previousHeads where !previous.contains(h) { previous.append(h) }
        let ordered = keys.all.sorted { $0.epoch != $1.epoch ? $0.epoch > $1.epoch : $0.commitment.lexicographicallyPrecedes($1.commitment) }
        for key in ordered {
            let header = CommitChain.commitHeader(keyID: key.id)
            guard previous.contains(where: { prev in
                (try? CommitChain.head(key: key, vaultID: vaultID, previousHead: prev, digest: d, commitHeader: header)).map { constantTimeEqual($0, stored) } ?? false
            }) else { continue }
            let index = s.frames.count
            var frame = ScannedFrame(
                location: FrameLocation(offset: lastFrame.end, index: index), header: header, headerBytes: header.encoded(),
                trailer: stored, repaired: true, chunk: nil, plaintextBody: nil, checksumIntact: nil, malformation: nil)
            frame.commitBody = body
            structure.frames.append(frame)
            structure.groups.append(CommitGroup(
                commitFrame: index, members: s.uncommittedFrames, digest: d, storedHead: stored, commitBody: body, containsDamage: false))
            structure.committedEnd = s.fileSize
            structure.uncommittedFrames = structure.frames.count..<structure.frames.count
            streamIndexCache = nil
            recoveredCommit = true
            return true
        }
        return false
    }

    /// Whether the record in frame `index` may be released, and if not, why
    /// (`Spec/format.md §9.3`). Nil means it may be; decryption and decoding
    /// still have to succeed.
    public func releaseVerdict(frame index: Int) -> FormatError? {
        lock.withLock { releaseVerdictLocked(frame: index) }
    }

    func releaseVerdictLocked(frame index: Int) -> FormatError? {
        let frame = structure.frames[index]
        guard let g = structure.groupIndex(ofFrame: index), g < verdicts.statuses.count else {
            return .tornTail(offset: structure.committedEnd, byteCount: structure.tailByteCount, uncommittedFrameCount: structure.uncommittedFrames.count)
        }
        switch verdicts.statuses[g] {
        case .verified:
            return nil
        case .stale(_, let current):
            return .staleEpoch(frame.location, epoch: epoch(of: frame) ?? 0, currentEpoch: current)
        case .mismatch, .tampered, .unverifiable, .orphaned:
            let floor = verdicts.floors[g]
            if frame.header.isSealed, let e = epoch(of: frame), e < floor {
                return .staleEpoch(frame.location, epoch: e, currentEpoch: floor)
            }
            return nil
        }
    }

    /// The held keys to try on a sealed frame (`Spec/format.md §9.3`): every
    /// key with its key id, in key-commitment order; in a commit that is a
    /// mismatch or unverifiable, only those of an epoch at or above the
    /// commit's floor.
    func candidateKeysLocked(for frame: ScannedFrame) -> [EpochKey] {
        let all = keys.keys(for: frame.header.keyID)
        guard let g = structure.groupIndex(ofFrame: frame.location.index), g < verdicts.statuses.count else { return all }
        switch verdicts.statuses[g] {
        case .mismatch, .tampered, .unverifiable, .orphaned: return all.filter { $0.epoch >= verdicts.floors[g] }
        case .verified, .stale: return all
        }
    }

    /// The epoch of the key a sealed frame is sealed under, if held.
    func epoch(of frame: ScannedFrame) -> UInt32? {
        keys.keys(for: frame.header.keyID).map(\.epoch).max()
    }

    /// The commit groups found tampered with (`Spec/format.md §9.3`), in
    /// file order; needs no attestation checked.
    public var tamperedCommits: [Int] {
        lock.withLock {
            if let tamperedCache { return tamperedCache }
            let tampered = verdicts.tampered
            tamperedCache = tampered
            return tampered
        }
    }

    /// Problems with commits, in file order: mismatches, tampered,
    /// unverifiable, orphaned and stale commits, failed attestations.
    public var commitIssues: [FormatError] {
        lock.withLock { commitIssuesLocked }
    }

    var commitIssuesLocked: [FormatError] {
        let commits = self.commits
        var out: [FormatError] = []
        for (g, status) in commits.statuses.enumerated() {
            let frame = structure.frames[structure.groups[g].commitFrame]
            let loc = frame.location
            switch status {
            case .verified: break
            case .mismatch: out.append(.commitMismatch(loc))
            case .tampered: out.append(.commitTampered(loc))
            case .orphaned: out.append(.commitOrphaned(loc))
            case .unverifiable: out.append(.commitUnverifiable(loc, keyID: frame.header.keyID))
            case .stale(let e, let c): out.append(.staleEpoch(loc, epoch: e, currentEpoch: c))
            }
            if g < commits.attestations.count, case .failed(let reason) = commits.attestations[g] {
                out.append(.attestationFailed(loc, reason: reason))
            }
        }
        return out
    }

    /// The first committed frame of a critical kind this reader does not
    /// know whose commit is verified and attested: the vault must not be
    /// opened (`Spec/format.md §4.3`). Call after verifying.
    public var fatalCriticalKind: FormatError? {
        lock.withLock {
            checkAttestationsOfUnknownCriticalKinds()
            let commits = verdicts
            for (g, group) in structure.groups.enumerated() where g < commits.statuses.count {
                guard commits.statuses[g] == .verified, commits.isAttested(g) else { continue }
                for i in group.members {
                    let f = structure.frames[i]
                    if !f.header.kind.isKnown && f.header.kind.isCritical { return .unknownCriticalKind(f.location, kind: f.header.kind.rawValue) }
                }
            }
            return nil
        }
    }

    /// Frames of an unknown critical kind that are skipped because their
    /// commit is not verified and attested (reported, not fatal).
    public var skippedCriticalKinds: [FormatError] {
        lock.withLock {
            checkAttestationsOfUnknownCriticalKinds()
            let commits = verdicts
            var out: [FormatError] = []
            for f in structure.frames[0..<structure.committedFrameCount] where !f.header.kind.isKnown && f.header.kind.isCritical {
                if let g = structure.groupIndex(ofFrame: f.location.index), g < commits.statuses.count,
                   commits.statuses[g] == .verified, commits.isAttested(g) { continue }
                out.append(.unknownCriticalKind(f.location, kind: f.header.kind.rawValue))
            }
            return out
        }
    }

    /// The status of each commit group (``CommitReport/statuses``), without
    /// checking any attestation: merge asks about a few groups of files that
    /// may hold thousands.
    package var commitStatuses: [CommitReport.Status] {
        lock.withLock { verdicts.statuses }
    }

    /// The attestation of commit group `g`, checking it (and no other) if
    /// it was not checked yet; `.notChecked` past the last group.
    package func attestation(ofGroup g: Int) -> CommitReport.Attestation {
        lock.withLock {
            guard g < verdicts.attestations.count else { return .notChecked }
            checkAttestations(of: [g])
            return verdicts.attestations[g]
        }
    }

    /// Whether the records of commit group `g` are attested, and by whom.
    public func attestation(ofFrame index: Int) -> CommitReport.Attestation {
        lock.withLock {
            guard let g = structure.groupIndex(ofFrame: index), g < verdicts.attestations.count else { return .notChecked }
            checkAttestations(of: [g])
            return verdicts.attestations[g]
        }
    }
}

/// A buffer written by several threads at once, each at its own indices.
private struct UncheckedMutableBuffer<Element>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<Element>
    init(_ buffer: UnsafeMutableBufferPointer<Element>) { self.buffer = buffer }
}
