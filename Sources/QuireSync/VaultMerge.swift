public import QuireCrypto
public import QuireFormat
public import QuireKeys
import QuireSystem

/// What a merge did (`Spec/merge.md §3`).
public struct MergeReport: Sendable {
    /// True when the vault file was replaced by the merged one.
    public let changed: Bool
    /// Bytes at the start that both copies share and the result keeps as they were.
    public let commonPrefixByteCount: UInt64
    /// Frames of the copy that the vault did not hold and now does.
    public let framesAdded: Int
    /// Of those, frames this credential cannot open or read (an epoch it
    /// never had, or a record kind this version does not know), carried
    /// byte for byte.
    public let framesCarriedUnopened: Int
    /// Commits written for them.
    public let commitsWritten: Int
    /// Frames of the copy left out, each with why: damaged, malformed,
    /// stale, or unverified (a commit that does not vouch for it). A copy
    /// with any of these is not complete in the result.
    public let leftOut: [FormatError]
    /// Frames of the vault's own tail that the result does not keep, for
    /// the same reasons (the copy holding them intact brings them back).
    public let droppedFromVault: [FormatError]
}

/// Merges two copies of one vault (`Spec/merge.md §3`).
///
/// The result holds the longest committed prefix both files share, byte for
/// byte, then every other frame of either side that is intact, once
/// (identity: the frame's header and trailer), in blocks — one per source
/// commit, ordered by the highest epoch among their frames, then by a
/// digest of their identities — each block committed anew. Two devices that
/// merge the same two copies hold the same keys and write the same bytes.
public enum VaultMerge {
    /// Merges the copy at `copyPath` into the vault at `vaultPath`.
    ///
    /// The copy is scanned first; then the vault is locked until the result
    /// is in place (`Spec/merge.md §3`). The result is written to a
    /// temporary file beside it, flushed, opened again and checked (every
    /// new commit verifies), and only then renamed over the vault, and the
    /// folder flushed. When the copy adds nothing, nothing is written. When
    /// the vault's own committed bytes are a prefix of the copy and the
    /// copy's tail is intact, the result is the copy's bytes.
    ///
    /// - Parameters:
    ///   - credential: opens the vault (it must); the copy is opened with it
    ///     when it can be, else its frames are judged without keys.
    /// - Returns: what was merged and what was left out.
    /// - Throws: ``SyncError/differentVaults(vault:copy:)``,
    ///   ``SyncError/vaultUnreadable(path:_:)``, ``SyncError/copyUnreadable(path:_:)``,
    ///   ``SyncError/keys(_:)`` when the credential does not open the vault,
    ///   ``SyncError/removed(newerEpoch:)`` when it cannot open a newer epoch
    ///   of either side,
    ///   ``SyncError/resultDoesNotVerify(reason:)``, ``SyncError/io(_:)``,
    ///   ``SyncError/locked(path:)``. Nothing is changed when one is thrown.
    public static func merge(
        vaultAt vaultPath: String, copyAt copyPath: String, credential: Credential,
        random: any RandomSource = SystemRandom(), options: WriteOptions = WriteOptions()
    ) throws(SyncError) -> MergeReport {
        // The vault ids first, from the headers alone: a copy of another vault
        // (or a huge file) is refused before anything is scanned.
        let vaultHeader: FileHeader, copyHeader: FileHeader
        do { vaultHeader = try ConflictCopies.readHeader(vaultPath) } catch { throw .vaultUnreadable(path: vaultPath, error) }
        do { copyHeader = try ConflictCopies.readHeader(copyPath) } catch { throw .copyUnreadable(path: copyPath, error) }
        guard vaultHeader.vaultID == copyHeader.vaultID else {
            throw .differentVaults(vault: vaultHeader.vaultID, copy: copyHeader.vaultID)
        }
        // The copy is scanned before the vault's lock is taken, so a large
        // copy does not keep writers waiting.
        let b = try Side(path: copyPath, role: .copy)
        // Hold the vault's lock so no writer appends while we rewrite.
        let lockHandle = try lockForRewrite(vaultPath, timeoutSeconds: options.lockTimeoutSeconds)
        defer { lockHandle.unlock() }
        let a = try Side(path: vaultPath, role: .vault)
        guard a.file.vaultID == b.file.vaultID else {
            throw .differentVaults(vault: a.file.vaultID, copy: b.file.vaultID)
        }
        // Keys: the vault must open; the copy may not (a copy from before
        // this device was enrolled).
        let unlockedA: UnlockedKeys
        do { unlockedA = try KeyringEvaluator.unlock(a.file, with: credential) } catch { throw .keys(error) }
        let unlockedB = try? KeyringEvaluator.unlock(b.file, with: credential)
        // A credential that cannot open a newer epoch was removed (or is
        // fooled by a forged keyring): its commits would be stale for
        // everyone else, so it does not merge (keys.md §7).
        if let newer = unlockedA.unreadableNewerEpoch ?? unlockedB?.unreadableNewerEpoch { throw .removed(newerEpoch: newer) }
        var keys = unlockedA.keys
        if let kb = unlockedB?.keys {
            for (_, list) in kb.epochs { for k in list { keys.add(k) } }
        }
        a.file.verifyCommits(keys: keys, trustedKeyrings: unlockedA.trustedKeyrings)
        b.file.verifyCommits(keys: keys, trustedKeyrings: unlockedB?.trustedKeyrings ?? [:])

        let prefix = try commonPrefix(a, b)
        let aTail = try a.blocks(after: prefix.groups)
        let bTail = try b.blocks(after: prefix.groups)
        let leftOut = bTail.leftOut
        let prefixIDs = Set(a.file.structure.frames[0..<prefix.frames].map(\.identity))
        let aIDs = Set(aTail.blocks.flatMap { $0.frames.map(\.identity) }).union(prefixIDs)
        let newFromB = bTail.blocks.flatMap { $0.frames }.filter { !aIDs.contains($0.identity) }
        guard !newFromB.isEmpty || !aTail.leftOut.isEmpty else {
            return MergeReport(changed: false, commonPrefixByteCount: prefix.bytes, framesAdded: 0, framesCarriedUnopened: 0, commitsWritten: 0,
                               leftOut: leftOut, droppedFromVault: [])
        }
        let unopened = newFromB.filter(\.unopened).count

        // The vault is a prefix of an intact copy: the result is the copy.
        if aTail.blocks.isEmpty && aTail.leftOut.isEmpty && bTail.leftOut.isEmpty && prefix.groups == a.file.structure.groups.count
            && b.file.structure.fileSize == b.file.structure.committedEnd {
            try replace(vaultPath, with: { (temp: String) throws(SyncError) in try copyFile(copyPath, to: temp, byteCount: b.file.structure.committedEnd) },
                        credential: credential, firstNewGroup: prefix.groups, random: random, options: options)
            return MergeReport(changed: true, commonPrefixByteCount: prefix.bytes, framesAdded: newFromB.count, framesCarriedUnopened: unopened,
                               commitsWritten: b.file.structure.groups.count - prefix.groups, leftOut: leftOut, droppedFromVault: [])
        }

        // Blocks of both tails, in canonical order, each frame once.
        let blocks = (aTail.blocks + bTail.blocks).sorted { x, y in
            x.maxEpoch != y.maxEpoch ? x.maxEpoch < y.maxEpoch : x.digest.lexicographicallyPrecedes(y.digest)
        }
        let writeKey = try commitKey(keys)
        var commits = 0
        try replace(vaultPath, with: { (temp: String) throws(SyncError) in
            try copyFile(vaultPath, to: temp, byteCount: prefix.bytes)
            // No common prefix (a header copy differs): a clean header.
            if prefix.bytes == 0 { try writeHeader(vaultHeader, to: temp) }
            let out: VaultFile
            do { out = try VaultFile(path: temp, writable: true) } catch let e as FormatError { throw e.asSyncError } catch { throw .resultDoesNotVerify(reason: "\(error)") }
            var setKeys = keys
            setKeys.writeKey = writeKey
            out.verifyCommits(keys: setKeys, trustedKeyrings: [:])
            var emitted = prefixIDs
            for block in blocks {
                let frames = block.frames.filter { !emitted.contains($0.identity) }
                guard !frames.isEmpty else { continue }
                for f in frames { emitted.insert(f.identity) }
                do {
                    try out.commit(random: random, options: WriteOptions(synchronous: false, lockTimeoutSeconds: options.lockTimeoutSeconds)) {
                        (tx: PendingCommit) throws(FormatError) in
                        for f in frames { try tx.appendRaw(frame: try f.side.bytes(of: f.index)) }
                    }
                } catch let e as FormatError {
                    throw e.asSyncError
                } catch {
                    throw .resultDoesNotVerify(reason: "\(error)")
                }
                commits += 1
            }
        }, credential: credential, firstNewGroup: prefix.groups, random: random, options: options)
        return MergeReport(changed: true, commonPrefixByteCount: prefix.bytes, framesAdded: newFromB.count, framesCarriedUnopened: unopened,
                           commitsWritten: commits, leftOut: leftOut, droppedFromVault: aTail.leftOut)
    }

