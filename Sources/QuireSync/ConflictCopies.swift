@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat
@_spi(Format) package import QuireKeys
import QuireSystem

/// A file beside a vault that holds a copy of the same vault
/// (`Spec/merge.md §2`).
public struct ConflictCopy: Sendable, Equatable {
    /// The copy's path.
    public let path: String
    /// The sync tool whose conflict-copy name it has, or nil when only its
    /// header shows it is a copy (renamed by hand, an unknown tool).
    @_spi(Format) public let tool: SyncTool?
}

/// Finds conflict copies of a vault in its folder (`Spec/merge.md §2`).
package enum ConflictCopies {
    /// Every regular file in the vault's folder (never a symbolic link),
    /// other than the vault itself and copies folding set aside (named
    /// `….damaged`, ``isSetAside(_:)``), whose header names the same vault
    /// id, sorted by path. Names
    /// are hints only (``ConflictCopy/tool``): a file with a conflict-copy
    /// name but another vault id, or none, is not a copy; a copy with an
    /// unfamiliar name is still found. Only the 64-byte header of each file
    /// is read; hidden files (names starting with `.`, such as Quire's own
    /// temporary files) and files whose header cannot be read are skipped.
    ///
    /// - Parameter vaultPath: the vault file.
    /// - Returns: the copies, sorted by path (bytewise).
    /// - Throws: ``SyncError/vaultUnreadable(path:_:)`` when the vault's
    ///   header cannot be read; ``SyncError/folderUnreadable(path:_:)``.
    public static func find(for vaultPath: String) throws(SyncError) -> [ConflictCopy] {
        let vaultID: VaultID
        do { vaultID = try readHeader(vaultPath).vaultID } catch { throw .vaultUnreadable(path: vaultPath, error) }
        let folder = FileSystem.directory(of: vaultPath)
        let vaultName = String(vaultPath.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
        let names: [String]
        do { names = try FileSystem.listDirectory(folder) } catch { throw .folderUnreadable(path: folder, error) }
        let own = FileSystem.identity(vaultPath)
        var copies: [ConflictCopy] = []
        for name in names where name != vaultName && !name.hasPrefix(".") && !isSetAside(name) {
            let path = folder == "/" ? "/" + name : folder + "/" + name
            // lstat: a symbolic link is never a copy, whatever it points to.
            guard FileSystem.linkStatus(path)?.isRegularFile == true, FileSystem.identity(path) != own else { continue }
            let tool = ConflictCopyName.tool(of: name, copyOf: vaultName)
            let header: FileHeader
            do { header = try readHeader(path) } catch {
                // A file named as this vault's conflict copy that cannot be
                // read (an I/O error) is still listed: folding it then fails
                // or succeeds and says so, instead of skipping it silently.
                if case .io = error, tool != nil { copies.append(ConflictCopy(path: path, tool: tool)) }
                continue
            }
            guard header.vaultID == vaultID else { continue }
            copies.append(ConflictCopy(path: path, tool: tool))
        }
        return copies
    }

    /// True for the name of a copy folding set aside (``setAsideCopy(_:)``):
    /// one ending in `.damaged` or `.damaged-` and digits. Such a copy is
    /// no longer found (`Spec/merge.md §2`, §4): folding it again would
    /// only leave out what it left out before (trial 28, T28-3).
    static func isSetAside(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: "."), name.startIndex < dot else { return false }
        let last = name[name.index(after: dot)...]
        guard last.hasPrefix("damaged") else { return false }
        let rest = last.dropFirst("damaged".count)
        return rest.isEmpty || (rest.count > 1 && rest.first == "-" && rest.dropFirst().allSatisfy { $0.isASCII && $0.isNumber })
    }

    /// The header of the file at `path` (reads 64 bytes).
    static func readHeader(_ path: String) throws(FormatError) -> FileHeader {
        do {
            let file = try SystemFile(path: path, mode: .readOnly)
            let bytes = try file.read(count: FileHeader.byteCount, at: 0)
            return try FileHeader.parse(bytes).0
        } catch let e as FormatError {
            throw e
        } catch let e as SystemError {
            throw .io(e)
        } catch {
            throw .notAVault
        }
    }
}

