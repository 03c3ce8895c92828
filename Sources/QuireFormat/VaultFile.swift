public import QuireCrypto
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
/// the verification of its commit chain, reading sealed records and
/// appending commits.
///
/// Opening scans the file without a key (``VaultScanner``). Give it the keys
/// with ``verifyCommits(keys:trustedKeyrings:)``, then read records or append.
/// A reader never modifies the file. A writer serializes with other writers
/// through an advisory lock (`flock`), appends only, and never rewrites a
/// committed byte.
public final class VaultFile: @unchecked Sendable {
    /// The path the vault was opened at.
    public let path: String
    let file: SystemFile
    /// True when opened for appending.
    public let isWritable: Bool
    /// The structure found by the last scan, kept up to date by appends.
    public internal(set) var structure: VaultStructure
    /// The verdict on each commit group, after ``verifyCommits(keys:trustedKeyrings:)``.
    public internal(set) var commits: CommitReport
    /// The keys given to ``verifyCommits(keys:trustedKeyrings:)``.
    public internal(set) var keys: KeySet
    /// Frame index → epoch, for the keyrings the key layer authenticated.
    public internal(set) var trustedKeyrings: [Int: UInt16]
    var streamIndexCache: [StreamID: [Int]]?
    /// Serialises this handle's methods: one handle may be shared between
    /// threads. (Read the public properties from one thread at a time.)
    let lock = RecursiveLock()
    /// The file's identity when opened; a different one at `path` means a
    /// sync tool replaced the file.
    let identity: FileIdentity?
    /// True when ``verifyCommits(keys:trustedKeyrings:)`` repaired the last
    /// commit's header (`Spec/format.md §10.3`); the key layer should look
    /// again, as the recovered commit may hold a keyring.
    public internal(set) var recoveredCommit = false
    /// An unknown critical kind under a recovered commit: the vault must not
    /// be opened (`Spec/format.md §4.3`).
    public internal(set) var recoveredUnknownCriticalKind: (FrameLocation, UInt8)?
    /// True once a commit through this handle looked for a killed writer's
    /// temporary files beside the vault (``Leftovers``).
    var leftoversChecked = false

    /// The vault id from the header.
    public var vaultID: VaultID { structure.header.vaultID }

