import Dispatch
@_spi(Crypto) public import QuireCrypto
package import QuireSystem

/// How appends reach the disk.
@_spi(Format) public struct WriteOptions: Sendable {
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
// @unchecked Sendable: its caches and verdicts are guarded by its `lock`; `structure` changes
// only on append and refresh, which the owning Vault runs under the handle's lock; the file is
// read with positioned reads only. Do not append to one VaultFile from two threads outside a Vault.
@_spi(Format) public final class VaultFile: @unchecked Sendable {
    /// The path the vault was opened at.
    public let path: String
    let file: SystemFile
    /// True when opened for appending.
    public let isWritable: Bool
    /// The structure found by the last scan, kept up to date by appends.
    /// Any change forgets ``unknownCriticalCache`` (a commit of this
    /// handle's puts it back, extended).
    public internal(set) var structure: VaultStructure {
        didSet {
            unknownCriticalCache = nil
            everyCommitVerifiedCache = nil
        }
    }
    /// The committed frames of a critical kind this reader does not know,
    /// ascending, and the commit groups holding them, once asked for
    /// (``unknownCriticalFramesLocked``): every open and every commit asks
    /// (``fatalCriticalKind``), and finding them reads every frame's kind.
    var unknownCriticalCache: UnknownCriticalFrames?
    /// How many times the committed frames were searched for unknown
    /// critical kinds (tests count them to show an open and a commit each
    /// search at most once).
    @_spi(Testing) public private(set) var unknownCriticalSearchCount = 0
    /// The verdict on each commit group, after ``verifyCommits(keys:trustedKeyrings:attestors:removedMembers:)``,
    /// attestations included: reading it checks those not checked yet.
    public var commits: CommitReport {
        lock.withLock {
            checkAttestations(of: Array(uncheckedAttestations.keys))
            findRemovalAncestorsLocked()
            return verdicts
        }
    }
    /// The verdicts as they stand: the attestation of each group in
    /// ``uncheckedAttestations`` is still `.notChecked`.
    var verdicts: CommitReport {
        didSet {
            tamperedCache = nil
            everyCommitVerifiedCache = nil
        }
    }
    /// ``everyCommitVerified`` once asked for: the index cache asks it up
    /// to three times an open, and it looks at every commit. Any change to
    /// the verdicts or the structure forgets it.
    var everyCommitVerifiedCache: Bool?
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
    /// Frame index of each intact copy of a trusted keyring that removes
    /// members → the keys it removes (``verifyCommits(keys:trustedKeyrings:attestors:removedMembers:removals:)``).
    public internal(set) var removals: [Int: Set<[UInt8]>] = [:]
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
    /// Keys commit recovery tries besides the held ones: those of the
    /// tail's keyrings, which a damaged last commit that starts a new epoch
    /// is made under (`Spec/format.md §10.3`, §9.2).
    package var recoveryKeys: [EpochKey] = []

    /// True when the tail has the shape commit recovery looks at (frames
    /// from the committed end with no damaged region, then 216 bytes ending
    /// the file) and holds a keyring frame (`Spec/format.md §10.3`).
    package var recoverableTailHoldsKeyring: Bool {
        lock.withLock {
            let s = structure
            guard !s.uncommittedFrames.isEmpty, !s.tailHasDamage, let last = s.frames.last,
                s.fileSize == last.end + UInt64(FrameHeader.byteCount + CommitChain.bodyByteCount)
            else { return false }
            return s.frames[s.uncommittedFrames].contains { $0.header.kind == .keyring }
        }
    }
    /// True once a commit through this handle looked for a killed writer's
    /// temporary files beside the vault (``Leftovers``).
    var leftoversChecked = false

    /// How many frames at the start of the file were taken from a cached
    /// prefix structure rather than scanned (``open(path:writable:cachedPrefix:frameCount:committedLength:chainHead:commitsDigest:)``);
    /// 0 after a scan of the whole file. A path that needs every byte of the
    /// file checked (verify, merge) opens it again when this is not 0.
    package internal(set) var cachedPrefixFrameCount = 0
    /// The `commits` digest (`Spec/index-cache.md §1`) the open from the
    /// cached prefix checked the first ``cachedPrefixFrameCount`` frames'
    /// commit frames against, as read from the file; nil after a scan of
    /// the whole file. The index cache's identity check takes it instead of
    /// hashing the same commit frames again.
    package internal(set) var cachedPrefixCommitsDigest: [UInt8]?
    /// The offset the last scan of this handle started at when it was
    /// opened: 64 for a whole file, the cached committed length otherwise.
    /// For tests.
    package internal(set) var scanStartOffset = UInt64(FileHeader.byteCount)
    /// The commit groups of the cached prefix whose heads ``chainReport()``
    /// takes as verified from their stored previous heads instead of
    /// computing them again, and the keys (commitment and epoch of each,
    /// sorted) that holds for: set by ``trustCachedPrefixHeads(keys:)``,
    /// used only while ``keys`` are exactly those (`Spec/index-cache.md §5`).
    var trustedPrefixHeads: (groupCount: Int, keys: [[UInt8]])?
    /// How many chain heads this handle computed to verify commits
    /// (``chainReport()``, and each commit another writer appended at the
    /// tip): tests count them to show that an open from the index cache
    /// verifies only the commits after the cached prefix.
    @_spi(Testing) public var headVerificationCount: Int { lock.withLock { headVerifications } }
    var headVerifications = 0
    /// How many attestations ``checkAttestations(of:)`` checked without
    /// taking their signature from the index cache (every one it checks
    /// but those of the cache-trusted prefix, whether or not the box opens
    /// and holds a signature; the few the chain walk checks itself are not
    /// counted): tests count them to show that an open from the index
    /// cache verifies only the tail's signatures.
    @_spi(Testing) public var signatureVerificationCount: Int { lock.withLock { signatureVerifications } }
    var signatureVerifications = 0
    /// How many commits the walk of ``chainReport()`` visited (its general
    /// path; a linear file is judged in one pass without it): tests count
    /// them to show that an open of the everyday vault walks none.
    @_spi(Testing) public var walkedCommitCount: Int { lock.withLock { walkedCommits } }
    var walkedCommits = 0

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

    /// Opens the vault at `path`, whose first bytes this process copied from
    /// the file `prefix` describes (``VaultScanner/prefix(of:groups:)``):
    /// only the bytes after them are scanned. Merge opens its result so:
    /// scanning the copied prefix again cost a quarter of a merge.
    ///
    /// - Throws: ``FormatError/io(_:)``.
    package init(path: String, writable: Bool = false, copiedPrefix prefix: VaultStructure) throws(FormatError) {
        do { file = try SystemFile(path: path, mode: writable ? .readWrite : .readOnly) } catch { throw .io(error) }
        self.path = file.path
        identity = try? file.identity()
        isWritable = writable
        var structure = prefix
        try VaultScanner.rescanTail(&structure, file: file)
        self.structure = structure
        verdicts = CommitReport()
        keys = KeySet()
        trustedKeyrings = [:]
    }

    /// A handle on `file` whose `structure` was taken, for its first
    /// `cachedPrefixFrames` frames, from a cached prefix the caller checked
    /// against the file, and scanned from `scanStart` on.
    init(file: SystemFile, writable: Bool, cachedPrefixFrames: Int, scanStart: UInt64, structure: VaultStructure) {
        self.file = file
        path = file.path
        identity = try? file.identity()
        isWritable = writable
        self.structure = structure
        verdicts = CommitReport()
        keys = KeySet()
        trustedKeyrings = [:]
        cachedPrefixFrameCount = cachedPrefixFrames
        scanStartOffset = scanStart
    }

    /// The commit groups at the start of this file that the file at
    /// `path` holds too, byte for byte, as
    /// ``VaultScanner/prefix(of:groups:)`` gives them (nil when there is
    /// none): what a scan of `path` finds in those bytes. The bytes are
    /// compared with this handle's own file, the one its structure was
    /// scanned from, even if another file has since been renamed over its
    /// path. Merge opens the copy so (``init(path:writable:copiedPrefix:)``):
    /// comparing bytes costs less than scanning frames.
    ///
    /// - Throws: ``FormatError/io(_:)``.
    package func sharedPrefix(withFileAt path: String) throws(FormatError) -> VaultStructure? {
        let other: SystemFile
        do { other = try SystemFile(path: path, mode: .readOnly) } catch { throw .io(error) }
        return try sharedPrefix(with: other)
    }

