@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
@_spi(Format) public import QuireSync
public import QuireSystem

/// Copies of the vault left by sync tools (`Spec/merge.md`).
extension Vault {
    /// The conflict copies beside this vault's file (`Spec/merge.md §2`).
    ///
    /// - Throws: a sync error.
    @_spi(Format)
    public func conflictCopies() throws(QuireError) -> [ConflictCopy] {
        do { return try ConflictCopies.find(for: file.path) } catch { throw .sync(error) }
    }

    /// The conflict copies beside this vault that ``foldConflictCopies()``
    /// would merge: regular files (never symbolic links) whose names follow
    /// a distinctive sync-tool conflict-copy pattern and whose header names
    /// this vault —
    /// the cheap check every command can make to say copies are waiting.
    /// Only the folder is listed and only such names' 64-byte headers are
    /// read; ``conflictCopies()`` also finds copies by header alone. A copy
    /// folding set aside (renamed `….damaged`) no longer matches. Nothing is
    /// thrown: a folder that cannot be listed has none to mention.
    ///
    /// - Returns: the copies' paths, sorted bytewise.
    @_spi(Format)
    public func waitingConflictCopies() -> [String] {
        let path = lock.withLock { file.path }
        let folder = FileSystem.directory(of: path)
        let vaultName = String(path.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
        guard let names = try? FileSystem.listDirectory(folder) else { return [] }
        var copies: [String] = []
        for name in names where name != vaultName && !name.hasPrefix(".") {
            guard ConflictCopyName.tool(of: name, copyOf: vaultName)?.nameIsDistinctive == true else { continue }
            let copyPath = folder == "/" ? "/" + name : folder + "/" + name
            guard FileSystem.linkStatus(copyPath)?.isRegularFile == true, let file = try? SystemFile(path: copyPath, mode: .readOnly),
                let bytes = try? file.read(count: FileHeader.byteCount, at: 0),
                let header = try? FileHeader.parse(bytes).0, header.vaultID == vaultID
            else { continue }
            copies.append(copyPath)
        }
        return copies
    }

    /// The copies ``events(coalescing:)`` announces
    /// (``VaultEvent/conflictCopiesAppeared(_:)``): every copy
    /// ``conflictCopies()`` finds by header, whatever its name — iCloud
    /// Drive's `Journal 2.quire` as well as Syncthing's conflict copies —
    /// since a fold reports each (merged, or kept and why) and an app asks
    /// the person about those it does not merge. The folder is listed and
    /// the 64-byte header of each regular file in it read. Nil when the
    /// folder or the vault's header cannot be read now (nothing to say).
    func copiesToAnnounce() -> [String]? {
        let path = lock.withLock { file.path }
        return try? ConflictCopies.find(for: path).map(\.path)
    }

    /// Merges every conflict copy a sync tool made into this vault with
    /// this vault's credential, deletes each the vault then holds entirely,
    /// sets aside each that can never be taken in whole, leaves every other
    /// copy of the vault (backups) unmerged, and reads the vault again
    /// (`Spec/merge.md §4`).
    ///
    /// - Returns: what became of each copy.
    /// - Throws: a sync error when the copies cannot be listed;
    ///   a failure on one copy is in its report entry.
    @discardableResult
    @_spi(Format)
    public func foldConflictCopies() throws(QuireError) -> FoldReport {
        try reportingOwnWrite { () throws(QuireError) -> FoldReport in
            let report: FoldReport
            do throws(SyncError) {
                report = try ConflictCopies.fold(into: file.path, credential: credential, random: random, options: writeOptions)
            } catch {
                throw .sync(error)
            }
            try reloadUnjudged()
            return report
        }
    }
}

extension Vault {
    /// Compacts the vault (`Spec/merge.md §6`): keeps entry heads (and
    /// `options.keepHistory` earlier revisions; a deleted entry past the
    /// tombstone horizon only its tombstones), live attachments, the newest profile and every trusted
    /// keyring; with `options.rekey`, seals everything again under a new
    /// epoch, so removed devices and former
    /// escrow or passphrase keys read nothing in the new file. Reads the
    /// vault again afterwards.
    ///
    /// - Parameter now: milliseconds since the Unix epoch, UTC.
    /// - Throws: a sync error (``SyncError/damaged(issues:)`` when
    ///   records would be lost, and the other errors of
    ///   ``Compaction/compact(vaultAt:credential:options:now:random:writeOptions:)``).
    @discardableResult
    @_spi(Format)
    public func compact(_ options: CompactionOptions = CompactionOptions(), now: Int64 = ProcessStats.wallClockMilliseconds())
        throws(QuireError) -> CompactionReport
    {
        try reportingOwnWrite { () throws(QuireError) -> CompactionReport in
            let report: CompactionReport
            do throws(SyncError) {
                report = try Compaction.compact(
                    vaultAt: file.path, credential: credential, options: options, now: now, random: random, writeOptions: writeOptions)
            } catch {
                throw .sync(error)
            }
            let passed = rollbackRefusal == nil
            try reloadUnjudged()
            // Dropping what does not verify may drop revisions this device
            // saw attested before a keyless writer tampered with their
            // commits: device memory's newest entries would then find them
            // lacking (Spec/keys.md §7, test 3). The device made this
            // rewrite itself from a file that passed, so it remembers the
            // result (§7: "a compaction it made itself").
            if options.dropUnverified, passed, deviceStore != nil, !deviceMemoryWriteDeferred {
                _ = try? loadIndex()
                do throws(QuireError) { try rememberHeads() } catch { noteMemoryNotSaved(error) }
            }
            return report
        }
    }
}