    /// Opens `path` and takes its exclusive write lock (`Spec/format.md §9.1`),
    /// for a rewrite: merge and compaction hold it until the new file is
    /// renamed into place. The caller unlocks the returned handle.
    ///
    /// - Throws: ``SyncError/vaultUnreadable(path:_:)``, ``SyncError/locked(path:)``, ``SyncError/io(_:)``.
    static func lockForRewrite(_ path: String, timeoutSeconds: Double) throws(SyncError) -> SystemFile {
        // Another rewrite may rename a new file over the path while we wait
        // for the old one's lock: then the lock excludes no one. Lock again
        // until the locked file is the one at the path.
        for _ in 0..<8 {
            let handle: SystemFile
            do { handle = try SystemFile(path: path, mode: .readWrite) } catch { throw .vaultUnreadable(path: path, .io(error)) }
            let locked: Bool
            do { locked = try handle.lockExclusive(timeoutSeconds: timeoutSeconds) } catch { throw .io(error) }
            guard locked else { throw .locked(path: path) }
            if let mine = try? handle.identity(), mine == FileSystem.identity(path) {
                // Holding the lock on the file the path names: a rewrite's
                // temporary file beside it is a killed writer's.
                Leftovers.removeStale(besideVault: path, holdingLock: true)
                return handle
            }
            handle.unlock()
        }
        throw .locked(path: path)
    }