/// What folding a vault's conflict copies did (`Spec/merge.md §4`).
public struct FoldReport: Sendable {
    /// One copy and what became of it.
    public struct Copy: Sendable {
        /// The copy found.
        public let copy: ConflictCopy
        /// The merge of it, or nil when it failed.
        @_spi(Format) public let merge: MergeReport?
        /// Why it failed, when it did (the sync layer's detail).
        @_spi(Format) public let syncError: SyncError?
        /// Why it failed, when it did: its ``QuireError/category`` says what
        /// can be done (`.damaged`: the copy was set aside; `.unavailable`:
        /// it could not be read now, try again later).
        public var error: QuireError? { syncError.map(QuireError.fromSync) }
        /// True when the copy was deleted: the vault holds every one of its
        /// committed frames and its name is a distinctive conflict-copy name.
        /// The same as ``keptBecause`` being nil (what an app reads).
        @_spi(Format) public let deleted: Bool
        /// Why the copy was kept; nil when it was deleted. What an app does
        /// with a kept copy: for ``KeptReason/notAConflictCopy`` (an iCloud
        /// Drive ` 2`, a Google Drive ` (1)` or a OneDrive `-NAME` copy, a
        /// backup) ask the person whether to merge it
        /// (`Vault.merge(copyAt:)`), since it holds entries the journal
        /// lacks; for ``KeptReason/nameNotDistinctive`` offer to delete it
        /// (the journal holds all of it); for ``KeptReason/mergeFailed``
        /// show ``error``.
        public let keptBecause: KeptReason?
        /// The new path of a copy that was set aside because folding can
        /// never take it in whole (damaged or unverified records, or a file
        /// that does not read as a vault): renamed to `path ‖ ".damaged"`
        /// (then `.damaged-2`, …), a name no conflict-copy pattern matches,
        /// so commands stop pointing at it (`Spec/merge.md §4`). Nil otherwise.
        public let setAsideAs: String?
        /// For a copy kept as ``KeptReason/onlyDamagedRecords``: the damage
        /// of each record it holds that the vault does not, in file order.
        /// Empty otherwise.
        @_spi(Format) public internal(set) var unreadable: [FormatError] = []
    }
    /// Why folding kept a copy (`Spec/merge.md §4`): its raw value is the
    /// stable snake_case name the specification and the `quire resolve
    /// --json` output use (`not_a_conflict_copy`…), to log.
    ///
    /// A fold merges only the copies whose name only a sync tool gives a
    /// file (Syncthing's, Dropbox's, Nextcloud's, Unison's conflict
    /// names). A copy whose name a person or another program also gives
    /// files — iCloud Drive's `Journal 2.quire`, Google Drive's
    /// `Journal (1).quire`, OneDrive's `Journal-NAME.quire` — or one with
    /// no such name at all is never merged by a fold, since it may be a
    /// backup: the last three cases say what it holds, so that an app asks
    /// the person only when there is something to decide.
    public enum KeptReason: String, Sendable, Equatable {
        /// The merge failed (see ``Copy/error``); the copy is left in place
        /// or, when it does not read as a vault, set aside.
        case mergeFailed = "merge_failed"
        /// The merge left frames out (damaged, unverified, stale), or the
        /// vault does not hold every committed frame of the copy: what could
        /// be read was merged, and the copy was set aside
        /// (``Copy/setAsideAs``).
        case notAllTakenIn = "not_all_taken_in"
        /// Its content is all in the vault, but its name is not one only a
        /// sync tool gives: it may be a backup or a copy a person made, so
        /// only they delete it. Nothing to merge.
        case nameNotDistinctive = "name_not_distinctive"
        /// Deleting it failed (permissions); its content is in the vault.
        case removeFailed = "remove_failed"
        /// It holds records the vault lacks, but its name is not one only a
        /// sync tool gives (iCloud Drive's ` 2`…): it may be a backup, and
        /// folding a backup brings back what the vault dropped on purpose
        /// (compacted history, deleted text). It was not merged: ask the
        /// person, and merge it with `Vault.merge(copyAt:)` if they say so.
        case notAConflictCopy = "not_a_conflict_copy"
        /// Its name is not one only a sync tool gives, and every record it
        /// holds that the vault does not is damaged: none can be read, so
        /// merging it would add nothing readable. It was not merged.
        case onlyDamagedRecords = "only_damaged_records"
    }
    /// Every copy found, in path order.
    public let copies: [Copy]
}

