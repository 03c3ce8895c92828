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
/// with ``verifyCommits(keys:trustedKeyrings:attestors:)``, then read records
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
    /// The verdict on each commit group, after ``verifyCommits(keys:trustedKeyrings:attestors:)``,
    /// attestations included: reading it checks those not checked yet.
    public var commits: CommitReport {
        lock.withLock {
            checkAttestations(of: Array(uncheckedAttestations.keys))
            return verdicts
        }
    }
    /// The verdicts as they stand: the attestation of each group in
    /// ``uncheckedAttestations`` is still `.notChecked`.
    var verdicts: CommitReport
    /// Verified commit groups whose attestation has not been checked yet,
    /// with the key that verified each. ``verifyCommits(keys:trustedKeyrings:attestors:)``
    /// leaves every attestation for when it is needed: each is an Ed25519
    /// signature check (about 0.1 ms), most of the cost of opening a vault
    /// written one commit at a time, and nothing that opening decides needs
    /// them, except for the rare group holding an unknown critical kind.
    var uncheckedAttestations: [Int: EpochKey] = [:]
    /// The keys given to ``verifyCommits(keys:trustedKeyrings:attestors:)``.
    public internal(set) var keys: KeySet
    /// Frame index → epoch, for the keyrings the key layer trusts.
    public internal(set) var trustedKeyrings: [Int: UInt32]
    /// Ed25519 public keys of the members (devices and recovery keys) of
    /// trusted keyrings: who may attest a commit (`Spec/format.md §9.4`).
    public internal(set) var attestors: Set<[UInt8]> = []
    var streamIndexCache: [StreamID: [Int]]?
    /// The zstd context ``openRecord(frame:)`` reuses (under ``lock``):
    /// making a fresh one for every record cost more than decompressing a
    /// typical entry, and compaction, merge and the entry index open records
    /// one at a time.
    lazy var recordDecompression = DecompressionContext()
    /// Serialises this handle's methods: one handle may be shared between
    /// threads. (Read the public properties from one thread at a time.)
    let lock = RecursiveLock()
    /// The file's identity when opened; a different one at `path` means a
    /// sync tool replaced the file.
    let identity: FileIdentity?
    /// True when ``verifyCommits(keys:trustedKeyrings:attestors:)`` repaired
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
        /// The head verifies and the commit is not stale.
        case verified
        /// The head does not verify with any held key.
        case mismatch
        /// No key with the commit's key id is held.
        case unverifiable
        /// The head verifies, but its key's epoch is below a trusted keyring
        /// before it.
        case stale(epoch: UInt32, current: UInt32)
    }

    /// What a verified commit's attestation says (`Spec/format.md §9.4`).
    public enum Attestation: Sendable, Equatable {
        /// Not checked: the commit is not verified.
        case notChecked
        /// 96 zero bytes: no member attested the group.
        case unattested
        /// A member attested the group; its Ed25519 public key.
        case attested(signer: [UInt8])
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
    /// floor_k for each commit: the highest epoch of a trusted keyring in the
    /// commits before it.
    public internal(set) var floors: [UInt32] = []
    /// The floor after the last commit.
    public internal(set) var currentFloor: UInt32 = 0

    /// An empty report.
    public init() {}

    /// True when every commit verified.
    public var allVerified: Bool { statuses.allSatisfy { $0 == .verified } }

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
}

extension VaultFile {
    /// Verifies every commit with `keys` (`Spec/format.md §9.3`) and checks
    /// the attestation of each verified one against `attestors` (§9.4).
    ///
    /// `trustedKeyrings` maps the frame index of each keyring the key layer
    /// trusts to its epoch; it sets the floor that makes old-epoch commits
    /// stale. If the last commit's header is damaged but its head verifies,
    /// the commit is recovered first (§10.3).
    public func verifyCommits(keys: KeySet, trustedKeyrings: [Int: UInt32], attestors: Set<[UInt8]>) {
        lock.withLock { verifyCommitsLocked(keys: keys, trustedKeyrings: trustedKeyrings, attestors: attestors) }
    }

    func verifyCommitsLocked(keys: KeySet, trustedKeyrings: [Int: UInt32], attestors: Set<[UInt8]>) {
        self.keys = keys
        self.trustedKeyrings = trustedKeyrings
        self.attestors = attestors
        recoverDamagedLastCommit()
        var report = CommitReport()
        var previousStored = CommitChain.genesisHead
        var previousComputed = CommitChain.genesisHead
        var verified: [(group: Int, key: EpochKey)] = []
        for (g, group) in structure.groups.enumerated() {
            if let key = append(group: group, to: &report, previousStored: previousStored, previousComputed: previousComputed, attesting: false) {
                verified.append((g, key))
            }
            previousStored = group.storedHead
            previousComputed = report.computedHeads.last!
        }
        verdicts = report
        uncheckedAttestations = Dictionary(verified, uniquingKeysWith: { first, _ in first })
    }

