@_spi(Crypto) package import QuireCrypto
@_spi(Format) package import QuireFormat
@_spi(Format) package import QuireKeys

/// The device-local index cache (`Spec/index-cache.md`): a sealed file, one
/// per vault, holding the entry summaries and the search index of a prefix
/// of the vault file, so that a cold open reads only what was appended
/// after it. Nothing in it is trusted before its tag verifies and its file
/// identity matches the vault file; anything else is discarded
/// (``Load/discarded(_:)``) and the caller rebuilds from the file.
/// `Vault.open(at:store:)` loads it at the first query (`Vault+IndexCache.swift`).
package enum IndexCache {
    /// The format version, in the clear and in the associated data: a
    /// reader discards any other.
    package static let formatVersion: UInt8 = 11
    /// The first bytes of every cache file.
    package static let magic: [UInt8] = Array("QUIRE-IC".utf8)
    /// Magic, version and the sealed header's, frame directory's,
    /// summaries directory's, summaries' id part's and row groups', search
    /// index's term table's and posting groups' lengths (`Spec/index-cache.md §4`).
    package static let prefixByteCount = 53
    /// A cache file larger than this is discarded unread.
    package static let maxFileBytes = 1 << 30
    /// The name's extension.
    package static let fileExtension = "qic"
    /// A query that loads the cache and reads at least this many committed
    /// frames after it rewrites the cache (`Spec/index-cache.md §8`): about
    /// 128 `quire add`s, so the tail every open scans stays short.
    package static let tailFramesBeforeRewrite = 256

    /// The part of the vault file a cache reflects (`Spec/index-cache.md §2`).
    package struct Identity: Sendable, Equatable {
        /// The committed end the cache covers: the end of the commit frame
        /// whose stored head is ``chainHead``.
        package var committedLength: UInt64
        /// The frames the cache covers (`0..<frameCount`); the tail after it
        /// starts at this frame index.
        package var frameCount: Int
        /// The stored head `h_k` of that commit (32 bytes).
        package var chainHead: [UInt8]
        /// The keyring heads the summaries were built under, sorted.
        package var keyringHeads: [KeyringID]
        /// BLAKE2b-256 over the stored bytes of every commit frame among
        /// the frames covered, in file order (``commitsDigest(of:frameCount:)``):
        /// a commit frame overwritten in place keeps its head but not this.
        package var commitsDigest: [UInt8]

        /// An identity; `keyringHeads` are kept sorted.
        package init(
            committedLength: UInt64, frameCount: Int, chainHead: [UInt8], keyringHeads: [KeyringID],
            commitsDigest: [UInt8] = [UInt8](repeating: 0, count: 32)
        ) {
            self.committedLength = committedLength
            self.frameCount = frameCount
            self.chainHead = chainHead
            self.keyringHeads = keyringHeads.sorted()
            self.commitsDigest = commitsDigest
        }

        /// The identity of everything committed in `structure`; nil when
        /// a commit frame's header was repaired (its stored bytes are not
        /// those the scan kept, so no digest of them can be made).
        package init?(committedIn structure: VaultStructure, keyringHeads: [KeyringID]) {
            guard let digest = Self.commitsDigest(of: structure, frameCount: structure.committedFrameCount) else { return nil }
            self.init(
                committedLength: structure.committedEnd, frameCount: structure.committedFrameCount,
                chainHead: structure.groups.last?.storedHead ?? CommitChain.genesisHead, keyringHeads: keyringHeads,
                commitsDigest: digest)
        }

        /// BLAKE2b-256 over the stored bytes — the 16-byte header and the
        /// 200-byte body, 216 bytes each — of every commit frame among the
        /// first `frameCount` frames of `structure`, in file order
        /// (`Spec/index-cache.md §1`); nil when one of those headers was
        /// repaired by the scan (one flipped bit corrected). The scan kept
        /// every commit frame's bytes, so this reads nothing.
        package static func commitsDigest(of structure: VaultStructure, frameCount: Int) -> [UInt8]? {
            var hasher = BLAKE2b.Hasher(byteCount: 32)
            for g in structure.groups {
                guard g.commitFrame < frameCount else { break }
                let frame = structure.frames[g.commitFrame]
                guard !frame.repaired, g.commitBody.count == CommitChain.bodyByteCount else { return nil }
                hasher.update(frame.headerBytes)
                hasher.update(g.commitBody)
            }
            return hasher.finalize()
        }

        /// Nil when a cache of this identity still describes a prefix of the
        /// file `structure` scanned, unlocked under `keyringHeads`: a commit
        /// of the file ends at ``committedLength`` as frame
        /// ``frameCount`` − 1 with the stored head ``chainHead``, the
        /// commit frames before it hash to ``commitsDigest``, and the
        /// keyring heads are the same. Otherwise why it is discarded.
        ///
        /// `verifiedPrefix` is what the open from the cache's frame table
        /// already checked (``VaultFile/cachedPrefixFrameCount`` and
        /// ``VaultFile/cachedPrefixCommitsDigest``): when it covers the
        /// same frames with the same digest, the commit frames are not
        /// hashed again.
        package func check(
            against structure: VaultStructure, keyringHeads: [KeyringID],
            verifiedPrefix: (frameCount: Int, commitsDigest: [UInt8])? = nil
        ) -> Discard? {
            guard keyringHeads.sorted() == self.keyringHeads else { return .keyringsChanged }
            guard committedLength <= structure.committedEnd else { return .staleFile }
            if frameCount == 0 {
                return committedLength == UInt64(FileHeader.byteCount) && chainHead == CommitChain.genesisHead ? nil : .staleFile
            }
            let covers = structure.groups.contains { g in
                g.commitFrame == frameCount - 1 && structure.frames.end(at: g.commitFrame) == committedLength && g.storedHead == chainHead
            }
            guard covers else { return .staleFile }
            // The heads alone do not show a commit frame overwritten in
            // place after its head (its attestation, R6-4): the digest of
            // every prefix commit frame's bytes does.
            if let verifiedPrefix, verifiedPrefix.frameCount == frameCount, verifiedPrefix.commitsDigest == commitsDigest {
                return nil
            }
            return Self.commitsDigest(of: structure, frameCount: frameCount) == commitsDigest ? nil : .commitsChanged
        }
    }

    /// One entry as cached: its summary, its winning head (id, clock and
    /// where it is), and its other heads when it is in conflict: what a
    /// revision read from the tail is merged with (`Spec/merge.md §5`).
    package struct Entry: Sendable, Equatable {
        package var summary: EntrySummary
        /// The winning revision's id.
        package var revision: RevisionID
        /// The byte offset of the frame holding it (frame `summary.frame`).
        package var frameOffset: UInt64
        /// The winning revision's hybrid logical clock (raw value).
        package var clock: UInt64
        /// The entry's other heads, winner excluded (empty unless
        /// `summary.hasConflict`).
        package var otherHeads: [Head]
        /// How many revisions the vault holds for the entry (more than its
        /// other heads; by default one more): what ``EntrySnapshot/revisionCount`` says.
        package var revisionCount: Int

        package init(
            summary: EntrySummary, revision: RevisionID, frameOffset: UInt64, clock: UInt64, otherHeads: [Head] = [],
            revisionCount: Int? = nil
        ) {
            self.summary = summary
            self.revision = revision
            self.frameOffset = frameOffset
            self.clock = clock
            self.otherHeads = otherHeads
            self.revisionCount = revisionCount ?? otherHeads.count + 1
        }
    }

    /// A head of an entry other than its winner.
    package struct Head: Sendable, Equatable {
        package var revision: RevisionID
        /// Hybrid logical clock (raw value).
        package var clock: UInt64
        /// 2 attested by a member, 1 verified, 0 unverified.
        package var standing: UInt8
        /// The frame holding it: index and byte offset.
        package var frame: Int
        package var frameOffset: UInt64

        package init(revision: RevisionID, clock: UInt64, standing: UInt8, frame: Int, frameOffset: UInt64) {
            self.revision = revision
            self.clock = clock
            self.standing = standing
            self.frame = frame
            self.frameOffset = frameOffset
        }
    }

    /// The search index as stored: terms in strictly ascending bytewise
    /// order, each with the positions in ``Contents/entries`` of the
    /// documents holding it, strictly ascending.
    package struct StoredSearch: Sendable, Equatable {
        package var terms: [[UInt8]]
        package var postings: [[Int32]]
    }

    /// What a cache holds.
    package struct Contents: Sendable {
        package var vaultID: VaultID
        package var identity: Identity
        /// Every entry (deleted ones too), in date order; those of a loaded
        /// cache are decoded from ``packed`` on each read of this (a caller
        /// that needs a few reads ``entry(at:)``).
        package var entries: [Entry] {
            get { packed.map { p in (0..<p.count).map { p.entry($0) } } ?? given }
            set {
                given = newValue
                packed = nil
            }
        }
        /// The entries given, when not loaded.
        private var given: [Entry]
        /// A loaded cache's summaries: each row group opened when a row in
        /// it is read, decoded row by row.
        private(set) var packed: PackedSummaries?
        /// The search index over ``entries``, when it was built.
        package var search: StoredSearch?
        /// The structure of the vault file's prefix the cache covers, so
        /// that an open scans only the bytes after it (`Spec/index-cache.md §5`);
        /// nil when none is stored (written empty) or it was not loaded.
        package var frameTable: PrefixFrameTable?

        package init(vaultID: VaultID, identity: Identity, entries: [Entry], search: StoredSearch?, frameTable: PrefixFrameTable? = nil) {
            self.vaultID = vaultID
            self.identity = identity
            self.given = entries
            self.search = search
            self.frameTable = frameTable
        }

        /// The contents of a loaded cache: its summaries as opened.
        init(vaultID: VaultID, identity: Identity, packed: PackedSummaries, search: StoredSearch?, lazySearch: LazySearch? = nil) {
            self.init(vaultID: vaultID, identity: identity, entries: [], search: search)
            self.packed = packed
            self.lazySearch = lazySearch
        }

        /// The search index of a cache loaded with its posting lists left
        /// encoded (``IndexCache/load(folder:key:vaultID:search:checkEveryRow:lazyPostings:check:)``);
        /// ``search`` is then nil.
        private(set) var lazySearch: LazySearch?

        /// The number of entries.
        package var entryCount: Int { packed?.count ?? given.count }

        /// How many row groups of a loaded cache's summaries were opened
        /// so far, and how many there are; nil when not loaded. For tests.
        package var summaryGroupLoads: (opened: Int, groups: Int)? { packed.map { ($0.loadedGroupCount, $0.groups.count) } }

        /// The number of live (not deleted) entries of a loaded cache, from
        /// its directory; nil when not loaded. For tests.
        package var summaryLiveCount: Int? { packed?.liveCount }

        /// How many times a loaded cache's id part was opened so far (0 or
        /// 1); nil when not loaded. For tests.
        package var summaryIDPartLoads: Int? { packed?.idPartLoadCount }

        /// The rows whose entry ids lie between `lowest` and `highest`
        /// (bytewise, both included), ascending, looked up in a loaded
        /// cache's id part; nil when not loaded. For tests.
        package func rows(withIDsFrom lowest: EntryID, through highest: EntryID) -> [Int]? {
            packed?.rows(withIDsIn: IDKey(lowest)...IDKey(highest))
        }

        /// Why a row group of a loaded cache's summaries, opened when a row
        /// in it was read, did not check (its rows then read as deleted
        /// placeholders); nil while every one opened did. For tests.
        package var summaryFailure: Discard? { packed?.failure }

        /// Entry `i` (of ``entries``), decoding only it.
        package func entry(at i: Int) -> Entry { packed?.entry(i) ?? given[i] }

        /// The contents of live query indexes: `table`'s rows in date order,
        /// `winner` saying where each one's winning revision is (a row it
        /// answers nil for is left out, and so are its postings; it gives the
        /// winner's id, frame offset and clock and the other heads), and
        /// `search` renumbered to match.
        init(
            vaultID: VaultID, identity: Identity, table: EntrySummaryTable, search: SearchIndex?,
            winner: (EntrySummary) -> (revision: RevisionID, frameOffset: UInt64, clock: UInt64, otherHeads: [Head], revisionCount: Int)?
        ) {
            var entries: [Entry] = []
            entries.reserveCapacity(table.count)
            var position = [Int32](repeating: -1, count: table.slotCount)
            for slot in table.order {
                let s = table.summary(slot)
                guard let w = winner(s) else { continue }
                position[Int(slot)] = Int32(entries.count)
                entries.append(
                    Entry(
                        summary: s, revision: w.revision, frameOffset: w.frameOffset, clock: w.clock, otherHeads: w.otherHeads,
                        revisionCount: w.revisionCount))
            }
            let stored = search.map { index in
                let (terms, postings) = index.storedTerms { slot in
                    Int(slot) < position.count && position[Int(slot)] >= 0 ? position[Int(slot)] : nil
                }
                return StoredSearch(terms: terms, postings: postings)
            }
            self.init(vaultID: vaultID, identity: identity, entries: entries, search: stored)
        }

        /// Contents whose search index is built from `documents` (the text
        /// and tags of each live entry, by position in `entries`), as the
        /// vault builds it; for benchmarks and tests.
        package init(vaultID: VaultID, identity: Identity, entries: [Entry], documents: [(position: Int32, text: String, tags: [String])]) {
            let index = SearchIndex(documents.map { ($0.position, SearchIndex.Document(text: $0.text, tags: $0.tags)) })
            let (terms, postings) = index.storedTerms { $0 }
            self.init(vaultID: vaultID, identity: identity, entries: entries, search: StoredSearch(terms: terms, postings: postings))
        }

        /// The positions in ``entries`` of the documents whose text or
        /// tags hold every word of `text` (prefix matching, CJK bigrams, as
        /// `Vault.search`; long CJK runs unchecked), ascending; nil when no
        /// search index is stored or it is inconsistent.
        package func positions(matching text: String) -> [Int32]? {
            guard var index = makeSearchIndex() else { return nil }
            guard let found = index.match(text) else { return [] }
            guard !index.isDamaged else { return nil }
            return (0..<Int32(entryCount)).filter { found.documents.contains($0) }
        }

        /// Builds the summary table of ``entries`` as an open would and
        /// returns its row count; nil when two entries share an id. For
        /// benchmarks and tests.
        package func tableRowCount() -> Int? { makeTable()?.count }

        /// The summary table of ``entries``: slot `i` is `entries[i]`. Nil
        /// when two entries share an id. A loaded cache's rows are decoded
        /// when the table reads them (two of them sharing an id fail the
        /// summaries when the id table is built: ``PackedSummaries/failure``).
        func makeTable() -> EntrySummaryTable? {
            if let packed { return EntrySummaryTable(packed: packed) }
            let table = EntrySummaryTable(inOrder: given)
            return table.distinctCount == given.count ? table : nil
        }

        /// The search index over the table ``makeTable()`` returns; nil when
        /// none is stored or it is inconsistent.
        func makeSearchIndex() -> SearchIndex? {
            if let lazySearch {
                return SearchIndex(storedTerms: lazySearch.terms, encoded: lazySearch.postings, documentCount: entryCount)
            }
            guard let search else { return nil }
            return SearchIndex(storedTerms: search.terms, postings: search.postings, documentCount: entryCount)
        }
    }

    /// Why a cache was not used. Every one means the same to a caller: build
    /// from the vault file and write a new cache.
    package enum Discard: Error, Sendable, Equatable {
        /// No cache file.
        case missing
        /// It could not be read (I/O), or is not a regular file.
        case unreadable
        /// Another user owns it or others may read it.
        case notPrivate
        /// Larger than ``maxFileBytes``.
        case tooLarge
        /// It is not a cache file of a known version, or too short.
        case unknownFormat
        /// A tag did not verify: damaged, another device's, another vault's.
        case notAuthentic
        /// Sealed for this vault and device but not decodable (a writer bug).
        case malformed
        /// It was written for another vault id.
        case otherVault
        /// Its file identity is not a prefix of the vault file: compacted,
        /// replaced or rolled back.
        case staleFile
        /// The keyring heads changed (a rekey, a device added or removed).
        case keyringsChanged
        /// A commit frame it covers was changed in place (its stored
        /// bytes no longer give the recorded digest): something a full read
        /// reports, such as a failed attestation, may be there.
        case commitsChanged
    }

    /// The result of loading a cache: whole and checked, or discarded.
    package enum Load: Sendable {
        case loaded(Contents)
        case discarded(Discard)
    }
}