extension ConflictCopies {
    /// Finds the vault's conflict copies and folds those a sync tool made
    /// (`Spec/merge.md §4`). A copy with a distinctive sync-tool
    /// conflict-copy name (``SyncTool/nameIsDistinctive``) is merged
    /// (``VaultMerge/merge(vaultAt:copyAt:credential:random:options:)``) and
    /// deleted when the merged vault, opened again, holds every committed
    /// frame of it; one that can never be taken in whole (damaged or
    /// unverified records, or not readable as a vault) is set aside
    /// (``FoldReport/Copy/setAsideAs``). Any other copy (a OneDrive-, iCloud-
    /// or Google-Drive-like name, a backup, a file renamed by hand) is never
    /// merged: it is reported as already held (``FoldReport/KeptReason/nameNotDistinctive``),
    /// as holding only damaged records the vault lacks (``FoldReport/KeptReason/onlyDamagedRecords``),
    /// or as holding records the vault lacks (``FoldReport/KeptReason/notAConflictCopy``).
    ///
    /// - Returns: what became of each copy.
    /// - Throws: the errors of ``find(for:)``. A failure on one copy is
    ///   reported in its entry and does not stop the others.
    public static func fold(
        into vaultPath: String, credential: Credential, random: any RandomSource = SystemRandom(), options: WriteOptions = WriteOptions()
    ) throws(SyncError) -> FoldReport {
        var results: [FoldReport.Copy] = []
        for copy in try find(for: vaultPath) {
            guard copy.tool?.nameIsDistinctive == true else {
                // Not merged: a backup would bring back what the vault dropped.
                // What it holds beyond the vault is told apart: nothing,
                // only damaged records (a merge would add nothing readable),
                // or records to merge.
                let beyond = try? framesNotHeld(of: copy.path, vault: vaultPath, credential: credential)
                let held = beyond?.frames.isEmpty ?? false
                let unreadable = held ? nil : beyond.flatMap { b in (try? damage(of: b.frames, in: b.copy)) ?? nil }
                var entry = FoldReport.Copy(
                    copy: copy, merge: nil, syncError: nil, deleted: false,
                    keptBecause: held ? .nameNotDistinctive : unreadable != nil ? .onlyDamagedRecords : .notAConflictCopy, setAsideAs: nil)
                entry.unreadable = unreadable ?? []
                results.append(entry)
                continue
            }
            do {
                let report = try VaultMerge.merge(
                    vaultAt: vaultPath, copyAt: copy.path, credential: credential, random: random, options: options)
                var deleted = false
                var kept: FoldReport.KeptReason?
                var setAside: String?
                var held = report.leftOut.isEmpty
                if held { held = try holdsEveryFrame(of: copy.path, vault: vaultPath, credential: credential) }
                if !held {
                    kept = .notAllTakenIn
                    setAside = setAsideCopy(copy.path)
                } else {
                    do {
                        try FileSystem.remove(copy.path)
                        try FileSystem.syncDirectory(FileSystem.directory(of: copy.path))
                        deleted = true
                    } catch {
                        deleted = !FileSystem.exists(copy.path)
                    }
                    if !deleted { kept = .removeFailed }
                }
                results.append(
                    FoldReport.Copy(copy: copy, merge: report, syncError: nil, deleted: deleted, keptBecause: kept, setAsideAs: setAside))
            } catch {
                // A copy that does not read as a vault never will: set it
                // aside. A vault-side, key or I/O failure leaves it in place.
                var setAside: String?
                if case .copyUnreadable(_, let why) = error, !why.isIO { setAside = setAsideCopy(copy.path) }
                results.append(
                    FoldReport.Copy(
                        copy: copy, merge: nil, syncError: error, deleted: false, keptBecause: .mergeFailed, setAsideAs: setAside))
            }
        }
        return FoldReport(copies: results)
    }