    /// The key new commits are made with: the highest epoch held, and of
    /// several keys for it (concurrent rotations) the one whose commit key
    /// has the smallest BLAKE2b-256 digest, so that two devices holding the
    /// same keys choose the same one.
    static func commitKey(_ keys: KeySet) throws(SyncError) -> EpochKey {
        guard let epoch = keys.newestEpoch else { throw .resultDoesNotVerify(reason: "no epoch key to commit with") }
        let candidates = keys.keys(for: epoch)
        func digest(_ k: EpochKey) -> [UInt8] { k.commitKey.withUnsafeBytes { BLAKE2b.hash(Array($0), byteCount: 32) } }
        return candidates.min { digest($0).lexicographicallyPrecedes(digest($1)) }!
    }

    /// Writes the result to a temporary file with `write`, flushes it,
    /// checks it opens with `credential` and that every commit from group
    /// `firstNewGroup` on verifies, then renames it over `path` and flushes
    /// the folder. On any failure the temporary file is removed and `path`
    /// is untouched.
    static func replace(
        _ path: String, with write: (String) throws(SyncError) -> Void, credential: Credential, firstNewGroup: Int?,
        random: any RandomSource, options: WriteOptions
    ) throws(SyncError) {
        // Through a symbolic link, the file it points to is replaced and the
        // link kept: renaming over the link would fork the vault.
        let target = FileSystem.resolvingSymbolicLinks(path)
        let folder = FileSystem.directory(of: target)
        let name = String(target.split(separator: "/").last ?? "vault")
        let temp = folder + "/." + name + ".merge-" + hex(random.bytes(6))
        do {
            try write(temp)
            do {
                let f = try SystemFile(path: temp, mode: .readWrite)
                if options.synchronous { try f.sync() }
            } catch {
                throw SyncError.io(error)
            }
            let check: VaultFile
            do { check = try VaultFile(path: temp) } catch { throw SyncError.resultDoesNotVerify(reason: "\(error)") }
            let unlocked: UnlockedKeys
            do { unlocked = try KeyringEvaluator.unlock(check, with: credential) } catch {
                throw SyncError.resultDoesNotVerify(reason: "the merged file does not open with this key: \(error)")
            }
            check.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings)
            if let first = firstNewGroup {
                for (i, status) in check.commits.statuses.enumerated() where i >= first && status != .verified {
                    throw SyncError.resultDoesNotVerify(reason: "merged commit \(i) is \(status)")
                }
            }
            do {
                try FileSystem.rename(temp, to: target)
                try FileSystem.syncDirectory(folder)
            } catch {
                throw SyncError.io(error)
            }
        } catch let e as SyncError {
            try? FileSystem.remove(temp)
            throw e
        } catch {
            try? FileSystem.remove(temp)
            throw .resultDoesNotVerify(reason: "\(error)")
        }
    }

    /// Writes `header`'s 64 bytes, both copies intact, at the start of `path`.
    static func writeHeader(_ header: FileHeader, to path: String) throws(SyncError) {
        do { try SystemFile(path: path, mode: .readWrite).write(header.encoded(), at: 0) } catch { throw .io(error) }
    }

    /// Copies the first `byteCount` bytes of `source` to a new file `destination` (mode 0600).
    static func copyFile(_ source: String, to destination: String, byteCount: UInt64) throws(SyncError) {
        do {
            let input = try SystemFile(path: source, mode: .readOnly)
            let output = try SystemFile(path: destination, mode: .createExclusive(permissions: 0o600))
            var offset: UInt64 = 0
            while offset < byteCount {
                let n = Int(min(UInt64(1 << 20), byteCount - offset))
                let chunk = try input.read(count: n, at: offset)
                guard chunk.count == n else { throw SystemError(operation: "read", path: source, code: 5) }
                try output.write(chunk, at: offset)
                offset += UInt64(n)
            }
        } catch let e as SystemError {
            throw .io(e)
        } catch {
            throw .io(SystemError(operation: "copy", path: source, code: 5))
        }
    }

    /// The committed prefix both files share byte for byte: whole commit
    /// groups from the start, compared by their bytes.
    static func commonPrefix(_ a: Side, _ b: Side) throws(SyncError) -> (bytes: UInt64, groups: Int, frames: Int) {
        var bytes = UInt64(FileHeader.byteCount)
        var frames = 0
        guard try a.read(0, FileHeader.byteCount) == b.read(0, FileHeader.byteCount) else { return (0, 0, 0) }
        let ga = a.file.structure.groups, gb = b.file.structure.groups
        var groups = 0
        while groups < ga.count && groups < gb.count {
            let endA = a.file.structure.frames[ga[groups].commitFrame].end
            let endB = b.file.structure.frames[gb[groups].commitFrame].end
            guard endA == endB, ga[groups].storedHead == gb[groups].storedHead else { break }
            // Compare the group's bytes in 1 MiB pieces.
            var offset = bytes
            var same = true
            while offset < endA {
                let n = Int(min(UInt64(1 << 20), endA - offset))
                if try a.read(offset, n) != b.read(offset, n) { same = false; break }
                offset += UInt64(n)
            }
            guard same else { break }
            bytes = endA
            frames = ga[groups].commitFrame + 1
            groups += 1
        }
        return (bytes, groups, frames)
    }
}