/// The keys of one vault's cache on one device (`Spec/index-cache.md §3`),
/// derived from the device's Ed25519 seed so that no new secret is stored:
///
/// ```
/// key  = BLAKE2b-256(key: seed, "quire-index-cache-key-v1" ‖ vault id)
/// name = hex(BLAKE2b-128(key: seed, "quire-index-cache-name-v1" ‖ vault id)) + ".qic"
/// ```
package struct IndexCacheKey: Sendable {
    /// The AEAD key, in guarded memory.
    package let sealing: SymmetricKey
    /// The cache file's name (no folder).
    package let fileName: String

    /// The keys of `vaultID`'s cache for the device `device`.
    ///
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
    package init(device: DeviceIdentity, vaultID: VaultID) throws(CryptoError) {
        let seed = SymmetricKey(storage: try device.keyPair.seed())
        var key = Self.derive(seed, label: "quire-index-cache-key-v1", vaultID: vaultID, byteCount: 32)
        sealing = SymmetricKey(storage: try SecureBytes(guardedConsuming: &key))
        fileName =
            hex(Self.derive(seed, label: "quire-index-cache-name-v1", vaultID: vaultID, byteCount: 16)) + "." + IndexCache.fileExtension
    }

    private static func derive(_ seed: SymmetricKey, label: String, vaultID: VaultID, byteCount: Int) -> [UInt8] {
        var hasher = BLAKE2b.Hasher(byteCount: byteCount, key: seed)
        hasher.update(Array(label.utf8))
        hasher.update(vaultID.bytes)
        return hasher.finalize()
    }
}
