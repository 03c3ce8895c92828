@_spi(Format) public import QuireFormat

/// What changed in a vault between two reads by one handle: the answer of
/// ``Vault/refresh()`` and what a change event of ``Vault/events(coalescing:)`` carries.
///
/// Entries are compared by their heads (`Spec/merge.md §5`): an entry is
/// listed when its winning revision, its deletion or its conflicting heads
/// differ — so a compaction or a sync tool's copy of the same history gives
/// the same change set as the appends that led to it, and an append that
/// changes no head (a revision already superseded) gives none.
public struct VaultChangeSet: Sendable, Equatable {
    /// The entries whose state changed, ordered by entry id.
    public let entries: [EntryChange]
    /// The keys, when the keyrings changed (a device added or removed, a
    /// rotation, this credential removed); nil otherwise.
    public let keys: KeysChange?
    /// True when the journal profile (its name) changed.
    public let profileChanged: Bool
    /// Records met for the first time that cannot be read (damaged,
    /// altered, sealed under a key this credential does not hold, in a
    /// commit that does not verify), in file order: an app says them beside
    /// what it shows (see ``UnreadRecords``). Nothing is dropped silently.
    public let unreadRecords: [UnreadRecords.Record]
    /// The bytes after the last commit, when there are some and they
    /// differ from what the previous change set said: a commit another
    /// process is still writing, or a torn or damaged tail
    /// (`Spec/format.md §10.3`). Nothing in them is committed; a later
    /// refresh reads the commit when it lands.
    @_spi(Format) public let uncommittedTail: UncommittedTail?
    /// True when the path named another file than the one this handle read
    /// (a sync tool renamed a copy over it, another process compacted or
    /// merged it, or it shrank), and the handle opened it again. The change
    /// set is still exact; frame positions kept from the old file belong to
    /// it alone.
    @_spi(Format) public let fileReplaced: Bool

    /// True when nothing changed.
    public var isEmpty: Bool {
        entries.isEmpty && keys == nil && !profileChanged && unreadRecords.isEmpty && uncommittedTail == nil
    }

    /// The ids of the entries of ``entries`` of `kind`, ordered by id.
    public func ids(_ kind: EntryChange.Kind) -> [EntryID] { entries.filter { $0.kind == kind }.map(\.id) }
    /// The entries whose conflict appeared, ordered by id.
    public var conflictsAppeared: [EntryID] { entries.filter { $0.conflict == .appeared }.map(\.id) }
    /// The entries whose conflict was resolved, ordered by id.
    public var conflictsResolved: [EntryID] { entries.filter { $0.conflict == .resolved }.map(\.id) }

    /// A change set of these parts (tests and apps that merge several).
    @_spi(Format) public init(
        entries: [EntryChange] = [], keys: KeysChange? = nil, profileChanged: Bool = false, unreadRecords: [UnreadRecords.Record] = [],
        uncommittedTail: UncommittedTail? = nil, fileReplaced: Bool = false
    ) {
        self.entries = entries.sorted { $0.id < $1.id }
        self.keys = keys
        self.profileChanged = profileChanged
        self.unreadRecords = unreadRecords
        self.uncommittedTail = uncommittedTail
        self.fileReplaced = fileReplaced
    }
}

/// Bytes after a vault's last commit (`Spec/format.md §10.3`).
@_spi(Format) public struct UncommittedTail: Sendable, Equatable {
    /// Where they start: the committed end, in bytes from the file's start.
    public let offset: UInt64
    /// How many bytes there are.
    public let byteCount: UInt64

    /// A tail of `byteCount` bytes at `offset`.
    public init(offset: UInt64, byteCount: UInt64) {
        self.offset = offset
        self.byteCount = byteCount
    }
}

/// How one entry changed between two reads (`Spec/merge.md §5`).
public struct EntryChange: Sendable, Equatable {
    /// An entry's heads as a reader sees them (for the CLI and the tests;
    /// an app reads ``kind``, and the change set's conflicts).
    @_spi(Format) public struct State: Sendable, Hashable {
        /// The winning head (greatest clock, then greatest revision id).
        public let winner: RevisionID
        /// True when the winning head is a tombstone.
        public let isDeleted: Bool
        /// The other heads, winner-order (a conflict when not empty).
        public let conflictingHeads: [RevisionID]