    /// Opens and scans the vault at `path`.
    ///
    /// - Parameter writable: open for appending (`O_RDWR`).
    /// - Throws: ``FormatError/io(_:)`` (for example a missing file), the
    ///   header errors, ``FormatError/unknownCriticalKind(_:kind:)`` when a
    ///   committed frame has a critical kind this reader does not know.
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
        commits = CommitReport()
        keys = KeySet()
        trustedKeyrings = [:]
        for frame in structure.frames[0..<structure.committedFrameCount] where !frame.header.kind.isKnown && frame.header.kind.isCritical {
            throw .unknownCriticalKind(frame.location, kind: frame.header.kind.rawValue)
        }
    }

    /// Creates a new vault at `path` holding one first commit, atomically:
    /// the file is written under a temporary name in the same directory,
    /// flushed, and linked into place only if nothing exists at `path`.
    /// The file's permissions are 0600.
    ///
    /// - Parameters:
    ///   - keys: the keys to seal and commit with (``KeySet/writeKey`` must be set).
    ///   - build: appends the first commit's records (normally the first
    ///     keyring and the profile).
    /// - Throws: ``FormatError/alreadyExists(path:)``, ``FormatError/io(_:)``,
    ///   and whatever `build` throws.
    public static func create(
        at path: String, vaultID: VaultID, keys: KeySet, random: any RandomSource, options: WriteOptions = WriteOptions(),
        build: (PendingCommit) throws(FormatError) -> Void
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
            try vault.commit(random: random, options: options, build)
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

/// The verdict on every commit group of a vault (`Spec/format.md §9.3`).
public struct CommitReport: Sendable {
    /// What checking one commit found.
    public enum Status: Sendable, Equatable {
        /// The MAC verifies: the frames are exactly those the writer committed.
        case verified
        /// The MAC does not verify.
        case mismatch
        /// No key is held for the commit's epoch.
        case unverifiable
        /// The commit is under an epoch older than a keyring before it.
        case stale(epoch: UInt16, current: UInt16)
    }

    /// One status per commit group.
    public internal(set) var statuses: [Status] = []
    /// The chain head recomputed for each group.
    public internal(set) var computedHeads: [[UInt8]] = []
    /// For each group, the highest epoch of a trusted keyring in earlier groups.
    public internal(set) var floors: [UInt16] = []
    /// The highest epoch of a trusted keyring in any group.
    public internal(set) var currentFloor: UInt16 = 0

    /// An empty report.
    public init() {}

    /// True when every commit verified.
    public var allVerified: Bool { statuses.allSatisfy { $0 == .verified } }
}

extension VaultFile {
    /// Checks every commit's MAC and applies the stale-epoch rule
    /// (`Spec/format.md §9.3`), remembering `keys` for reading and appending.
    ///
    /// - Parameters:
    ///   - trustedKeyrings: frame index → epoch of every keyring frame the
    ///     key layer authenticated.
    public func verifyCommits(keys: KeySet, trustedKeyrings: [Int: UInt16]) {
        lock.withLock { verifyCommitsLocked(keys: keys, trustedKeyrings: trustedKeyrings) }
    }

    func verifyCommitsLocked(keys: KeySet, trustedKeyrings: [Int: UInt16]) {
        self.keys = keys
        self.trustedKeyrings = trustedKeyrings
        recoverDamagedLastCommit()
        var report = CommitReport()
        var previousStored = CommitChain.genesisHead
        var previousComputed = CommitChain.genesisHead
        for group in structure.groups {
            let (status, computed) = check(group: group, previousStored: previousStored, previousComputed: previousComputed, floor: report.currentFloor)
            report.statuses.append(status)
            report.computedHeads.append(computed)
            report.floors.append(report.currentFloor)
            for index in group.members {
                if let epoch = trustedKeyrings[index] { report.currentFloor = max(report.currentFloor, epoch) }
            }
            previousStored = group.storedHead
            previousComputed = computed
        }
        commits = report
    }

    /// Commit recovery (`Spec/format.md §10.3`): when the file ends with
    /// uncommitted frames and then exactly 28 bytes that do not parse as a
    /// commit frame, those bytes are read as a commit of each epoch held,
    /// with the header rebuilt; if its MAC verifies, the commit is genuine,
    /// its header is repaired and its frames are committed. A torn write
    /// cannot produce a valid MAC, so nothing uncommitted is ever released.
    func recoverDamagedLastCommit() {
        let s = structure
        guard !s.uncommittedFrames.isEmpty, !s.tailHasDamage, let lastFrame = s.frames.last,
              s.fileSize == lastFrame.end + UInt64(FrameHeader.byteCount + CommitChain.headByteCount),
              let tail = try? file.read(count: FrameHeader.byteCount + CommitChain.headByteCount, at: lastFrame.end),
              tail.count == FrameHeader.byteCount + CommitChain.headByteCount
        else { return }
        var digest = CommitChain.Digest()
        for f in s.frames[s.uncommittedFrames] { digest.add(header: f.headerBytes, trailer: f.trailer) }
        let d = digest.finalize()
        let stored = Array(tail[FrameHeader.byteCount...])
        let previous = s.groups.last?.storedHead ?? CommitChain.genesisHead
        for epoch in keys.epochs.keys.sorted(by: >) {
            let header = CommitChain.commitHeader(epoch: epoch)
            for key in keys.keys(for: epoch) {
                let head = CommitChain.head(commitKey: key.commitKey, vaultID: vaultID, previousHead: previous, digest: d, commitHeader: header)
                guard constantTimeEqual(head, stored) else { continue }
                let index = s.frames.count
                structure.frames.append(ScannedFrame(
                    location: FrameLocation(offset: lastFrame.end, index: index), header: header, headerBytes: header.encoded(),
                    trailer: stored, repaired: true, chunk: nil, plaintextBody: nil, checksumIntact: nil, malformation: nil))
                structure.groups.append(CommitGroup(commitFrame: index, members: s.uncommittedFrames, digest: d, storedHead: stored, containsDamage: false))
                structure.committedEnd = s.fileSize
                structure.uncommittedFrames = structure.frames.count..<structure.frames.count
                streamIndexCache = nil
                recoveredCommit = true
                for f in structure.frames[s.uncommittedFrames] where !f.header.kind.isKnown && f.header.kind.isCritical {
                    recoveredUnknownCriticalKind = (f.location, f.header.kind.rawValue)
                    break
                }
                return
            }
        }
    }

    func check(group: CommitGroup, previousStored: [UInt8], previousComputed: [UInt8], floor: UInt16) -> (CommitReport.Status, [UInt8]) {
        let frame = structure.frames[group.commitFrame]
        let epoch = frame.header.epoch
        let candidates = keys.keys(for: epoch)
        guard let first = candidates.first else { return (.unverifiable, previousStored) }
        let previous = previousStored == previousComputed ? [previousStored] : [previousStored, previousComputed]
        for key in candidates {
            for prev in previous {
                let head = CommitChain.head(commitKey: key.commitKey, vaultID: vaultID, previousHead: prev, digest: group.digest, commitHeader: frame.header)
                if constantTimeEqual(head, group.storedHead) {
                    if epoch < floor { return (.stale(epoch: epoch, current: floor), head) }
                    return (.verified, head)
                }
            }
        }
        let head = CommitChain.head(commitKey: first.commitKey, vaultID: vaultID, previousHead: previousStored, digest: group.digest, commitHeader: frame.header)
        return (.mismatch, head)
    }

    /// Why the committed frame at `index` may not be released, or nil when it
    /// may (`Spec/format.md §9.3`).
    public func releaseVerdict(frame index: Int) -> FormatError? {
        lock.withLock { releaseVerdictLocked(frame: index) }
    }

    func releaseVerdictLocked(frame index: Int) -> FormatError? {
        let frame = structure.frames[index]
        guard let g = structure.groupIndex(ofFrame: index), g < commits.statuses.count else {
            return .tornTail(offset: structure.committedEnd, byteCount: structure.tailByteCount, uncommittedFrameCount: structure.uncommittedFrames.count)
        }
        switch commits.statuses[g] {
        case .verified:
            return nil
        case .stale(_, let current):
            return .staleEpoch(frame.location, epoch: frame.header.epoch, currentEpoch: current)
        case .mismatch, .unverifiable:
            let floor = commits.floors[g]
            if frame.header.isSealed && frame.header.epoch < floor {
                return .staleEpoch(frame.location, epoch: frame.header.epoch, currentEpoch: floor)
            }
            return nil
        }
    }

    /// The issues the commit report shows, one per commit that did not verify.
    public var commitIssues: [FormatError] {
        lock.withLock { commitIssuesLocked }
    }

    var commitIssuesLocked: [FormatError] {
        var out: [FormatError] = []
        for (g, status) in commits.statuses.enumerated() {
            let loc = structure.frames[structure.groups[g].commitFrame].location
            switch status {
            case .verified: break
            case .mismatch: out.append(.commitMismatch(loc))
            case .unverifiable: out.append(.commitUnverifiable(loc, epoch: structure.frames[structure.groups[g].commitFrame].header.epoch))
            case .stale(let e, let c): out.append(.staleEpoch(loc, epoch: e, currentEpoch: c))
            }
        }
        return out
    }
}