    /// ``sharedPrefix(withFileAt:)`` of the file open as `other`.
    ///
    /// - Throws: ``FormatError/io(_:)``.
    package func sharedPrefix(with other: SystemFile) throws(FormatError) -> VaultStructure? {
        try lock.withLock { () throws(FormatError) -> VaultStructure? in
            let s = structure
            guard !s.groups.isEmpty else { return nil }
            do throws(SystemError) {
                let same = try file.equalPrefixLength(with: other, upTo: min(s.committedEnd, try other.size()))
                var groups = 0
                while groups < s.groups.count && s.frames.end(at: s.groups[groups].commitFrame) <= same { groups += 1 }
                return VaultScanner.prefix(of: s, groups: groups)
            } catch {
                throw .io(error)
            }
        }
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
@_spi(Format) public struct CommitReport: Sendable {
    /// What verification found for one commit.
    public enum Status: Sendable, Equatable {
        /// The head verifies and the commit is on the chain (it joined it and
        /// no later commit passed it by, `Spec/format.md §9.3`).
        case verified
        /// The head does not verify with any held key.
        case mismatch
        /// The head does not verify, yet a later commit chains from its stored
        /// head, and nothing in its group is damaged: its frames were deleted,
        /// replaced or inserted after it was written; or the head verifies from
        /// a head no commit of the file stores: the commit it extends was
        /// deleted (`Spec/format.md §9.3`). Writes are refused while the file
        /// holds one.
        case tampered
        /// No key with the commit's key id is held.
        case unverifiable
        /// The head verifies, but the commit is not on the chain: a copy of
        /// an earlier commit, a fork (it links past a commit a current member
        /// attested), one that extends a commit off the chain, or one a later
        /// commit passed by (an inserted group). Its records are unverified.
        case orphaned
        /// The head verifies, but its key's epoch is below the floor: a
        /// trusted keyring a member vouched for before it. It does not join
        /// the chain.
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
        /// group: the records are not shown as a member's
        /// (`Spec/format.md §9.4`). When the group is a link ancestor of its
        /// removal, it still ranks as a current member's
        /// (``CommitReport/ranksAsMember(_:)``, eleventh review R11-2).
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
    /// floor_k for each commit: the highest epoch a verified commit that a
    /// current member attested, before it in the file, raised the floor to
    /// (`Spec/format.md §9.3`); it decides which keys open the records of a
    /// commit that is not verified.
    public internal(set) var floors: [UInt32] = []
    /// The floor after the last commit.
    public internal(set) var currentFloor: UInt32 = 0
    /// The floor along the tip's own line, the tip included: the highest
    /// epoch a verified commit that a current member attested raised it to
    /// among the tip and the commits it links to, transitively. A commit
    /// that extends the tip is stale below it (`Spec/format.md §9.3`).
    public internal(set) var tipLineFloor: UInt32 = 0
    /// The commits a current member attested that are verified although
    /// they link past a commit a current member attested, or extend a
    /// commit off the chain: a member's fork (`Spec/format.md §9.3`),
    /// reported as a warning.
    public internal(set) var forks: Set<Int> = []
    /// The verified commits a current member attested whose link names a
    /// head no commit of the file stores (the commit they extend was
    /// deleted): tampered at vault level — reported
    /// [`commit_tampered`], writes refused — but their records are released
    /// verified and attested (`Spec/format.md §9.3` step 5, fifth review F4).
    public internal(set) var attestedOverDeletion: Set<Int> = []
    /// The stored head a writer chains its next commit from: that of the
    /// last commit the walk put on the chain (`Spec/format.md §9.1`), or
    /// `h_0` when none is.
    public internal(set) var tipHead: [UInt8] = CommitChain.genesisHead
    /// For each commit whose head verifies, the previous head it verified
    /// from (what its attestation signs); nil for the others.
    public internal(set) var previousHeads: [[UInt8]?] = []
    /// Each commit's place in the *link order* merge places its blocks in
    /// (`Spec/merge.md §3.3`): the walk of `Spec/format.md §9.3` (depth
    /// first over the link tree, siblings by stored head, then the commits
    /// that link to no commit in file order; a commit never reached last),
    /// except that of the children of one commit, the one whose subtree
    /// holds the chain's tip comes first (sixth review R6-5).
    package internal(set) var walkPositions: [Int] = []
    /// The link-order position of the chain's tip (``walkPositions``), or
    /// -1 when the chain is empty: a commit appended at the tip comes
    /// right after it.
    package internal(set) var tipPosition = -1
    /// For each commit, the commit it links to (`Spec/format.md §9.3`,
    /// "Links"), or -1 when it links to the start, to none, or takes no link.
    package internal(set) var linkParents: [Int] = []
    /// The chain's tip (the last commit the walk put on it), or -1.
    package internal(set) var tipGroup = -1
    /// The link ancestors of the commits a current member attested that
    /// hold a trusted keyring removing members, each with the keys removed
    /// after it (``ranksAsMember(_:)``): found once, when first needed, by
    /// ``VaultFile``; nil until then. Replaced with the verdicts.
    package internal(set) var removalAncestors: [Int: Set<[UInt8]>]?
    /// Merge only: commit groups a removed member attested that rank with a
    /// current member's standing because the other file of the merge holds
    /// the same commit (the same stored head, verified) and ranks it so
    /// there (``VaultFile/ranksAsMember(inMerge:)``, `Spec/merge.md §3.2`,
    /// "Standing in a merge", twelfth review R12-3). Empty outside a merge;
    /// replaced with the verdicts.
    package internal(set) var ranksAsMemberInMerge: Set<Int> = []

    /// An empty report.
    public init() {}

    /// True when every commit verified and none extends a deleted commit.
    public var allVerified: Bool { statuses.allSatisfy { $0 == .verified } && attestedOverDeletion.isEmpty }

    /// The groups whose commit was tampered with, in file order: those of
    /// status ``Status/tampered`` and those in ``attestedOverDeletion``.
    public var tampered: [Int] { statuses.indices.filter { statuses[$0] == .tampered || attestedOverDeletion.contains($0) } }

    /// True when commit group `g` is verified and attested by a member.
    public func isAttested(_ g: Int) -> Bool {
        guard g < attestations.count, case .attested = attestations[g] else { return false }
        return true
    }

    /// True when commit group `g` ranks with a current member's standing
    /// (`Spec/format.md §9.4` step 5): attested by a current member, or by a
    /// removed member and a link ancestor of a commit a current member
    /// attested whose group holds a trusted keyring removing that member —
    /// a commit the removal provably saw (eleventh review R11-2); in a
    /// merge, also such a commit the other file ranks so
    /// (``ranksAsMemberInMerge``, twelfth review R12-3). Only meaningful
    /// once ``removalAncestors`` is found.
    public func ranksAsMember(_ g: Int) -> Bool {
        if isAttested(g) { return true }
        guard let signer = removedAttestor(g), g < statuses.count, statuses[g] == .verified else { return false }
        return removalAncestors?[g]?.contains(signer) == true || ranksAsMemberInMerge.contains(g)
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
    ///
    /// `removals` maps the frame index of each intact copy of a trusted
    /// keyring that removes members to the keys its `removed` list names:
    /// a removed member's commits that are link ancestors of such a copy's
    /// commit, attested by a current member, rank as a current member's
    /// (§9.4 step 5, eleventh review R11-2).
    /// Derives, ahead of ``verifyCommits(keys:trustedKeyrings:attestors:removedMembers:removals:)``,
    /// the subkeys (record, commit, attestation, commit nonce) of each key in
    /// `keys` that a commit frame names, and keeps them with the key
    /// (`Spec/format.md §5.1`). Verifying and reading then find them made:
    /// they cannot tell guarded memory running out from a head or a record
    /// that does not open, which would be reported as damage to the file.
    /// The commit subkey of each of ``recoveryKeys`` too, which commit
    /// recovery tries and no commit frame names yet (§10.3).
    ///
    /// - Throws: ``FormatError/outOfGuardedMemory``.
    package func deriveCommitSubkeys(of keys: KeySet) throws(FormatError) {
        for key in recoveryKeys {
            do { _ = try key.subkey(.commit) } catch { throw .outOfGuardedMemory }
        }
        var seen = Set<KeyID>()
        var last: KeyID?
        let frames = structure.frames
        for (k, group) in structure.groups.enumerated() {
            let id = frames.commitHeader(group: k, frame: group.commitFrame).keyID
            // Commits in a row under one key (the usual case): one set lookup.
            guard id != last else { continue }
            last = id
            guard seen.insert(id).inserted else { continue }
            for key in keys.keys(for: id) {
                for which in [EpochKey.Subkey.record, .commit, .attestation, .commitNonce] {
                    do { _ = try key.subkey(which) } catch { throw .outOfGuardedMemory }
                }
            }
        }
    }

    public func verifyCommits(
        keys: KeySet, trustedKeyrings: [Int: UInt32], attestors: Set<[UInt8]>, removedMembers: Set<[UInt8]> = [],
        removals: [Int: Set<[UInt8]>] = [:]
    ) {
        lock.withLock {
            verifyCommitsLocked(
                keys: keys, trustedKeyrings: trustedKeyrings, attestors: attestors, removedMembers: removedMembers, removals: removals)
        }
    }

    func verifyCommitsLocked(
        keys: KeySet, trustedKeyrings: [Int: UInt32], attestors: Set<[UInt8]>, removedMembers: Set<[UInt8]>,
        removals: [Int: Set<[UInt8]>] = [:]
    ) {
        self.keys = keys
        self.trustedKeyrings = trustedKeyrings
        self.attestors = attestors
        self.removedMembers = removedMembers
        self.removals = removals
        var (report, unchecked) = chainReport()
        if recoverDamagedLastCommit() {
            (report, unchecked) = chainReport()
        }
        verdicts = report
        uncheckedAttestations = unchecked
    }

    /// A 32-byte chain head as a dictionary key: four words, hashed at once
    /// (the map of stored heads takes one lookup per commit).
    private struct HeadKey: Hashable {
        let a: UInt64, b: UInt64, c: UInt64, d: UInt64

        init(_ head: [UInt8]) {
            precondition(head.count == CommitChain.headByteCount)
            self.init(head, at: 0)
        }

        /// The head stored at `offset` of `bytes`.
        init(_ bytes: [UInt8], at offset: Int) {
            precondition(offset >= 0 && offset + CommitChain.headByteCount <= bytes.count)
            (a, b, c, d) = bytes.withUnsafeBytes { raw in
                (
                    raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)
                )
            }
        }
    }

    /// Where a commit whose head verified chains from (`Spec/format.md §9.3`).
    private enum Predecessor {
        /// `h_0`: before every commit.
        case start
        /// A commit whose head verified.
        case commit(Int)
        /// A mismatch or unverifiable commit whose content is not shown to
        /// chain from a commit.
        case notShown
        /// A head no commit of the file stores (nor a mismatch's computed
        /// head): the commit it extends was deleted.
        case missing
    }

    /// Verifies every commit group (`Spec/format.md §9.3`, §9.4): in one
    /// pass when the file is linear (``linearChainReport(known:)``), else
    /// by the walk (``walkedChainReport(verified:)``). Both give the same
    /// report.
    func chainReport() -> (report: CommitReport, unchecked: [Int: EpochKey]) {
        var known: [EpochKey] = []
        if let linear = linearChainReport(known: &known) { return linear }
        return walkedChainReport(verified: known)
    }

    /// The report ``chainReport()`` gives the file now, or (`walk`) the
    /// one the walk gives whatever the file, with the groups whose
    /// attestations it left unchecked, ascending (tests compare the two).
    @_spi(Testing) public func chainReportForTesting(walk: Bool) -> (report: CommitReport, unchecked: [Int]) {
        lock.withLock {
            let (report, unchecked) = walk ? walkedChainReport(verified: []) : chainReport()
            return (report, unchecked.keys.sorted())
        }
    }

    /// The report of a *linear* file in one pass, without the walk's maps,
    /// links and stack: the report the walk gives such a file, or nil when
    /// the file is not one. Linear: every commit's stored previous head is
    /// the stored head of the commit before it in the file (`h_0` for the
    /// first), no stored head is `h_0` or stored twice, every head verifies
    /// from its stored previous head (taken as verified for the cached
    /// prefix as in the walk, `Spec/index-cache.md §5`), and no commit is
    /// stale. The everyday vault — one writer's commits, each extending the
    /// one before — is linear, so an append costs O(1) map work per commit
    /// of the vault, not the walk's.
    ///
    /// Why it is the walk's report: with heads that verify and are stored
    /// once, each commit is its head's original and in place; so each links
    /// to the commit before it (the first to the start), the link tree is
    /// one path, the walk visits the commits in file order, each joining the
    /// chain as its tip (the commit it links to is the tip: it passes
    /// nothing by), and the merge order is the walk's (no siblings). The
    /// line floor, the linked floor and the file-order floor are then one
    /// running value; epochs, attestations and floors follow the walk's
    /// rules in the same order. Anything else — a copy, a mismatch, a fork,
    /// a stale commit — returns nil before anything is reported, and the
    /// walk judges the file; `known` then holds the key each commit
    /// verified under so far, which the walk takes instead of computing
    /// those heads again.
    private func linearChainReport(known: inout [EpochKey]) -> (report: CommitReport, unchecked: [Int: EpochKey])? {
        let groups = structure.groups
        let n = groups.count
        guard n > 0 else { return nil }
        let headCount = CommitChain.headByteCount
        // The links, from the stored heads only: each previous head is the
        // head stored before it.
        var before = HeadKey(CommitChain.genesisHead)
        for k in 0..<n {
            let group = groups[k]
            guard group.commitBody.count == CommitChain.bodyByteCount, group.storedHead.count == headCount,
                HeadKey(group.commitBody, at: headCount) == before
            else { return nil }
            before = HeadKey(group.storedHead)
        }
        // The heads, as the walk checks them: the cached prefix's taken as
        // verified under the one held key of its id, the others computed
        // from the stored previous head under each held key in turn.
        let trustedGroups = trustedPrefixGroupCount
        var keyOf: [EpochKey] = []
        keyOf.reserveCapacity(n)
        defer { known = keyOf }
        var lastID: KeyID?
        var candidates: [EpochKey] = []
        for k in 0..<n {
            let group = groups[k]
            let header = structure.frames.commitHeader(group: k, frame: group.commitFrame)
            if header.keyID != lastID {
                candidates = keys.keys(for: header.keyID)
                lastID = header.keyID
            }
            guard let first = candidates.first else { return nil }
            if k < trustedGroups, candidates.count == 1 {
                keyOf.append(first)
                continue
            }
            let previous = k == 0 ? CommitChain.genesisHead : groups[k - 1].storedHead
            let storedAttestation = CommitChain.storedAttestation(body: group.commitBody)
            var found: EpochKey?
            for key in candidates {
                headVerifications += 1
                let head = try? CommitChain.head(
                    key: key, vaultID: vaultID, previousHead: previous, digest: group.digest, commitHeader: header,
                    storedAttestation: storedAttestation)
                if let head, constantTimeEqual(head, group.storedHead) {
                    found = key
                    break
                }
            }
            guard let found else { return nil }
            keyOf.append(found)
        }
        // Each head stored once, none h_0: an open-addressed set of the
        // heads' first words (verified heads, so spread evenly); two equal
        // first words, or a long probe, leave the file to the walk.
        var capacity = 16
        while capacity < 2 * n { capacity <<= 1 }
        let mask = capacity - 1
        var slots = [UInt64](repeating: 0, count: capacity)
        var used = [Bool](repeating: false, count: capacity)
        let genesis = HeadKey(CommitChain.genesisHead)
        for k in 0..<n {
            let head = HeadKey(groups[k].storedHead)
            guard head != genesis else { return nil }
            var slot = Int(truncatingIfNeeded: head.a &* 0x9E37_79B9_7F4A_7C15 >> 20) & mask
            var probes = 0
            while used[slot] {
                probes += 1
                guard slots[slot] != head.a, probes < 64 else { return nil }
                slot = (slot + 1) & mask
            }
            used[slot] = true
            slots[slot] = head.a
        }
        // In file order, the walk's order: epoch, staleness, attestation
        // and the floor along the line (each commit extends the one before).
        let (keyringEpochIn, ownKeyEpoch) = keyringEpochs { keyOf[$0] }
        // By group, so that each commit costs no hashed lookup (there are a
        // few of each).
        var inGroupAt = [UInt32?](repeating: nil, count: n)
        for (g, epoch) in keyringEpochIn where g < n { inGroupAt[g] = epoch }
        var ownAt = [UInt32?](repeating: nil, count: n)
        for (g, epoch) in ownKeyEpoch where g < n { ownAt[g] = epoch }
        var attestations = [CommitReport.Attestation](repeating: .notChecked, count: n)
        var raisedTo = [UInt32](repeating: 0, count: n)
        var keyEpoch = keyOf.map(\.epoch)
        var previousHeads: [[UInt8]?] = []
        previousHeads.reserveCapacity(n)
        var unchecked: [Int: EpochKey] = [:]
        unchecked.reserveCapacity(n)
        var line: UInt32 = 0
        for k in 0..<n {
            let key = keyOf[k]
            let previous = k == 0 ? CommitChain.genesisHead : groups[k - 1].storedHead
            previousHeads.append(previous)
            let inGroup = inGroupAt[k]
            if let own = ownAt[k] {
                keyEpoch[k] = own
            } else if k > 0, keyOf[k - 1].commitment == key.commitment {
                keyEpoch[k] = keyEpoch[k - 1]
            }
            let epoch = keyEpoch[k]
            // Stale below its group or its line: the walk's to judge.
            if let own = inGroup, epoch < own { return nil }
            if epoch < line { return nil }
            if epoch > line || (inGroup ?? 0) > line {
                attestations[k] = attestation(of: groups[k], previousHead: previous, key: key)
            } else {
                unchecked[k] = key
            }
            if case .attested = attestations[k] {
                let raised = max(epoch, inGroup ?? 0)
                raisedTo[k] = raised
                line = max(line, raised)
            }
        }
        // The floor in file order (the walk's last pass).
        var floors = [UInt32](repeating: 0, count: n)
        var floor: UInt32 = 0
        for k in 0..<n {
            floors[k] = floor
            if case .notChecked = attestations[k] {
                let raised = max(keyEpoch[k], inGroupAt[k] ?? 0)
                guard raised > floor, let key = unchecked[k] else { continue }
                attestations[k] = attestation(of: groups[k], previousHead: previousHeads[k]!, key: key)
                unchecked[k] = nil
                guard case .attested = attestations[k] else { continue }
                raisedTo[k] = raised
            }
            if case .attested = attestations[k] { floor = max(floor, raisedTo[k]) }
        }
        var report = CommitReport()
        report.statuses = [CommitReport.Status](repeating: .verified, count: n)
        report.attestations = attestations
        report.floors = floors
        report.computedHeads = groups.map(\.storedHead)
        report.epochs = keyEpoch
        report.previousHeads = previousHeads
        report.walkPositions = Array(0..<n)
        report.tipPosition = n - 1
        report.tipGroup = n - 1
        report.linkParents = (0..<n).map { $0 - 1 }
        report.currentFloor = floor
        report.tipLineFloor = line
        report.tipHead = groups[n - 1].storedHead
        return (report, unchecked)
    }

    /// For each commit group holding an intact copy of a trusted keyring,
    /// the highest epoch such a copy claims (`inGroup`), and the highest
    /// such a copy claims for the key of the group's commit (`ownKey`,
    /// `Spec/format.md §9.3`, ninth review R9-4): found from the few
    /// trusted keyrings, not from every frame.
    private func keyringEpochs(keyOf: (Int) -> EpochKey?) -> (inGroup: [Int: UInt32], ownKey: [Int: UInt32]) {
        var keyringEpochIn: [Int: UInt32] = [:]
        var ownKeyEpoch: [Int: UInt32] = [:]
        for (index, epoch) in trustedKeyrings {
            guard let g = structure.groupIndex(ofFrame: index) else { continue }
            keyringEpochIn[g] = max(keyringEpochIn[g] ?? 0, epoch)
            let frame = structure.frames[index]
            guard let key = keyOf(g), frame.header.keyID == key.id else { continue }
            if let body = frame.plaintextBody, let record = try? KeyringRecord(body: body, location: nil),
                record.publicPart.keyCommit != key.commitment
            {
                continue
            }
            ownKeyEpoch[g] = max(ownKeyEpoch[g] ?? 0, epoch)
        }
        return (keyringEpochIn, ownKeyEpoch)
    }

    /// Verifies every commit group (`Spec/format.md §9.3`, §9.4).
    ///
    /// First, for each commit, the held key and the previous head its head
    /// verifies from (the one it stores, or — a damaged previous-head field —
    /// the stored head of the commit before it in the file). Of the commits
    /// whose heads verify and store one head, one is the original: chosen
    /// among those a current member attested if any (their attestations are
    /// checked only where heads are shared), the first in file order whose
    /// head verifies from `h_0` or from a head that a commit before it in
    /// the file holds, else the first; the others are copies. Each other commit links to what its previous head names,
    /// forward too, through maps of stored heads: no window, one lookup per
    /// commit. Then, in walk order — depth first over the link tree, siblings
    /// by stored head, then the commits that link to no commit in file
    /// order, with an explicit stack — the chain (a stack of the commits on
    /// it), stale commits and attestations: a commit joins the chain from the
    /// commit it links to, passing by the commits on the chain after that
    /// one — unless one of them is verified and attested by a current
    /// member, which makes the commit a fork (orphaned, or a member's fork).
    /// Then the floor of each commit, in file order. Last, which mismatches
    /// a commit vouches for (tampered). Linear in the number of commits
    /// (siblings, sorted, exist only where something is off).
    private func walkedChainReport(verified known: [EpochKey]) -> (report: CommitReport, unchecked: [Int: EpochKey]) {
        let groups = structure.groups
        let n = groups.count
        walkedCommits += n
        var report = CommitReport()
        var unchecked: [Int: EpochKey] = [:]
        // 1. Heads.
        var keyOf = [EpochKey?](repeating: nil, count: n)
        var verifiedFrom = [[UInt8]?](repeating: nil, count: n)  // the previous head a head verified from
        var computedFrom = [[UInt8]](repeating: CommitChain.genesisHead, count: n)  // a mismatch: its stored previous head
        var computed: [[UInt8]] = []
        computed.reserveCapacity(n)
        var firstHolding: [HeadKey: Int] = [:]  // a stored head (or a mismatch's computed head) → the first commit holding it
        firstHolding.reserveCapacity(n)
        var otherWithHead: [HeadKey: Int] = [:]  // stored head → the first mismatch or unverifiable commit storing it
        var mismatchWithComputedHead: [HeadKey: Int] = [:]  // a mismatch's computed head (≠ its stored head) → the first such
        var bridge = [[UInt8]?](repeating: nil, count: n)  // a mismatch's previous head, by its repaired digest
        var storedKeys: [HeadKey] = []  // each commit's stored head, as a map key
        storedKeys.reserveCapacity(n)
        var fromKeys = [HeadKey?](repeating: nil, count: n)  // a verified head's previous head, as a map key (nil for h_0)
        let trustedGroups = trustedPrefixGroupCount
        for k in 0..<n {
            let group = groups[k]
            let frame = structure.frames[group.commitFrame]
            let stored = group.storedHead
            let candidates = keys.keys(for: frame.header.keyID)
            let storedKey = HeadKey(stored)
            storedKeys.append(storedKey)
            guard let first = candidates.first else {
                computed.append(stored)
                if otherWithHead[storedKey] == nil { otherWithHead[storedKey] = k }
                continue
            }
            keyOf[k] = first
            let previous = group.storedPreviousHead
            let before = k == 0 ? CommitChain.genesisHead : groups[k - 1].storedHead
            // The head covers the stored attestation (body 64..<200, sixth
            // review R6-1): it is verified with the rest, before any
            // attestation is opened.
            let storedAttestation = CommitChain.storedAttestation(body: group.commitBody)
            func verifies(_ key: EpochKey, from prev: [UInt8], digest: [UInt8]) -> Bool {
                headVerifications += 1
                return
                    (try? CommitChain.head(
                        key: key, vaultID: vaultID, previousHead: prev, digest: digest, commitHeader: frame.header,
                        storedAttestation: storedAttestation))
                    .map { constantTimeEqual($0, stored) } ?? false
            }
            // The stored previous head, then — a damaged previous-head field —
            // the stored head of the commit before it in the file.
            let alsoBefore = previous != before
            var found: (EpochKey, [UInt8])?
            // A commit of the cached prefix under the one held key of its id:
            // its head verified from its stored previous head when this
            // device wrote the cache, from the same bytes under the same key
            // (trustedPrefixHeads), which is what the loop below would find
            // first.
            if k < trustedGroups, candidates.count == 1 { found = (first, previous) }
            // A head ``linearChainReport(known:)`` verified from its stored
            // previous head before it found the file not linear: the key
            // the loop below would find first.
            if k < known.count { found = (known[k], previous) }
            for key in candidates where found == nil {
                if verifies(key, from: previous, digest: group.digest) {
                    found = (key, previous)
                    break
                }
                if alsoBefore, verifies(key, from: before, digest: group.digest) {
                    found = (key, before)
                    break
                }
            }
            if let (key, prev) = found {
                keyOf[k] = key
                verifiedFrom[k] = prev
                // Only a head that verifies (or a mismatch's computed head)
                // is held for "stands in its place": a junk commit that
                // stores a head places nothing (fifth review F6).
                firstHolding[storedKey, default: k] += 0  // inserts k only when absent: one lookup
                if prev != CommitChain.genesisHead { fromKeys[k] = HeadKey(prev) }
                computed.append(stored)
            } else {
                if otherWithHead[storedKey] == nil { otherWithHead[storedKey] = k }
                let head =
                    (try? CommitChain.head(
                        key: first, vaultID: vaultID, previousHead: previous, digest: group.digest, commitHeader: frame.header,
                        storedAttestation: storedAttestation))
                    ?? previous
                computed.append(head)
                computedFrom[k] = previous
                if head != stored {
                    let headKey = HeadKey(head)
                    if mismatchWithComputedHead[headKey] == nil { mismatchWithComputedHead[headKey] = k }
                    firstHolding[headKey, default: k] += 0
                }
                // A body hash hit by damage breaks the group digest, not the
                // chain: with each frame's trailer recomputed from its intact
                // body, the head may still verify, which shows what the
                // mismatch chains from.
                if let repaired = repairedDigest(group) {
                    let tries = alsoBefore ? [previous, before] : [previous]
                    bridge[k] = tries.first { prev in candidates.contains { verifies($0, from: prev, digest: repaired) } }
                }
            }
        }
        // Originals and copies. Of the commits whose heads verify and store
        // one head, the original is the first in file order whose head
        // verifies from h_0 or from a head a commit before it holds (a head
        // that verifies, or a mismatch's computed head) — it
        // stands in its place — else the first; the others are copies. So
        // a byte copy placed before its original is the copy, and a group
        // moved before the one it extends (two groups swapped) is still the
        // original. (A junk commit that copies a commit's head does not
        // verify, so it cannot make that commit a copy.)
        let headVerifies = verifiedFrom.map { $0 != nil }
        // (The usual commit extends the one just before it in the file: no
        // lookup then.)
        func inPlace(_ k: Int) -> Bool {
            guard let from = fromKeys[k] else { return true }  // h_0
            if k > 0 && headVerifies[k - 1] && from == storedKeys[k - 1] { return true }
            return firstHolding[from].map { $0 < k } ?? false
        }
        var original: [HeadKey: Int] = [:]  // stored head → its original (negative, −1 − k, while not in place)
        original.reserveCapacity(n)
        var shared: [HeadKey: [Int]] = [:]  // a head more than one verified head stores → those commits, in file order
        for k in 0..<n where headVerifies[k] {
            let mine = inPlace(k) ? k : -1 - k
            // One lookup in the usual case (a head stored once).
            guard let o = original.updateValue(mine, forKey: storedKeys[k]) else { continue }
            if o >= 0 || mine < 0 { original[storedKeys[k]] = o }  // the earlier one stays the original
            shared[storedKeys[k], default: [o < 0 ? -1 - o : o]].append(k)
        }
        // Where heads are shared — never in an honest file — the original
        // is chosen first among those a current member attested, then by
        // the rule above (fifth review F1, when the head did not cover the
        // attestation bytes). The head now covers them (sixth review R6-1),
        // so commits sharing a verified head carry one attestation and this
        // changes no choice (Spec/format.md §9.3 "Copies": a reader MAY skip
        // it); it stays as a guard, run only where heads are shared.
        for (head, ks) in shared {
            let results = ks.map { attestation(of: groups[$0], previousHead: verifiedFrom[$0]!, key: keyOf[$0]!) }
            let attested = ks.indices.filter { if case .attested = results[$0] { return true } else { return false } }
            guard let chosen = attested.first(where: { inPlace(ks[$0]) }) ?? attested.first else { continue }
            original[head] = ks[chosen]
        }
        func originalIndex(_ key: HeadKey) -> Int? { original[key].map { $0 < 0 ? -1 - $0 : $0 } }
        var isCopy = headVerifies
        for o in original.values { isCopy[o < 0 ? -1 - o : o] = false }
        // Where a previous head leads: h_0, the original that stores it
        // (anywhere in the file), or — through a mismatch — what that
        // mismatch's content is shown to chain from.
        var vouched = [Bool](repeating: false, count: n)
        func resolveVerified(_ value: [UInt8]) -> Predecessor {
            if value == CommitChain.genesisHead { return .start }
            if let o = originalIndex(HeadKey(value)) { return .commit(o) }
            return .notShown
        }
        func predecessor(of k: Int) -> Predecessor {
            guard let key = fromKeys[k] else { return .start }
            // The usual case: it extends the commit just before it, an original.
            if k > 0 && headVerifies[k - 1] && !isCopy[k - 1] && key == storedKeys[k - 1] { return .commit(k - 1) }
            if let o = originalIndex(key) { return .commit(o) }
            if let j = otherWithHead[key] {
                guard keyOf[j] != nil else { return .notShown }  // unverifiable
                // A mismatch a commit chains from by its stored head was
                // intact when that commit was written.
                vouched[j] = true
                return bridge[j].map { resolveVerified($0) } ?? .notShown
            }
            // Only the mismatch's stored head was hit: its content chains
            // from its stored previous head.
            if let j = mismatchWithComputedHead[key] { return resolveVerified(computedFrom[j]) }
            return .missing
        }
        // A copy takes no link; every other commit whose head verifies links.
        var links = [Predecessor?](repeating: nil, count: n)
        for k in 0..<n where headVerifies[k] && !isCopy[k] { links[k] = predecessor(of: k) }
        // 2. In walk order: the chain, stale, attestation.
        var statuses = [CommitReport.Status](repeating: .mismatch, count: n)
        var attestations = [CommitReport.Attestation](repeating: .notChecked, count: n)
        var raisedTo = [UInt32](repeating: 0, count: n)  // what a verified commit a current member attested raises the floor to
        // The highest epoch of a trusted keyring with an intact copy in each
        // group: found from the few trusted keyrings, not from every frame.
        let (keyringEpochIn, ownKeyEpoch) = keyringEpochs { keyOf[$0] }
        // The epoch of each commit's key (Spec/format.md §9.3, ninth review
        // R9-4): that of a trusted keyring of that key in its own group, else
        // the one the commit it links to under the same key took (set in the
        // walk), else the key's own (§5.1: the highest a trusted keyring
        // claims). So a member that claims a current key at a lower epoch
        // elsewhere, or an old one at a higher, changes no commit's epoch on
        // a line that holds the key's keyring.
        var keyEpoch = keyOf.map { $0?.epoch ?? 0 }
        // The floor along each commit's own line: what the member-attested
        // verified commits it links to, transitively, raised it to (before
        // it, then with it). Staleness is judged by it, so a commit the
        // walk visited that is not on this commit's line raises nothing for
        // it (fifth review F2). Where a commit's link shows nothing or names
        // a missing head, its line is taken through `e`. The linked line is
        // the same with nothing taken through `e`: a commit a current member
        // attested is judged by it (sixth review R6-2, Part 2 item 4).
        var lineFloor = [UInt32](repeating: 0, count: n)
        var lineAfter = [UInt32](repeating: 0, count: n)
        var linkedFloor = [UInt32](repeating: 0, count: n)
        var linkedAfter = [UInt32](repeating: 0, count: n)
        var chain: [Int] = []  // the commits on the chain so far
        var clearBelow: [Int?] = []  // chain[clearBelow[i]! + 1 ... i] holds no member-attested commit
        var position = [Int](repeating: -1, count: n)
        var walkPositions = [Int](repeating: -1, count: n)  // each commit's place in the walk
        var walked = 0
        var forks: Set<Int> = []
        var overDeletion: Set<Int> = []
        func memberAttested(_ j: Int) -> Bool {
            if case .notChecked = attestations[j], let key = unchecked[j] {
                attestations[j] = attestation(of: groups[j], previousHead: verifiedFrom[j]!, key: key)
                unchecked[j] = nil
            }
            if case .attested = attestations[j] { return true }
            return false
        }
        // The highest position above `low` on the chain whose commit a
        // current member attested; positions found clear are remembered, so
        // each is looked at once however many commits link past it.
        func lastMemberAttested(above low: Int) -> Int? {
            var i = chain.count - 1
            var seen: [Int] = []
            var hit: Int? = nil
            while i > low {
                if let below = clearBelow[i] {
                    seen.append(i)
                    i = below
                    continue
                }
                if memberAttested(chain[i]) {
                    hit = i
                    break
                }
                seen.append(i)
                i -= 1
            }
            for s in seen { clearBelow[s] = i }
            return hit
        }
        // Commit k, verified, joins the chain as its tip; its attestation
        // and the floor.
        func join(_ k: Int, key: EpochKey) {
            let group = groups[k]
            let line = lineFloor[k]
            let epoch = keyEpoch[k]
            position[k] = chain.count
            chain.append(k)
            clearBelow.append(nil)
            statuses[k] = .verified
            // The attestation decides the floor only where the commit would
            // raise it; elsewhere it is checked when first asked for (an
            // Ed25519 check each, most of the cost of opening a vault written
            // one commit at a time).
            if case .notChecked = attestations[k] {
                if epoch > line || (keyringEpochIn[k] ?? 0) > line {
                    attestations[k] = attestation(of: group, previousHead: verifiedFrom[k]!, key: key)
                } else {
                    unchecked[k] = key
                }
            }
            // The floor rises only where a current member vouches for it: a
            // verified commit it attested raises it to its own key's epoch
            // and to that of every trusted keyring it holds an intact copy of
            // (Spec/format.md §9.3). A copy placed elsewhere counts for
            // nothing. (A commit the chain later passes by was not attested
            // by a member, so it raised nothing.)
            if case .attested = attestations[k] {
                let raised = max(epoch, keyringEpochIn[k] ?? 0)
                raisedTo[k] = raised
                lineAfter[k] = max(line, raised)
                linkedAfter[k] = max(linkedFloor[k], raised)
            }
        }
        func visit(_ k: Int) {
            let group = groups[k]
            guard let key = keyOf[k] else {
                statuses[k] = .unverifiable
                return
            }
            guard headVerifies[k] else { return }  // a mismatch (tampered decided below)
            // A copy takes no link.
            guard let link = links[k] else {
                statuses[k] = .orphaned
                return
            }
            // The floor along its own line: through the commit it links to
            // (when its link shows nothing, the last commit on the chain a
            // current member attested, `e`), and its linked line: the same
            // with nothing taken through `e`.
            switch link {
            case .start:
                lineFloor[k] = 0
                linkedFloor[k] = 0
            case .commit(let j):
                lineFloor[k] = lineAfter[j]
                linkedFloor[k] = linkedAfter[j]
            case .notShown, .missing:
                lineFloor[k] = lastMemberAttested(above: -1).map { lineAfter[chain[$0]] } ?? 0
                linkedFloor[k] = 0
            }
            lineAfter[k] = lineFloor[k]
            linkedAfter[k] = linkedFloor[k]
            if let own = ownKeyEpoch[k] {
                keyEpoch[k] = own
            } else if case .commit(let j) = link, let before = keyOf[j], before.commitment == key.commitment {
                keyEpoch[k] = keyEpoch[j]
            }
            let epoch = keyEpoch[k]
            // Stale below its own group: a commit holding a trusted keyring
            // is made under a key of at least that keyring's epoch — a new
            // epoch's commit under the new key (seventh review R7-3) — so
            // one under an older key was made again by a holder of that key
            // (a member the keyring removes, say). No attestation exempts it.
            if let own = keyringEpochIn[k], epoch < own {
                statuses[k] = .stale(epoch: epoch, current: own)
                return
            }
            // Stale below its line: made by a device that missed the
            // rotation, or one removed by it. A commit a current member
            // attested is stale only below its linked line: the file order
            // of linkless commits places `e` anywhere, and a removed device
            // cannot make a current member's attestation (sixth review R6-2,
            // Part 2 item 4); the commits after it still take the line
            // through `e`. Its attestation is checked only where the two
            // lines judge it differently (never in a file whose commits all
            // link to a commit).
            if epoch < lineFloor[k] {
                var member = false
                if epoch >= linkedFloor[k] {
                    attestations[k] = attestation(of: group, previousHead: verifiedFrom[k]!, key: key)
                    if case .attested = attestations[k] { member = true } else { attestations[k] = .notChecked }
                }
                if !member {
                    // It passes nothing by.
                    statuses[k] = .stale(epoch: epoch, current: lineFloor[k])
                    return
                }
            }
            let top = chain.count - 1
            var target: Int
            var extendsMissing = false
            // A commit a current member attested that links to a commit
            // whose head verifies is verified wherever that commit stands:
            // its signature vouches for its group and the head it extends.
            // Its attestation is checked here, where it would be orphaned.
            func memberFork(_ k: Int) -> Bool {
                attestations[k] = attestation(of: group, previousHead: verifiedFrom[k]!, key: key)
                guard case .attested = attestations[k] else {
                    attestations[k] = .notChecked
                    return false
                }
                forks.insert(k)
                return true
            }
            switch link {
            case .start:
                target = -1
            case .commit(let j):
                guard position[j] >= 0 else {
                    // It continues what the chain passed by or left: a fork,
                    // a stale or orphaned commit, or another line. Orphaned,
                    // unless a current member attested it: then the chain
                    // goes on from it alone, the commits on it keeping their
                    // verdicts. (The walk reached j before k: it links to it.)
                    guard memberFork(k) else {
                        statuses[k] = .orphaned
                        return
                    }
                    for j in chain { position[j] = -1 }
                    chain.removeAll()
                    clearBelow.removeAll()
                    join(k, key: key)
                    return
                }
                target = position[j]
            case .notShown, .missing:
                // The reader cannot tell which commits before it are genuine:
                // it passes by those after the last a current member attested.
                target = lastMemberAttested(above: -1) ?? -1
                if case .missing = link { extendsMissing = true }
            }
            if target < top, lastMemberAttested(above: target) != nil {
                // It links past a commit a current member attested: a fork,
                // orphaned unless a current member attested it too. Then
                // both lines stay verified: the commits it links past leave
                // the chain, which goes on from it, but keep their verdicts.
                guard memberFork(k) else {
                    statuses[k] = .orphaned
                    return
                }
                for p in stride(from: top, to: target, by: -1) { position[chain[p]] = -1 }
                chain.removeSubrange((target + 1)...)
                clearBelow.removeSubrange((target + 1)...)
                join(k, key: key)
                return
            }
            for p in stride(from: top, to: target, by: -1) {
                let j = chain[p]
                if statuses[j] != .tampered { statuses[j] = .orphaned }
                attestations[j] = .notChecked
                unchecked[j] = nil
                position[j] = -1
            }
            chain.removeSubrange((target + 1)...)
            clearBelow.removeSubrange((target + 1)...)
            if extendsMissing {
                // No commit of the file stores the head it extends: that
                // commit was deleted, and writers refuse to write (§9.1).
                // A current member's signature still vouches for its own
                // group and the head it extends: it is verified and
                // attested, tampered only at vault level (fifth review F4).
                // Its attestation is checked here, where something is off.
                attestations[k] = attestation(of: group, previousHead: verifiedFrom[k]!, key: key)
                if case .attested = attestations[k] {
                    overDeletion.insert(k)
                    join(k, key: key)
                    return
                }
                attestations[k] = .notChecked
                // Otherwise it holds the chain's place (the commits after
                // it extend it) but is not verified.
                position[k] = chain.count
                chain.append(k)
                clearBelow.append(nil)
                statuses[k] = .tampered
                return
            }
            join(k, key: key)
        }
        // The walk (Spec/format.md §9.3): depth first over the link tree,
        // each commit followed by its subtree; the children of a commit
        // (and of the start) in ascending stored-head order, so moving whole
        // groups changes nothing (fifth review F3). First the start's
        // subtree, then, in file order, each commit that links to no
        // commit (its link shows nothing or names a missing head; a copy,
        // a mismatch, an unverifiable commit) with its subtree. An explicit
        // stack, no recursion: a file of reversed groups is as deep as it
        // is long (F11). Children are kept as one flat array by parent.
        var childStart = [Int32](repeating: 0, count: n + 2)  // parent p's children: childStart[p]..<childStart[p + 1]; p = n is the start
        for k in 0..<n {
            switch links[k] {
            case .commit(let j)?: childStart[j + 1] += 1
            case .start?: childStart[n + 1] += 1
            default: break
            }
        }
        for p in 0..<(n + 1) { childStart[p + 1] += childStart[p] }
        var children = [Int32](repeating: 0, count: Int(childStart[n + 1]))
        var fill = childStart
        for k in 0..<n {
            let parent: Int
            switch links[k] {
            case .commit(let j)?: parent = j
            case .start?: parent = n
            default: continue
            }
            children[Int(fill[parent])] = Int32(k)
            fill[parent] += 1
        }
        for p in 0...n where childStart[p + 1] - childStart[p] > 1 {
            // Siblings exist only where something is off: sort them by stored head.
            let range = Int(childStart[p])..<Int(childStart[p + 1])
            children[range].sort { groups[Int($0)].storedHead.lexicographicallyPrecedes(groups[Int($1)].storedHead) }
        }
        var stack: [Int] = []
        // Each commit once, in link order, to `body`: the start's subtree,
        // then in file order each commit that links to no commit (its link
        // shows nothing or names a missing head; a copy, a mismatch, an
        // unverifiable commit) with its subtree, children in the order of
        // `children`; then each commit never reached to `unreached`.
        func inLinkOrder(_ body: (Int) -> Void, unreached: (Int) -> Void) {
            var seen = [Bool](repeating: false, count: n)
            func descend(from root: Int) {
                // The root (n: the start) and then its subtree, children in order.
                stack.append(root)
                while let c = stack.popLast() {
                    if c < n {
                        body(c)
                        seen[c] = true
                    }
                    var i = Int(childStart[c + 1])
                    let low = Int(childStart[c])
                    while i > low {
                        i -= 1
                        stack.append(Int(children[i]))
                    }
                }
            }
            descend(from: n)
            for k in 0..<n where !seen[k] {
                switch links[k] {
                case .commit?, .start?: continue  // reached through its link, or never (a cycle, below)
                default: descend(from: k)
                }
            }
            for k in 0..<n where !seen[k] { unreached(k) }
        }
        // A commit never reached links into a cycle (a head that chains to
        // itself through links: no key holder can compute one, so this is
        // only defensive): it is orphaned.
        inLinkOrder(
            { c in
                visit(c)
                walkPositions[c] = walked
                walked += 1
            },
            unreached: { k in
                statuses[k] = .orphaned
                walkPositions[k] = walked
                walked += 1
            })
        // Merge's link order (Spec/merge.md §3.3): the walk again, but of
        // the children of one commit, the one on the line to the chain's tip
        // first, so that merge keeps in place the line writers extend and
        // moves (and attests again) the other (sixth review R6-5). Only a
        // file with siblings differs from the walk.
        if let tip = chain.last {
            var onTipLine = [Bool](repeating: false, count: n + 1)
            var c = tip
            var hasSiblings = false
            while true {
                onTipLine[c] = true
                let parent: Int
                switch links[c] {
                case .commit(let j)?: parent = j
                case .start?: parent = n
                default: parent = -1
                }
                guard parent >= 0, !onTipLine[parent] else { break }
                if childStart[parent + 1] - childStart[parent] > 1 {
                    hasSiblings = true
                    let range = Int(childStart[parent])..<Int(childStart[parent + 1])
                    if var i = range.first(where: { Int(children[$0]) == c }) {
                        while i > range.lowerBound {
                            children.swapAt(i, i - 1)
                            i -= 1
                        }
                    }
                }
                if parent == n { break }
                c = parent
            }
            if hasSiblings {
                walked = 0
                func place(_ c: Int) {
                    walkPositions[c] = walked
                    walked += 1
                }
                inLinkOrder(place, unreached: place)
            }
        }
        // floor_k: the highest epoch a verified commit that a current member
        // attested raised the floor to, over the commits before k in the
        // file. It decides only which keys open the records of a commit that
        // is not verified (staleness goes by the line floor). A verified
        // commit whose attestation was left unchecked raised nothing on its
        // own line; it is checked here only where it would raise this floor
        // (never in a file whose groups were never moved).
        var floors = [UInt32](repeating: 0, count: n)
        var floor: UInt32 = 0
        for k in 0..<n {
            floors[k] = floor
            guard statuses[k] == .verified, keyOf[k] != nil else { continue }
            if case .notChecked = attestations[k], unchecked[k] != nil {
                let raised = max(keyEpoch[k], keyringEpochIn[k] ?? 0)
                guard raised > floor, memberAttested(k) else { continue }
                raisedTo[k] = raised
            }
            if case .attested = attestations[k] { floor = max(floor, raisedTo[k]) }
        }
        // 3. A mismatch that a commit chains from by its stored head, with
        // nothing in its group damaged, was tampered with.
        for k in 0..<n where keyOf[k] != nil && !headVerifies[k] {
            statuses[k] = vouched[k] && !groupIsDamaged(groups[k]) ? .tampered : .mismatch
        }
        report.statuses = statuses
        report.attestations = attestations
        report.floors = floors
        report.computedHeads = computed
        report.epochs = zip(keyOf, keyEpoch).map { $0.0 == nil ? 0 : $0.1 }
        report.previousHeads = verifiedFrom
        report.walkPositions = walkPositions
        report.tipPosition = chain.last.map { walkPositions[$0] } ?? -1
        report.tipGroup = chain.last ?? -1
        report.linkParents = links.map { if case .commit(let j)? = $0 { j } else { -1 } }
        report.forks = forks
        report.attestedOverDeletion = overDeletion
        report.currentFloor = floor
        report.tipLineFloor = chain.last.map { lineAfter[$0] } ?? 0
        // A writer chains from the last commit the walk put on the chain (in
        // link order), or from h_0 when none is: never from a copy, a fork
        // or a stale commit.
        report.tipHead = chain.last.map { groups[$0].storedHead } ?? CommitChain.genesisHead
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
            // A plaintext frame's body hash was checked when it was scanned:
            // an intact one needs no second hash (a flood of keyrings is
            // megabytes of them).
            if !f.header.isSealed && f.checksumIntact == true {
                digest.add(header: f.headerBytes, trailer: f.trailer)
                continue
            }
            let commitment: [UInt8]? = f.header.isSealed ? keys.keys(for: f.header.keyID).first?.commitment : []
            guard let commitment else {
                digest.add(header: f.headerBytes, trailer: f.trailer)
                continue
            }
            guard
                let hash = try? window.withBytes(
                    f.bodyOffset, Int(f.header.bodyLength),
                    { (body: UnsafeRawBufferPointer) throws(FormatError) -> [UInt8] in
                        let content = UnsafeRawBufferPointer(rebasing: body[0..<(body.count - FrameHeader.bodyHashByteCount)])
                        return f.header.isSealed
                            ? SealedFrame.sealedBodyHash(keyCommitment: commitment, content) : SealedFrame.bodyHash(content)
                    })
            else { return nil }
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
            let intact =
                (try? window.withBytes(f.bodyOffset, Int(f.header.bodyLength)) {
                    (body: UnsafeRawBufferPointer) throws(FormatError) -> Bool in
                    candidates.contains { SealedFrame.sealedBodyHashMatches(body, keyCommitment: $0.commitment) }
                }) ?? false
            if !intact { return true }
        }
        return false
    }

    /// The attestation of a verified commit (`Spec/format.md §9.4`) whose
    /// head verified from `previousHead`; `signatureVerified` as
    /// ``CommitChain/checkAttestation(body:previousHead:digest:key:vaultID:commitHeader:signatureVerified:)``
    /// takes it, and `own` the key pair whose signatures it recognizes by
    /// signing again.
    func attestation(
        of group: CommitGroup, previousHead: [UInt8], key: EpochKey, signatureVerified: Bool = false,
        recognizing own: Ed25519.KeyPair? = nil
    ) -> CommitReport.Attestation {
        let header = structure.frames.header(at: group.commitFrame)
        switch CommitChain.checkAttestation(
            body: group.commitBody, previousHead: previousHead, digest: group.digest, key: key, vaultID: vaultID, commitHeader: header,
            signatureVerified: signatureVerified, recognizing: own)
        {
        case .unattested: return .unattested
        case .failed(let reason): return .failed(reason: reason)
        case .signed(let signer):
            if removedMembers.contains(signer) { return .removedMember(signer: signer) }
            return attestors.contains(signer) ? .attested(signer: signer) : .failed(reason: "the signer is not a member of this vault")
        }
    }

    /// Finds ``CommitReport/removalAncestors`` when it is not known yet
    /// (`Spec/format.md §9.4` step 5, eleventh review R11-2): from each
    /// commit that holds an intact copy of a keyring in ``removals`` and that
    /// a current member attested, the reader walks up its links (one per
    /// commit, so a path), and each commit on it attested by a member that
    /// keyring removes ranks as a current member's. A walk stops at a
    /// commit already walked for the same removed keys, so each commit is
    /// looked at once per distinct `removed` list: linear in the file. Only
    /// the removal commits' attestations are checked here; an ancestor's is
    /// checked when its records are read (``forEachRecord(kinds:in:_:)``).
    func findRemovalAncestorsLocked() {
        guard verdicts.removalAncestors == nil else { return }
        guard !removals.isEmpty, !removedMembers.isEmpty else {
            verdicts.removalAncestors = [:]
            return
        }
        var removing: [Int: Set<[UInt8]>] = [:]  // removal commit group → keys its keyrings remove
        for (frame, keys) in removals {
            guard let g = structure.groupIndex(ofFrame: frame), g < verdicts.statuses.count, verdicts.statuses[g] == .verified else {
                continue
            }
            removing[g, default: []].formUnion(keys)
        }
        checkAttestations(of: Array(removing.keys))
        var candidates: [Int: Set<[UInt8]>] = [:]  // ancestor group → keys removed after it
        var walked: [Int: [Set<[UInt8]>]] = [:]
        let parents = verdicts.linkParents
        let positions = verdicts.walkPositions
        // Descendants first (the link order is depth first, so a commit's
        // descendants come after it): a removal a removed member wrote
        // counts when it ranks as a current member's itself — a link
        // ancestor of a later removal of its signer (a lockdown after a
        // device removed another).
        for (r, keys) in removing.sorted(by: { positions[$0.key] > positions[$1.key] }) {
            let counts =
                verdicts.isAttested(r) || verdicts.removedAttestor(r).map { candidates[r]?.contains($0) == true } == true
            guard counts else { continue }
            var a = r < parents.count ? parents[r] : -1
            while a >= 0 {
                if walked[a, default: []].contains(keys) { break }
                walked[a, default: []].append(keys)
                candidates[a, default: []].formUnion(keys)
                a = a < parents.count ? parents[a] : -1
            }
        }
        verdicts.removalAncestors = candidates
    }

    /// Checks the attestations of those of `groups` still unchecked and
    /// records them, on every core: the checks are independent of one
    /// another and of the chain. `own`'s signatures are recognized by
    /// signing again (``CommitChain/checkAttestation(body:previousHead:digest:key:vaultID:commitHeader:signatureVerified:recognizing:)``).
    func checkAttestations(of groups: [Int], recognizing own: Ed25519.KeyPair? = nil) {
        let jobs = groups.compactMap { g in uncheckedAttestations[g].map { (group: g, key: $0) } }
        guard !jobs.isEmpty else { return }
        var results = [CommitReport.Attestation](repeating: .notChecked, count: jobs.count)
        // The signatures of the cached prefix's commits verified, on these
        // very bytes and keys, before this device wrote its index cache
        // (`Spec/index-cache.md §5`, "The chain"): one Ed25519 verification
        // (about 60 µs) a commit is most of a full read of a vault written
        // an entry a commit. Opened and judged as any other.
        let trusted = trustedPrefixGroupCount
        signatureVerifications += jobs.count(where: { $0.group >= trusted })
        if jobs.count == 1 {
            results[0] = attestation(
                of: structure.groups[jobs[0].group], previousHead: verdicts.previousHeads[jobs[0].group]!, key: jobs[0].key,
                signatureVerified: jobs[0].group < trusted, recognizing: own)
        } else {
            let groups = structure.groups
            let previous = verdicts.previousHeads
            results.withUnsafeMutableBufferPointer { out in
                let slots = UncheckedMutableBuffer(out)
                DispatchQueue.concurrentPerform(iterations: jobs.count) { i in
                    slots.buffer[i] = attestation(
                        of: groups[jobs[i].group], previousHead: previous[jobs[i].group]!, key: jobs[i].key,
                        signatureVerified: jobs[i].group < trusted, recognizing: own)
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
        let groups = unknownCriticalFramesLocked.groups.filter { uncheckedAttestations[$0] != nil }
        checkAttestations(of: groups)
    }

    /// The committed frames of a critical kind this reader does not know
    /// and their commit groups (``unknownCriticalCache``, found when not
    /// known). Under the lock.
    var unknownCriticalFramesLocked: UnknownCriticalFrames {
        if let unknownCriticalCache { return unknownCriticalCache }
        unknownCriticalSearchCount += 1
        var found = UnknownCriticalFrames()
        found.extend(to: structure.committedFrameCount, of: structure)
        unknownCriticalCache = found
        return found
    }

    /// Commit recovery (`Spec/format.md §10.3`): a tail of whole frames
    /// followed by exactly one commit's worth of bytes whose header is
    /// damaged but whose head verifies under a held key, from the previous
    /// head it stores or (that field damaged too) the last commit's stored
    /// head, as in `Spec/format.md §9.3`. Returns true when it recovered the
    /// commit.
    func recoverDamagedLastCommit() -> Bool {
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
        let last = s.groups.last?.storedHead ?? CommitChain.genesisHead
        let storedPrevious = CommitChain.storedPreviousHead(body: body)
        let previous = storedPrevious == last ? [storedPrevious] : [storedPrevious, last]
        var candidates = keys.all
        for key in recoveryKeys where !candidates.contains(where: { $0.commitment == key.commitment }) { candidates.append(key) }
        let ordered = candidates.sorted {
            $0.epoch != $1.epoch ? $0.epoch > $1.epoch : $0.commitment.lexicographicallyPrecedes($1.commitment)
        }
        for key in ordered {
            let header = CommitChain.commitHeader(keyID: key.id)
            guard
                previous.contains(where: { prev in
                    (try? CommitChain.head(key: key, vaultID: vaultID, previousHead: prev, digest: d, commitHeader: header, body: body))
                        .map { constantTimeEqual($0, stored) } ?? false
                })
            else { continue }
            let index = s.frames.count
            var frame = ScannedFrame(
                location: FrameLocation(offset: lastFrame.end, index: index), header: header, headerBytes: header.encoded(),
                trailer: stored, repaired: true, chunk: nil, plaintextBody: nil, checksumIntact: nil, malformation: nil)
            frame.commitBody = body
            structure.frames.append(frame)
            structure.groups.append(
                CommitGroup(
                    commitFrame: index, members: s.uncommittedFrames, digest: d, storedHead: stored, commitBody: body, containsDamage: false
                ))
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
            return .tornTail(
                offset: structure.committedEnd, byteCount: structure.tailByteCount, uncommittedFrameCount: structure.uncommittedFrames.count
            )
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

    /// The stored head the next commit extends: that of the last commit on
    /// the chain, or `h_0` (`Spec/format.md §9.1`).
    public var chainTipHead: [UInt8] {
        lock.withLock { verdicts.tipHead }
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
            // The head verified from the commit before it, not from the
            // stored previous head: that field is damaged (§9.3 step 2).
            if g < commits.previousHeads.count, let from = commits.previousHeads[g], !structure.groups[g].storesPreviousHead(from) {
                out.append(.previousHeadRepaired(loc))
            }
            switch status {
            case .verified:
                if commits.forks.contains(g) { out.append(.commitFork(loc)) }
                if commits.attestedOverDeletion.contains(g) { out.append(.commitTampered(loc)) }
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
    /// know whose commit is verified and attested by a current member: no
    /// record of the vault may be released or written, while keyrings are
    /// still read and key changes still written (`Spec/format.md §4.3`).
    /// Call after verifying.
    public var fatalCriticalKind: FormatError? {
        lock.withLock {
            checkAttestationsOfUnknownCriticalKinds()
            let commits = verdicts
            // The groups in file order, and their members: the first such
            // frame of a verified, attested commit.
            let found = unknownCriticalFramesLocked
            for i in found.frames {
                guard let g = structure.groupIndex(ofFrame: i), g < commits.statuses.count,
                    commits.statuses[g] == .verified, commits.isAttested(g)
                else { continue }
                return .unknownCriticalKind(structure.frames.location(at: i), kind: structure.frames.kind(at: i).rawValue)
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
            for i in unknownCriticalFramesLocked.frames {
                let kind = structure.frames.kind(at: i)
                if let g = structure.groupIndex(ofFrame: i), g < commits.statuses.count,
                    commits.statuses[g] == .verified, commits.isAttested(g)
                {
                    continue
                }
                out.append(.unknownCriticalKind(structure.frames.location(at: i), kind: kind.rawValue))
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

    /// The head each commit group's head verified from
    /// (``CommitReport/previousHeads``), without checking any attestation:
    /// merge orders its blocks by them (`Spec/merge.md §3.3`).
    package var commitPreviousHeads: [[UInt8]?] {
        lock.withLock { verdicts.previousHeads }
    }

    /// Each commit group's place in the walk (``CommitReport/walkPositions``):
    /// merge places its blocks in this order (`Spec/merge.md §3.3`).
    package var commitWalkPositions: [Int] {
        lock.withLock { verdicts.walkPositions }
    }

    /// True when commit group `g` ranks with a current member's standing
    /// (``CommitReport/ranksAsMember(_:)``, `Spec/format.md §9.4` step 5).
    package func ranksAsMember(group g: Int) -> Bool {
        lock.withLock {
            guard g < verdicts.attestations.count else { return false }
            checkAttestations(of: [g])
            findRemovalAncestorsLocked()
            return verdicts.ranksAsMember(g)
        }
    }

    /// Merge only (`Spec/merge.md §3.2`, "Standing in a merge", twelfth
    /// review R12-3): commit groups `groups` of this file, each verified and
    /// attested by a removed member, rank with a current member's standing
    /// from now on, because the other file of the merge holds the same
    /// commit (the same stored head, verified) and ranks it so there — a
    /// link ancestor of its signer's removal in that file. Every standing
    /// this handle reports follows (``standing(ofFrame:)``, blob reads,
    /// ``ranksAsMember(group:)``); the next verification of the commits
    /// forgets them. Groups of another attestation are ignored.
    package func ranksAsMember(inMerge groups: some Sequence<Int>) {
        lock.withLock {
            for g in groups where g < verdicts.attestations.count {
                checkAttestations(of: [g])
                guard verdicts.removedAttestor(g) != nil, verdicts.statuses[g] == .verified else { continue }
                verdicts.ranksAsMemberInMerge.insert(g)
            }
        }
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

    /// Checks the attestations of commit groups `groups` not checked yet
    /// (those past the last group ignored) in parallel, on every core:
    /// each signature is verified alone on its own inputs (no Ed25519
    /// batch equation), so the verdicts are the ones
    /// ``attestation(ofGroup:)`` gives one at a time, each in its group's
    /// place. Merge asks so for the commits it carries (200 Ed25519
    /// verifications in a merge of two devices' 100 commits each). `own`:
    /// a key pair whose signatures are recognized by signing the message
    /// again, a third of a verification's cost (the merging member's own
    /// commits; the verdicts are the same).
    package func checkAttestations(ofGroups groups: [Int], recognizing own: Ed25519.KeyPair? = nil) {
        lock.withLock {
            let count = verdicts.attestations.count
            var seen = Set<Int>()
            checkAttestations(of: groups.filter { $0 >= 0 && $0 < count && seen.insert($0).inserted }, recognizing: own)
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

    /// The members that attested a verified commit, by the key commitment
    /// of the epoch key each such commit is sealed under (the held key its
    /// head verifies with). A removal by the recovery key keeps in its
    /// ancestry a keyring a removed member signed when another member wrote
    /// under the epoch it starts (`Spec/keys.md §6.3`). Checks every
    /// attestation not checked yet.
    package func attestorsByEpochKey() -> [[UInt8]: Set<[UInt8]>] {
        lock.withLock {
            checkAttestations(of: Array(uncheckedAttestations.keys))
            var out: [[UInt8]: Set<[UInt8]>] = [:]
            for g in structure.groups.indices {
                guard let signer = verdicts.attestor(g), g < verdicts.previousHeads.count, let previous = verdicts.previousHeads[g]
                else { continue }
                let group = structure.groups[g]
                let header = structure.frames.header(at: group.commitFrame)
                let candidates = keys.keys(for: header.keyID)
                let attestation = CommitChain.storedAttestation(body: group.commitBody)
                let key =
                    candidates.count == 1
                    ? candidates.first
                    : candidates.first { key in
                        (try? CommitChain.head(
                            key: key, vaultID: vaultID, previousHead: previous, digest: group.digest, commitHeader: header,
                            storedAttestation: attestation))
                            .map { constantTimeEqual($0, group.storedHead) } ?? false
                    }
                if let key { out[key.commitment, default: []].insert(signer) }
            }
            return out
        }
    }
}

/// A buffer written by several threads at once, each at its own indices.
private struct UncheckedMutableBuffer<Element>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<Element>
    init(_ buffer: UnsafeMutableBufferPointer<Element>) { self.buffer = buffer }
}

/// The committed frames of a critical kind the reader does not know
/// (`Spec/format.md §4.3`), ascending, and the commit groups holding them,
/// ascending: what ``VaultFile/fatalCriticalKind`` and
/// ``VaultFile/skippedCriticalKinds`` look at. Nearly always empty.
struct UnknownCriticalFrames: Sendable {
    /// Frame indices.
    var frames: [Int] = []
    /// Commit group indices (each once).
    var groups: [Int] = []
    /// The number of frames looked at (frames `0 ..< end`).
    private(set) var end = 0

    /// Adds those of frames `end ..< count` of `structure` (committed
    /// frames).
    mutating func extend(to count: Int, of structure: VaultStructure) {
        defer { end = max(end, count) }
        for i in structure.frames.unknownCriticalFrameIndices(in: end..<max(end, count)) {
            frames.append(i)
            if let g = structure.groupIndex(ofFrame: i), groups.last != g { groups.append(g) }
        }
    }
}