    /// Renames the copy at `path` to `path ‖ ".damaged"` (or `.damaged-2`,
    /// … when taken), never replacing a file; nil when that fails.
    static func setAsideCopy(_ path: String) -> String? {
        for n in 1...99 {
            let target = path + (n == 1 ? ".damaged" : ".damaged-\(n)")
            guard !FileSystem.nameExists(target) else { continue }
            do {
                try FileSystem.link(path, to: target)
            } catch {
                if FileSystem.nameExists(target) { continue }
                return nil
            }
            do {
                try FileSystem.remove(path)
                try? FileSystem.syncDirectory(FileSystem.directory(of: path))
                return target
            } catch {
                try? FileSystem.remove(target)
                return nil
            }
        }
        return nil
    }

    /// True when every committed, non-commit frame of the copy is in the
    /// vault (by identity, `Spec/merge.md §1`) or, for a frame a merge sealed
    /// again after a rekey, its re-sealed replacement is (§3.4, §4): a record
    /// of the same kind and payload, a manifest naming the same blob id, and
    /// for a chunk, the replacement of its attachment's manifest.
    static func holdsEveryFrame(of copyPath: String, vault vaultPath: String, credential: Credential) throws(SyncError) -> Bool {
        try framesNotHeld(of: copyPath, vault: vaultPath, credential: credential).frames.isEmpty
    }