/// One input of a merge.
final class Side {
    enum Role { case vault, copy }
    let path: String
    let role: Role
    let file: VaultFile
    let handle: SystemFile

    init(path: String, role: Role) throws(SyncError) {
        self.path = path
        self.role = role
        do {
            file = try VaultFile(path: path)
            handle = try SystemFile(path: path, mode: .readOnly)
        } catch let e as FormatError {
            throw role == .vault ? .vaultUnreadable(path: path, e) : .copyUnreadable(path: path, e)
        } catch let e as SystemError {
            throw role == .vault ? .vaultUnreadable(path: path, .io(e)) : .copyUnreadable(path: path, .io(e))
        } catch {
            throw .copyUnreadable(path: path, .notAVault)
        }
    }

    func read(_ offset: UInt64, _ count: Int) throws(SyncError) -> [UInt8] {
        do { return try handle.read(count: count, at: offset) } catch { throw .io(error) }
    }

    /// The whole frame at `index`, header and body.
    func bytes(of index: Int) throws(FormatError) -> [UInt8] {
        let f = file.structure.frames[index]
        do { return try handle.read(count: Int(f.end - f.location.offset), at: f.location.offset) } catch { throw .io(error) }
    }

    /// A frame to carry.
    struct Carried {
        let side: Side
        let index: Int
        let identity: [UInt8]
        let epoch: UInt16
        /// True when this credential could not open it (it is carried as is).
        let unopened: Bool
    }