    /// Verifies one more group and records its verdict, attestation and
    /// floor. With `attesting` false the attestation of a verified commit is
    /// left `.notChecked` and its key returned, for the caller to check.
    @discardableResult
    func append(
        group: CommitGroup, to report: inout CommitReport, previousStored: [UInt8], previousComputed: [UInt8], attesting: Bool = true
    ) -> EpochKey? {
        let (status, computed, key) = check(group: group, previousStored: previousStored, previousComputed: previousComputed, floor: report.currentFloor)
        report.statuses.append(status)
        report.computedHeads.append(computed)
        report.epochs.append(key?.epoch ?? 0)
        report.floors.append(report.currentFloor)
        var attestation = CommitReport.Attestation.notChecked
        var unchecked: EpochKey?
        if status == .verified, let key {
            if attesting { attestation = self.attestation(of: group, key: key) } else { unchecked = key }
        }
        report.attestations.append(attestation)
        for index in group.members {
            if let epoch = trustedKeyrings[index] { report.currentFloor = max(report.currentFloor, epoch) }
        }
        return unchecked
    }

    /// The attestation of a verified commit (`Spec/format.md §9.4`).
    func attestation(of group: CommitGroup, key: EpochKey) -> CommitReport.Attestation {
        let header = structure.frames[group.commitFrame].header
        switch CommitChain.checkAttestation(body: group.commitBody, digest: group.digest, key: key, vaultID: vaultID, commitHeader: header) {
        case .unattested: return .unattested
        case .failed(let reason): return .failed(reason: reason)
        case .signed(let signer):
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
    /// damaged but whose head verifies under a held key.
    func recoverDamagedLastCommit() {
        let s = structure
        let commitLength = FrameHeader.byteCount + CommitChain.bodyByteCount
        guard !s.uncommittedFrames.isEmpty, !s.tailHasDamage, let lastFrame = s.frames.last,
              s.fileSize == lastFrame.end + UInt64(commitLength),
              let tail = try? file.read(count: commitLength, at: lastFrame.end),
              tail.count == commitLength
        else { return }
        var digest = CommitChain.Digest()
        for f in s.frames[s.uncommittedFrames] { digest.add(header: f.headerBytes, trailer: f.trailer) }
        let d = digest.finalize()
        let body = Array(tail[FrameHeader.byteCount...])
        let stored = Array(body[0..<CommitChain.headByteCount])
        let previous = s.groups.last?.storedHead ?? CommitChain.genesisHead
        let ordered = keys.all.sorted { $0.epoch != $1.epoch ? $0.epoch > $1.epoch : $0.commitment.lexicographicallyPrecedes($1.commitment) }
        for key in ordered {
            let header = CommitChain.commitHeader(keyID: key.id)
            guard let head = try? CommitChain.head(key: key, vaultID: vaultID, previousHead: previous, digest: d, commitHeader: header),
                  constantTimeEqual(head, stored) else { continue }
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
            return
        }
    }

    /// Checks one group's head with every held key of its key id against
    /// either previous head (`Spec/format.md §9.3` steps 1–4).
    func check(group: CommitGroup, previousStored: [UInt8], previousComputed: [UInt8], floor: UInt32) -> (CommitReport.Status, [UInt8], EpochKey?) {
        let frame = structure.frames[group.commitFrame]
        let candidates = keys.keys(for: frame.header.keyID)
        guard let first = candidates.first else { return (.unverifiable, previousStored, nil) }
        let previous = previousStored == previousComputed ? [previousStored] : [previousStored, previousComputed]
        for key in candidates {
            for prev in previous {
                guard let head = try? CommitChain.head(key: key, vaultID: vaultID, previousHead: prev, digest: group.digest, commitHeader: frame.header)
                else { continue }
                if constantTimeEqual(head, group.storedHead) {
                    if key.epoch < floor { return (.stale(epoch: key.epoch, current: floor), head, key) }
                    return (.verified, head, key)
                }
            }
        }
        let head = (try? CommitChain.head(key: first, vaultID: vaultID, previousHead: previousStored, digest: group.digest, commitHeader: frame.header))
            ?? previousStored
        return (.mismatch, head, first)
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
        case .mismatch, .unverifiable:
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
        case .mismatch, .unverifiable: return all.filter { $0.epoch >= verdicts.floors[g] }
        case .verified, .stale: return all
        }
    }

    /// The epoch of the key a sealed frame is sealed under, if held.
    func epoch(of frame: ScannedFrame) -> UInt32? {
        keys.keys(for: frame.header.keyID).map(\.epoch).max()
    }

    /// Problems with commits, in file order: mismatches, unverifiable and
    /// stale commits, failed attestations.
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