    /// The committed, non-commit frames of the copy that the vault does not
    /// hold in the sense of ``holdsEveryFrame(of:vault:credential:)``, in
    /// file order, with the copy as scanned (its commits verified with the
    /// keys the credential holds in either file, when it opens the vault).
    /// When the credential does not open the vault, every frame not held
    /// as it is (no replacement can be judged).
    static func framesNotHeld(of copyPath: String, vault vaultPath: String, credential: Credential) throws(SyncError) -> (
        copy: Side, frames: [Int]
    ) {
        let copy = try Side(path: copyPath, role: .copy)
        let vault = try Side(path: vaultPath, role: .vault)
        let missing = (0..<copy.file.structure.committedFrameCount).filter { !copy.file.structure.frames[$0].isCommit }
        // Equal identities are equal bytes, so equal headers and trailers:
        // only frames whose summaries both files hold need their bodies
        // read and hashed.
        let vaultSummaries = Set((0..<vault.file.structure.committedFrameCount).map { vault.summary(of: $0) })
        let held = Set(
            try vault.identities(of: 0..<vault.file.structure.committedFrameCount, matching: Set(missing.map { copy.summary(of: $0) })))
        func isHeld(_ i: Int) throws(SyncError) -> Bool {
            guard vaultSummaries.contains(copy.summary(of: i)) else { return false }
            return held.contains(try copy.identity(of: i))
        }
        var notHeld: [Int] = []
        for i in missing where !(try isHeld(i)) { notHeld.append(i) }
        guard !notHeld.isEmpty else { return (copy, []) }
        // Replacements are judged by content, with the keys the merge used:
        // those the credential holds in the vault and in the copy. The copy
        // need not open with the credential (a copy from before this device
        // was enrolled, merge.md §3.1): its frames then open with the
        // vault's keys alone.
        guard let inVault = try? KeyringEvaluator.unlock(vault.file, with: credential) else { return (copy, notHeld) }
        let inCopy = try? KeyringEvaluator.unlock(copy.file, with: credential)
        var keys = inVault.keys
        for k in inCopy?.keys.all ?? [] { keys.add(k) }
        let attestors = inVault.attestors.union(inCopy?.attestors ?? [])
        let removed = inVault.removedMembers.union(inCopy?.removedMembers ?? [])
        var removing = inVault.removingKeyrings
        removing.merge(inCopy?.removingKeyrings ?? [:]) { a, _ in a }
        vault.file.verifyCommits(
            keys: keys, trustedKeyrings: inVault.trustedKeyrings, attestors: attestors, removedMembers: removed,
            removals: vault.file.removals(of: removing))
        copy.file.verifyCommits(
            keys: keys, trustedKeyrings: inCopy?.trustedKeyrings ?? [:], attestors: attestors, removedMembers: removed,
            removals: copy.file.removals(of: removing))
        var replacements = Set<[UInt8]>()
        for i in 0..<vault.file.structure.committedFrameCount {
            for key in vault.replacementKeys(of: i) { replacements.insert(key) }
        }
        func replaced(_ i: Int) -> Bool {
            let keys = copy.replacementKeys(of: i)
            return !keys.isEmpty && keys.allSatisfy(replacements.contains)
        }
        // A chunk is held when its attachment is: its stream's manifest is
        // held as it is or replaced.
        var heldStreams = Set<StreamID>()
        for i in 0..<copy.file.structure.committedFrameCount where copy.file.structure.frames.kind(at: i) == .blobManifest {
            guard let payload = try? copy.file.openRecord(frame: i), let m = try? BlobManifest(decoding: payload) else { continue }
            if try isHeld(i) || replaced(i) { heldStreams.insert(m.stream) }
        }
        return (
            copy,
            notHeld.filter { i in
                let f = copy.file.structure.frames[i]
                if f.header.kind == .blobChunk, let chunk = f.chunk { return !heldStreams.contains(chunk.stream) }
                return !replaced(i)
            }
        )
    }

    /// The damage of each of `frames` of `side` when every one is damaged:
    /// it cannot be read at all, with any key held — malformed, failing its
    /// checksum or its authentication, or not keeping its kind's schema,
    /// which a merge leaves out (`Spec/merge.md §3.2`) and a reader does not
    /// release. Nil when `frames` is empty or one of them reads, or cannot
    /// be judged: sealed under a key not held, or of a stale epoch. A record
    /// that reads but whose commit does not verify is not damaged.
    ///
    /// - Throws: ``SyncError/io(_:)`` when the file cannot be read.
    static func damage(of frames: [Int], in side: Side) throws(SyncError) -> [FormatError]? {
        guard !frames.isEmpty else { return nil }
        var damage: [FormatError] = []
        for i in frames {
            let f = side.file.structure.frames[i]
            if let reason = f.malformation {
                damage.append(.malformedFrame(f.location, reason: reason))
                continue
            }
            if f.header.kind == .blobChunk {
                // nil: no key held to judge it by.
                guard side.file.chunkAuthenticates(frame: i) == false else { return nil }
                damage.append(.authenticationFailed(f.location))
                continue
            }
            do {
                let payload = try side.file.openRecord(frame: i)
                switch f.header.kind {
                case .entryRevision: _ = try EntryRevision(decoding: payload, location: f.location)
                case .blobManifest: _ = try BlobManifest(decoding: payload, location: f.location)
                case .profile: _ = try Profile(decoding: payload, location: f.location)
                default: break
                }
                return nil
            } catch {
                switch error {
                case .io: throw error.asSyncError
                case .unknownKey, .staleEpoch, .tornTail: return nil
                default: damage.append(error)
                }
            }
        }
        return damage
    }
}

extension FormatError {
    /// True for a read or write failure, which may pass (not damage).
    fileprivate var isIO: Bool { if case .io = self { true } else { false } }
}