    /// The frames of one source commit that may be carried.
    struct Block {
        let frames: [Carried]
        let maxEpoch: UInt16
        let digest: [UInt8]
    }

    /// The committed groups from `first` on, as blocks of intact frames,
    /// and the frames left out with why (`Spec/merge.md §3.2`).
    func blocks(after first: Int) throws(SyncError) -> (blocks: [Block], leftOut: [FormatError]) {
        var blocks: [Block] = []
        var leftOut: [FormatError] = []
        let groups = file.structure.groups
        guard first < groups.count else { return ([], []) }
        for g in first..<groups.count {
            let status = file.commits.statuses.indices.contains(g) ? file.commits.statuses[g] : .unverifiable
            var carried: [Carried] = []
            for i in groups[g].members {
                let f = file.structure.frames[i]
                if let reason = f.malformation { leftOut.append(.malformedFrame(f.location, reason: reason)); continue }
                var unopened = false
                // What the chain does not vouch for is not committed as
                // vouched for (format.md §9.3). Keyrings are judged by their
                // checksum and signature, as every reader does.
                if status != .verified && f.header.kind != .keyring && f.header.kind != .commit {
                    switch status {
                    case .mismatch, .verified: leftOut.append(.commitMismatch(f.location))
                    case .unverifiable: leftOut.append(.commitUnverifiable(f.location, epoch: file.structure.frames[groups[g].commitFrame].header.epoch))
                    case let .stale(epoch, current): leftOut.append(.staleEpoch(f.location, epoch: epoch, currentEpoch: current))
                    }
                    continue
                }
                switch (f.header.kind, f.header.isSealed) {
                case (.commit, _):
                    continue
                case (.blobChunk, _):
                    // Chunks are judged with their stream when read; carried as they are.
                    unopened = file.keys.keys(for: f.header.epoch).isEmpty
                case (_, false):
                    guard f.checksumIntact == true else { leftOut.append(.authenticationFailed(f.location)); continue }
                    unopened = !f.header.kind.isKnown
                case (_, true):
                    do {
                        _ = try file.openRecord(frame: i)
                    } catch {
                        if case .unknownEpoch = error {
                            unopened = true
                        } else {
                            leftOut.append(error)
                            continue
                        }
                    }
                    if !f.header.kind.isKnown { unopened = true }
                }
                carried.append(Carried(side: self, index: i, identity: f.identity, epoch: f.header.epoch, unopened: unopened))
            }
            guard !carried.isEmpty else { continue }
            var h = BLAKE2b.Hasher(byteCount: 32)
            for c in carried { h.update(c.identity) }
            blocks.append(Block(frames: carried, maxEpoch: carried.map(\.epoch).max()!, digest: h.finalize()))
        }
        return (blocks, leftOut)
    }
}

extension ScannedFrame {
    /// A frame's identity for merging: its header and its trailer (the AEAD
    /// tag of a sealed frame, the checksum of a plaintext one).
    var identity: [UInt8] { headerBytes + trailer }
}

extension FormatError {
    /// As a sync error: I/O stays I/O; anything else means the result could
    /// not be built as it should.
    var asSyncError: SyncError {
        if case .io(let e) = self { return .io(e) }
        return .resultDoesNotVerify(reason: description)
    }
}