        /// A state with these heads.
        @_spi(Format) public init(winner: RevisionID, isDeleted: Bool, conflictingHeads: [RevisionID] = []) {
            self.winner = winner
            self.isDeleted = isDeleted
            self.conflictingHeads = conflictingHeads
        }
    }

    /// What happened to the entry, as a list of entries shows it.
    public enum Kind: Sendable, Equatable {
        /// New to this handle (it may arrive already deleted: reading the
        /// entry then shows it deleted).
        case added
        /// Its winning revision or its conflicting heads changed.
        case changed
        /// A tombstone became the winning head.
        case deleted
        /// A deleted entry was brought back.
        case restored
        /// The file no longer holds any revision of it: the file was
        /// replaced by an older copy, cut back, or its records became
        /// unreadable (see ``VaultChangeSet/unreadRecords``).
        case removed
    }

    /// How the entry's conflict changed, if it did (for the CLI and the
    /// tests: an app reads ``VaultChangeSet/conflictsAppeared`` and
    /// ``VaultChangeSet/conflictsResolved``).
    @_spi(Format) public enum Conflict: Sendable, Equatable {
        /// Concurrent heads appeared: show the conflict.
        case appeared
        /// The entry had concurrent heads and now has one.
        case resolved
    }

    /// The entry.
    public let id: EntryID
    /// What happened to the entry.
    public let kind: Kind
    /// Whether a conflict appeared or was resolved; nil when neither.
    @_spi(Format) public let conflict: Conflict?
    /// Its state before; nil when the handle did not know the entry.
    @_spi(Format) public let before: State?
    /// Its state now; nil when the file no longer holds it.
    @_spi(Format) public let after: State?

    /// A change from `before` to `after`; ``kind`` and ``conflict`` follow
    /// from them.
    @_spi(Format) public init(id: EntryID, before: State?, after: State?) {
        self.id = id
        self.before = before
        self.after = after
        self.kind = Self.kind(before: before, after: after)
        self.conflict = Self.conflict(before: before, after: after)
    }

    /// What happened, from the states before and after.
    private static func kind(before: State?, after: State?) -> Kind {
        guard let after else { return .removed }
        guard let before else { return .added }
        if after.isDeleted != before.isDeleted { return after.isDeleted ? .deleted : .restored }
        return .changed
    }

    /// Whether a conflict appeared or was resolved, from the states before
    /// and after.
    private static func conflict(before: State?, after: State?) -> Conflict? {
        let was = !(before?.conflictingHeads.isEmpty ?? true)
        let now = !(after?.conflictingHeads.isEmpty ?? true)
        if now && !was { return .appeared }
        if was && !now { return .resolved }
        return nil
    }
}

/// How the keys changed between two reads (`Spec/keys.md`).
public struct KeysChange: Sendable, Equatable {
    /// The write epoch before and after (the highest trusted keyring head).
    @_spi(Format) public let epochBefore: UInt32
    /// The write epoch now.
    @_spi(Format) public let epochAfter: UInt32
    /// The ids of the trusted keyring heads before, in byte order.
    @_spi(Format) public let headsBefore: [KeyringID]
    /// The ids of the trusted keyring heads now, in byte order.
    @_spi(Format) public let headsAfter: [KeyringID]
    /// Members (devices, the recovery key) added, in the new head's order.
    public let membersAdded: [KeyringMember]
    /// Members no longer listed, in the old heads' order.
    public let membersRemoved: [KeyringMember]
    /// True when this credential was removed from the vault (or left out
    /// of a newer keyring) by this change: it may read what it could, and
    /// no longer write (`.readOnly`; `behind_newer_keyring` for a removed
    /// device, which cannot open the keyring that removed it, see
    /// ``Vault/removedFromVault``).
    public let thisCredentialRemoved: Bool

    /// A keys change of these parts.
    @_spi(Format) public init(
        epochBefore: UInt32, epochAfter: UInt32, headsBefore: [KeyringID], headsAfter: [KeyringID], membersAdded: [KeyringMember],
        membersRemoved: [KeyringMember], thisCredentialRemoved: Bool
    ) {
        self.epochBefore = epochBefore
        self.epochAfter = epochAfter
        self.headsBefore = headsBefore
        self.headsAfter = headsAfter
        self.membersAdded = membersAdded
        self.membersRemoved = membersRemoved
        self.thisCredentialRemoved = thisCredentialRemoved
    }
}
