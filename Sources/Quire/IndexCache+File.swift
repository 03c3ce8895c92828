@_spi(Crypto) package import QuireCrypto
@_spi(Format) package import QuireFormat
package import QuireSystem

/// The cache file on disk (`Spec/index-cache.md §5`): written whole through
/// a 0600 temporary file in the same folder, fsync, rename and a folder
/// fsync; read only when it is a regular file of this user that no one
/// else may read.
extension IndexCache {
    /// The folder of caches in a key store folder: `<store>/caches`.
    package static func folder(inKeyStore directory: String) -> String { directory + "/caches" }

    /// Seals `contents` and replaces the cache file `key` names in `folder`
    /// (made 0700 when missing) atomically: a reader sees the old file or the
    /// new one, never part of one.
    ///
    /// - Throws: ``SystemError`` for I/O; nothing is left behind then.
    /// `postingGroupBytes`, for tests, sets the bytes of postings per
    /// sealed group of the search index.
    package static func write(
        _ contents: Contents, key: IndexCacheKey, folder: String, random: any RandomSource = SystemRandom(),
        postingGroupBytes: Int = defaultPostingGroupBytes
    ) throws(SystemError) {
        let bytes = seal(contents, key: key, random: random, postingGroupBytes: postingGroupBytes)
        if !FileSystem.exists(folder) {
            do { try FileSystem.makeDirectory(folder, permissions: 0o700) } catch  where error.isAlreadyExists {}
        }
        let path = folder + "/" + key.fileName
        let temp = Leftovers.temporaryPath(for: path, random: random)
        let file = try SystemFile(path: temp, mode: .createExclusive(permissions: 0o600))
        do throws(SystemError) {
            try file.write(bytes, at: 0)
            try file.sync()
            try FileSystem.rename(temp, to: path)
        } catch {
            try? FileSystem.remove(temp)
            throw error
        }
        try FileSystem.syncDirectory(folder)
    }

    /// Loads the cache file `key` names in `folder`, sealed for `vaultID`,
    /// if `check` accepts its file identity (see ``open(_:key:vaultID:search:checkEveryRow:check:)``).
    /// Every failure found then, I/O included, is a ``Load/discarded(_:)``;
    /// without `checkEveryRow`, the summaries' row groups are read from the
    /// file, kept open, when a row in them is first read (a rewrite renames
    /// a new file over this one: they are still read from this one).
    /// With `lazyPostings`, the search index's posting lists are left
    /// encoded, each decoded and checked when a search first reads it
    /// (``Contents/makeSearchIndex()``).
    package static func load(
        folder: String, key: IndexCacheKey, vaultID: VaultID, search: Bool = true, checkEveryRow: Bool = true,
        lazyPostings: Bool = false, check: (Identity) -> Discard?
    ) -> Load {
        let path = folder + "/" + key.fileName
        let file: SystemFile
        let size: UInt64
        do throws(SystemError) {
            file = try SystemFile(path: path, mode: .readOnly, allowNonRegular: true, noFollow: true)
            let status = try file.status()
            guard status.isRegularFile else { return .discarded(.unreadable) }
            guard status.owner == FileSystem.currentUserID(), status.permissions & 0o077 == 0 else { return .discarded(.notPrivate) }
            guard status.size <= UInt64(maxFileBytes) else { return .discarded(.tooLarge) }
            size = status.size
        } catch {
            return .discarded(error.isNotFound ? .missing : .unreadable)
        }
        // Each part is read when it is needed (the frame table not at all,
        // the search index only when wanted), from this one open file.
        return open(
            byteCount: Int(size), key: key, vaultID: vaultID, search: search, checkEveryRow: checkEveryRow, lazyPostings: lazyPostings,
            check: check
        ) { range in
            guard let bytes = try? file.read(count: range.count, at: UInt64(range.lowerBound)), bytes.count == range.count else {
                return nil
            }
            return bytes
        }
    }

    /// The file identity and frame table of the cache file `key` names in
    /// `folder`, sealed for `vaultID`: what an open reads before it scans
    /// the vault file (`Spec/index-cache.md §5`). Only the header and the
    /// frame directory are read and opened now; the file is kept open and
    /// each row group read from it when the table's loader is asked for it
    /// (a rewrite renames a new file over this one: the loader still reads
    /// this one). The same checks as ``load(folder:key:vaultID:search:check:)``
    /// apply, and every failure is a ``Discard``.
    package static func loadFrameTable(folder: String, key: IndexCacheKey, vaultID: VaultID) -> Result<
        (identity: Identity, table: CachedFrameTable?), Discard
    > {
        let path = folder + "/" + key.fileName
        let prefix: [UInt8]
        var headerPart: [UInt8]
        var tablePart: [UInt8]
        let file: SystemFile
        let size: UInt64
        do throws(SystemError) {
            file = try SystemFile(path: path, mode: .readOnly, allowNonRegular: true, noFollow: true)
            let status = try file.status()
            guard status.isRegularFile else { return .failure(.unreadable) }
            guard status.owner == FileSystem.currentUserID(), status.permissions & 0o077 == 0 else { return .failure(.notPrivate) }
            guard status.size <= UInt64(maxFileBytes), status.size >= UInt64(prefixByteCount) else {
                return .failure(status.size < UInt64(prefixByteCount) ? .unknownFormat : .tooLarge)
            }
            size = status.size
            prefix = try file.read(count: prefixByteCount, at: 0)
            guard prefix.starts(with: magic), prefix[magic.count] == formatVersion else { return .failure(.unknownFormat) }
            guard let end = summariesStart(prefix: prefix), UInt64(end) <= status.size, let lengths = partLengths(prefix: prefix) else {
                return .failure(.unknownFormat)
            }
            // The header with its nonce, then the frame directory with its
            // nonce, each in a buffer of its own that it is opened in.
            let nonce = XChaCha20Poly1305.nonceByteCount
            headerPart = try file.read(count: nonce + lengths.header, at: UInt64(prefixByteCount))
            tablePart = try file.read(count: nonce + lengths.frameTable, at: UInt64(prefixByteCount + nonce + lengths.header))
        } catch {
            return .failure(error.isNotFound ? .missing : .unreadable)
        }
        return openFrameTable(
            prefix: prefix, headerPart: &headerPart, tablePart: &tablePart, key: key, vaultID: vaultID, fileSize: Int(size)
        ) { range in
            guard let bytes = try? file.read(count: range.count, at: UInt64(range.lowerBound)), bytes.count == range.count else {
                return nil
            }
            return bytes
        }
    }

    /// Removes the temporary files (`<name>.tmp-PID-HEX`) of the cache
    /// `key` names in `folder` whose writing process is gone: a writer
    /// killed between creating one and renaming it. Best effort; a
    /// temporary file of a live process is left alone.
    package static func removeStaleTemporaries(folder: String, key: IndexCacheKey) {
        guard let names = try? FileSystem.listDirectory(folder) else { return }
        let prefix = key.fileName + ".tmp-"
        for name in names where name.hasPrefix(prefix) {
            let parts = name.dropFirst(prefix.count).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, !FileSystem.processExists(pid) else { continue }
            try? FileSystem.remove(folder + "/" + name)
        }
    }

    /// Removes the cache file `key` names in `folder`, if any (after a
    /// discard, or when the device leaves the vault). Best effort.
    package static func remove(folder: String, key: IndexCacheKey) {
        try? FileSystem.remove(folder + "/" + key.fileName)
    }
}
