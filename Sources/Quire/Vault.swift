public import Foundation
@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat
@_spi(Format) @_spi(Crypto) public import QuireKeys
@_spi(Format) import QuireSync
import QuireSystem

/// How to set up a new vault (`Spec/keys.md §6.1`).
public struct VaultSetup: Sendable {
    /// The journal's display name (given to ``init(name:recoveryKey:)``).
    @_spi(Format) public var name: String
    /// The recovery key (given to ``init(name:recoveryKey:)``).
    @_spi(Format) public var recoveryKey: RecoveryKey
    /// This device, when a device creates the vault (the usual case): it
    /// becomes the first member and signs the first keyring. An app leaves
    /// it to the key store it passes to `create(at:setup:store:)`.
    @_spi(Format) public var device: DeviceIdentity?
    /// An optional passphrase that also opens the vault (mapped to Unicode
    /// NFC before Argon2id, `Spec/keys.md §2.3`).
    ///
    /// The library copies its UTF-8 bytes into guarded memory when it
    /// creates the vault and wipes the intermediate copy. It cannot wipe
    /// the string itself (a Swift `String` offers no way to overwrite its
    /// storage): drop the setup once the vault is created.
    public var passphrase: String?
    /// ``passphrase`` already in guarded memory (the CLI, vectors, tests);
    /// when set it is used and ``passphrase`` is ignored.
    @_spi(Crypto) public var guardedPassphrase: SecureBytes?
    /// Argon2id passes for the passphrase slot (1…8).
    @_spi(Format) public var passphraseOpsLimit: UInt64 = Argon2id.moderateOpsLimit
    /// Argon2id memory for the passphrase slot, in bytes (8 KiB…1 GiB).
    @_spi(Format) public var passphraseMemLimitBytes: UInt64 = Argon2id.moderateMemLimitBytes
    /// An escrow custodian, in standard mode.
    @_spi(Format) public var escrow: EscrowRecipient?
    /// Escrow-free mode: no escrow slot may ever be added.
    @_spi(Format) public var isEscrowFree: Bool = false
    /// The creation time, of the first keyring and the profile; stored to
    /// the millisecond. Default: when the setup was made.
    @_spi(Format) public var created: Date {
        get { Date(millisecondsSince1970: now) }
        set { now = newValue.millisecondsSince1970 }
    }
    /// ``created`` as the format stores it: milliseconds since the Unix
    /// epoch, UTC (for vectors and tests, which fix it).
    @_spi(Format) public var now: Int64

    /// Setup with the recovery key and a name; everything else off (set
    /// ``passphrase`` for one). The vault is created now, and the key store
    /// given to `create(at:setup:store:)` supplies this device, its first
    /// member.
    ///
    /// - Parameters:
    ///   - name: the journal's display name.
    ///   - recoveryKey: the recovery key; generate it with
    ///     ``RecoveryKey/init()`` and show its ``RecoveryKey/code()`` to the
    ///     user once.
    public init(name: String, recoveryKey: RecoveryKey) {
        self.init(name: name, recoveryKey: recoveryKey, device: nil, now: Date().millisecondsSince1970)
    }

    /// Setup with the recovery key, a name, the device that becomes the
    /// first member (nil: none) and the creation time (default now).
    @_spi(Format) public init(name: String, recoveryKey: RecoveryKey, device: DeviceIdentity?, created: Date = Date()) {
        self.init(name: name, recoveryKey: recoveryKey, device: device, now: created.millisecondsSince1970)
    }

    /// `init(name:recoveryKey:device:created:)` with the time in
    /// milliseconds since the Unix epoch, UTC (vectors and tests).
    @_spi(Format) public init(name: String, recoveryKey: RecoveryKey, device: DeviceIdentity? = nil, now: Int64) {
        self.name = name
        self.recoveryKey = recoveryKey
        self.device = device
        self.now = now
    }
}

/// An open vault: the journal an app or the CLI works with (`Spec/`).
///
/// ```swift
/// let recovery = try RecoveryKey()
/// let vault = try await Vault.create(at: "Journal.quire", setup: VaultSetup(name: "Journal", recoveryKey: recovery))
/// let entry = try await vault.commit { tx in try tx.add(EntryBody(created: Date(), text: "Up betimes.")) }
/// let same = try await Vault.open(at: "Journal.quire", credential: .recoveryKey(recovery))
/// let page = try await same.entries(matching: EntryQuery(order: .newestFirst, limit: 50))
/// for e in page.entries { print(e.body.text) }
/// ```
///
/// A `Vault` may be shared between threads: every method takes the handle's
/// lock, and the state that changes (the file, the keys, the index, the
/// key warnings) is read and written only under it; the settings chosen at
/// open (the write options, whether entry bodies are retained, the
/// author id) are constants. It is `@unchecked Sendable` because that lock, not the
/// compiler, guards the mutable state. Appends from other processes are serialised by the file's advisory
/// lock and picked up before each commit.
public final class Vault: @unchecked Sendable {
    /// The container-level file, read under the lock. Replaced by
    /// ``reload()`` when a sync tool has put a new file at the path. For the
    /// CLI, vectors and benchmarks; not part of the app-facing API.
    package var file: VaultFile { lock.withLock { currentFile } }
    /// The file, guarded by ``lock``.
    var currentFile: VaultFile
    let lock = RecursiveLock()
    /// The worker `async` calls run on and the listeners of this handle's
    /// own commits (`Vault+Async.swift`, ``VaultObserver``).
    let concurrency = VaultConcurrency()
    /// The keys and keyrings the credential reached, read under the lock.
    package var unlocked: UnlockedKeys { lock.withLock { currentKeys } }
    /// ``unlocked`` for the fuzz seed generator (`Fuzz/SeedGen`), a package
    /// of its own that `package` access does not reach. Not for apps.
    @_spi(Format) public var unlockedKeys: UnlockedKeys { unlocked }
    /// The keys, guarded by ``lock``.
    var currentKeys: UnlockedKeys {
        didSet { keyringsJoined = false }
    }
    /// True once ``joinConcurrentKeyrings()`` found nothing to join for the
    /// current ``unlocked`` keys, so that appends do not rebuild the key
    /// state every time.
    var keyringsJoined = false
    let credential: Credential
    let random: any RandomSource
    /// How appends reach the disk, fixed when the vault is opened.
    @_spi(Format) public let writeOptions: WriteOptions
    /// The device id recorded as the author of new revisions.
    @_spi(Format)
    public let author: DeviceID?
    var index: EntryIndex?
    /// How many times the entry index was read whole (``loadIndex()``);
    /// guarded by ``lock``.
    var fullIndexLoadCount = 0
    /// How many times this handle read the entry index whole: what the
    /// index cache spares (`Spec/index-cache.md §5`). For tests and
    /// benchmarks.
    package var fullIndexLoads: Int { lock.withLock { fullIndexLoadCount } }
    /// This device's index cache of the vault, when it was opened through
    /// a key store that keeps one (`Spec/index-cache.md`); guarded by ``lock``.
    var indexCache: IndexCacheBinding?
    /// Whether the entry index keeps every revision's decoded body, fixed
    /// when the vault is opened (default true: listing and reading entries
    /// decrypt each revision once). False suits work over a whole large
    /// journal that must not hold it in memory, such as an import or an
    /// export: the index then keeps about 100 bytes per revision (ids,
    /// parents, clock, frame) and reads a body from the file again when it
    /// is asked for.
    @_spi(Format) public let retainsEntryBodies: Bool
    /// This device's key store, when the vault was opened through one: it
    /// remembers the keyring heads this device trusted (`Spec/keys.md §7`).
    var deviceStore: (any DeviceKeyStore)?
    /// True while a key change commits: it joins concurrent keyrings itself.
    var changingKeys = false
    /// True while a commit runs: device memory is written once, after it
    /// (`Spec/keys.md §7`), not also when the commit builds the index.
    var deviceMemoryWriteDeferred = false
    /// The entries this handle's own attested commits wrote, with their
    /// clocks, the newest 16 (``VaultMemory/newestEntries(_:)``): what
    /// device memory's `newest` gains when neither the entry index nor the
    /// cached view is loaded (a write that never queried,
    /// `Spec/keys.md §7`). Under the lock.
    var committedNewest: [VaultMemory.NewestEntry] = []
    /// True when device memory was written with `newest` carried over
    /// (neither the entry index nor the cached view loaded): the cached
    /// view, once loaded, remembers it (``rememberNewestFromCachedView()``,
    /// `Spec/keys.md §7`). Under the lock.
    var newestMemoryStale = false
    /// Warnings about the keys found when the vault was opened or changed,
    /// such as a suspected rollback (``QuireError/Category/needsMerge``,
    /// `rollback_suspected`, `Spec/keys.md §7`) or device memory that could
    /// not be saved (``QuireError/Category/unavailable``,
    /// `device_memory_not_saved`); read under the lock. The vault is open and
    /// usable: show them, do not treat them as failures.
    public var keyWarnings: [QuireError] { lock.withLock { warnings.map(QuireError.fromKeys) } }
    /// The key warnings, guarded by ``lock``.
    var warnings: [KeyError] = []
    /// The handle's hybrid logical clock: it follows every reading seen,
    /// and every clock drawn for a new record, committed or not.
    var clock = HybridLogicalClock(rawValue: 0)
    /// The greatest clock among the records this handle read from the
    /// file or committed to it: what it has seen, as device memory counts
    /// it (`Spec/keys.md §7`). Unlike ``clock``, never the clock of a
    /// record not yet committed (a commit in progress, or one abandoned):
    /// remembered, that one put the memory ahead of every file.
    var readClock = HybridLogicalClock(rawValue: 0)
    /// What ``refresh()`` compares against, guarded by ``lock``.
    var refreshLog = RefreshLog()
    /// Why writing is refused after a suspected rollback, until the user
    /// merges the newer copy back or accepts this file (`Spec/keys.md §7`).
    var rollbackRefusal: String?
    /// Set when a ``refresh()`` or a ``reload()`` found the path replaced by
    /// a file that does not extend what this handle had seen, or that
    /// holds no revision of entries the handle had read: the reason, what
    /// the handle had seen before it (`Spec/keys.md §7`) and the entries
    /// it had read then. Each refresh
    /// throws `.needsMerge` (`rolled_back`) while it is set, and
    /// ``rollbackRefusal`` refuses writes; ``acceptRollback()``, or a file
    /// that passes the test again, clears it.
    var replacementRefusal: (reason: String, seen: VaultMemory?, entries: Set<EntryID>?)?
    /// The recovery key the user said they hold, which a join of concurrent
    /// replacements keeps (``keepRecoveryKey(_:)``, `Spec/keys.md §6.9`).
    var keptRecoveryKey: [UInt8]?
    /// Where the user accepted the tampered commits (``acceptTampered()``,
    /// `Spec/keys.md §7`): writes go on over those it covers.
    var acceptedTampered: VaultMemory.TamperedAcceptance?

    /// The credential's Ed25519 key pair — a device's own, or the one the
    /// recovery key derives — which signs every commit and keyring this
    /// handle writes; nil for a passphrase or an escrow key, which cannot
    /// write. Derived once: the recovery key's costs a KDF and a scalar
    /// multiplication, too much to repeat for every commit.
    let signer: Ed25519.KeyPair?

    init(
        file: VaultFile, unlocked: UnlockedKeys, credential: Credential, signer: Ed25519.KeyPair?, random: any RandomSource,
        options: WriteOptions, retainsEntryBodies: Bool = true
    ) {
        currentFile = file
        self.retainsEntryBodies = retainsEntryBodies
        currentKeys = unlocked
        self.credential = credential
        self.random = random
        writeOptions = options
        self.signer = signer
        author = signer.map { DeviceID(publicKey: $0.publicKey) }
    }

    /// The vault id.
    public var vaultID: VaultID { file.vaultID }

    /// Opens the vault at `path` with `credential`.
    ///
    /// - Parameters:
    ///   - writable: open for appending.
    ///   - options: how appends reach the disk, for the handle's life.
    ///   - retainsEntryBodies: whether the entry index keeps decoded bodies
    ///     (``retainsEntryBodies``), for the handle's life.
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for a missing, damaged or foreign
    ///   file; a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) for a wrong credential (always
    ///   distinct from damage).
    @_spi(Format)
    public static func open(
        at path: String, credential: Credential, writable: Bool = true, random: any RandomSource = SystemRandom(),
        options: WriteOptions = WriteOptions(), retainsEntryBodies: Bool = true
    ) throws(QuireError) -> Vault {
        let file: VaultFile
        do { file = try VaultFile(path: path, writable: writable) } catch { throw QuireError(.diagnosing(error, path: path)) }
        return try open(
            file: file, credential: credential, random: random, options: options, retainsEntryBodies: retainsEntryBodies)
    }

    /// Unlocks the opened `file` with `credential` (see
    /// ``open(at:credential:writable:random:options:retainsEntryBodies:)``);
    /// `cachedKeyringHeads` as in ``unlock(_:with:cachedKeyringHeads:)``.
    static func open(
        file: VaultFile, credential: Credential, random: any RandomSource, options: WriteOptions, retainsEntryBodies: Bool,
        cachedKeyringHeads: [KeyringID]? = nil
    ) throws(QuireError) -> Vault {
        let unlocked = try unlock(file, with: credential, cachedKeyringHeads: cachedKeyringHeads)
        let signer: Ed25519.KeyPair?
        do { signer = try credential.signingKeyPair() } catch { throw .keys(error) }
        return Vault(
            file: file, unlocked: unlocked, credential: credential, signer: signer, random: random, options: options,
            retainsEntryBodies: retainsEntryBodies)
    }

    /// Creates a new vault at `path` (mode 0600) whose first commit holds the
    /// first keyring (epoch 1) and the profile.
    ///
    /// With `store` (an app's usual first launch), this device's identity
    /// in the store becomes the first member (``VaultSetup/device`` may be
    /// nil, or must be that identity), and the handle returned is opened
    /// through the store as ``open(at:store:writable:random:options:retainsEntryBodies:)``
    /// opens it: it remembers the vault in device memory and keeps the
    /// store's index cache. Without it, the handle holds the setup's device
    /// key (or the recovery key) alone: no device memory, no index cache.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) (``FormatError/alreadyExists(path:)``,
    ///   I/O), a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) (``KeyError/escrowRefused`` for an
    ///   escrow key in escrow-free mode, bad passphrase cost,
    ///   ``KeyError/operationRefused(reason:)`` when the setup names another
    ///   device than the store's), the key store's errors
    ///   (``DeviceStoreError/noKey`` when `store` holds no identity yet:
    ///   make one with `loadOrCreate(name:)` first). Nothing is
    ///   created when it throws before writing.
    @_spi(Format)
    public static func create(
        at path: String, setup: VaultSetup, store: (any DeviceKeyStore)? = nil, random: any RandomSource = SystemRandom(),
        options: WriteOptions = WriteOptions()
    ) throws(QuireError) -> Vault {
        var setup = setup
        if let store {
            let identity: DeviceIdentity?
            identity = try store.load()
            guard let identity else { throw .deviceStore(.noKey) }
            if let device = setup.device, device.publicKey != identity.publicKey {
                throw .keys(.operationRefused(reason: "the setup names another device than the one the key store holds"))
            }
            setup.device = identity
        }
        var root = KeyOperations.RootSetup(recoveryKey: setup.recoveryKey, device: setup.device, now: setup.now)
        var passphrase = setup.guardedPassphrase
        if passphrase == nil, let text = setup.passphrase { passphrase = try SecureBytes.guarded(utf8: text) }
        root.passphrase = passphrase.map { ($0, setup.passphraseOpsLimit, setup.passphraseMemLimitBytes) }
        root.escrow = setup.escrow
        root.isEscrowFree = setup.isEscrowFree
        let (vaultID, keyring): (VaultID, KeyringProposal)
        do { (vaultID, keyring) = try KeyOperations.root(root, random: random) } catch { throw .keys(error) }
        let epochKey = keyring.epochKey
        let signer: Ed25519.KeyPair
        if let device = setup.device {
            signer = device.keyPair
        } else {
            do { signer = try setup.recoveryKey.signingKeyPair() } catch { throw .keys(.operationRefused(reason: "\(error)")) }
        }
        let authorID = DeviceID(publicKey: signer.publicKey)
        let clock = HybridLogicalClock(rawValue: 0).tick(now: UInt64(max(0, setup.now)))
        let profile = Profile(name: setup.name, clock: clock, device: authorID)
        do {
            _ = try VaultFile.create(
                at: path, vaultID: vaultID, keys: KeySet(single: epochKey), random: random, options: options, attestWith: signer
            ) {
                (tx: PendingCommit) throws(FormatError) in
                try tx.appendKeyring(keyID: epochKey.id, epoch: 1, body: keyring.body)
                try tx.appendSealed(kind: .profile, payload: profile.encoded())
            }
        } catch {
            throw .format(error)
        }
        if let store { return try open(at: path, store: store, writable: true, random: random, options: options) }
        let credential: Credential = setup.device.map { .device($0.keyPair) } ?? .recoveryKey(setup.recoveryKey)
        return try open(at: path, credential: credential, writable: true, random: random, options: options)
    }

    /// True when this credential is a device whose key a keyring it trusts,
    /// a parent of `newer`, lists as a member: whoever made `newer` saw the
    /// device and gave it no key — a removal, or a member leaving it out
    /// on purpose — not a keyring made where it was not enrolled yet
    /// (`Spec/format.md §8.6`: being behind is not being removed; trial 26
    /// N2). The caller holds the lock.
    func wasMember(before newer: NewerKeyring) -> Bool {
        guard case .device(let pair) = credential else { return false }
        let rings = unlocked.keyrings
        guard let ring = rings.first(where: { $0.id == newer.id }) else { return false }
        return ring.parents.contains { id in
            guard let parent = rings.first(where: { $0.id == id }), parent.isTrusted else { return false }
            return parent.content?.members.contains { $0.publicKey == pair.publicKey } ?? false
        }
    }

    /// Why this credential may not write now, if it may not: records when
    /// `change` is nil, otherwise that key change (`Spec/format.md §8.6`,
    /// `Spec/keys.md §6`).
    func writableKey(for change: KeyChange? = nil) throws(QuireError) {
        let isRecovery: Bool
        if case .recoveryKey = credential { isRecovery = true } else { isRecovery = false }
        if let removed = unlocked.removedIn {
            // A replaced recovery key may still remove, from a fork, the
            // member who replaced it (Spec/keys.md §6.3); nothing else.
            switch change {
            case .remove?, .lockdown?: guard isRecovery else { throw .removedFromVault(newerEpoch: removed.epoch) }
            default: throw .removedFromVault(newerEpoch: removed.epoch)
            }
        }
        if let newest = unlocked.newerKeyrings.max(by: { $0.epoch < $1.epoch }) {
            // Behind: no records, no key change — except a removal of the
            // member that made such a keyring, and any removal or
            // replacement by the recovery key, which is never refused on
            // this ground.
            let signers = Set(unlocked.newerKeyrings.compactMap { $0.signer?.publicKey })
            let allowed: Bool
            switch change {
            case .remove(let key)?: allowed = isRecovery || signers.contains(key)
            case .lockdown?, .replaceRecoveryKey?: allowed = isRecovery
            default: allowed = false
            }
            if !allowed {
                throw .behindNewerKeyring(
                    newerEpoch: newest.epoch, madeBy: newest.signer.map(PrivacyStatement.phrase(for:)) ?? "a member",
                    wasMember: wasMember(before: newest))
            }
        }
        guard file.isWritable else { throw .format(.notWritable(reason: "it was opened read-only")) }
        if let reason = rollbackRefusal { throw .rolledBack(reason: reason) }
        // A commit altered after later ones were written: refused as for a
        // rollback, until a merge or a compaction rewrites it (Spec/format.md
        // §9.3), or the user accepts it (Spec/keys.md §7).
        if let g = file.tamperedCommits.first(where: { !isAcceptedTampered($0) }) {
            throw .tampered(file.structure.frames.location(at: file.structure.groups[g].commitFrame))
        }
        guard signer != nil else {
            throw .keys(
                .operationRefused(
                    reason:
                        "a passphrase or an escrow key can read this vault but not write to it; open it with a device or the recovery key"))
        }
    }

    /// Appends one commit built by `build`, atomically (`Spec/format.md §9.1`).
    /// If another process changed the keys or replaced the file (a
    /// compaction, a merge) in the meantime, the vault is reopened and the
    /// commit retried, for up to the lock timeout. If `build` throws, nothing
    /// is committed and the file is as it was.
    ///
    /// This call throws ``QuireError`` only, whatever `build` throws: a
    /// `QuireError` that `build` throws (the transaction's own calls throw
    /// nothing else, and an app may throw one it made with
    /// ``QuireError/init(category:code:message:)``) comes out unchanged; any
    /// other error of the app's is wrapped in one of category
    /// ``QuireError/Category/cancelled``, code `commit_abandoned`, and is
    /// there as ``QuireError/underlyingError``. So `catch` needs no cast:
    ///
    /// ```swift
    /// do {
    ///     try vault.commit { tx in
    ///         guard draft.isValid else { throw DraftError.empty }   // the app's own type
    ///         try tx.add(draft.body)
    ///     }
    /// } catch {   // error: QuireError
    ///     if error.underlyingError is DraftError { … } else { show(error.localizedDescription) }
    /// }
    /// ```
    ///
    /// - Throws: ``QuireError``: `.readOnly` (`behind_newer_keyring` for a removed
    ///   device, `removed_from_vault`, `not_writable`), `.needsMerge`
    ///   (`rolled_back`, `commit_tampered`), `.busy` (`locked`),
    ///   `.outOfSpace`, `.unavailable` or `.damaged` for the file,
    ///   `.programmerError` (`record_too_large`); what `build` threw, as
    ///   above.
    @_spi(Format)
    public func commit(_ build: (VaultTransaction) throws -> Void) throws(QuireError) {
        try commit(keyChange: nil) { (tx: VaultTransaction) throws(QuireError) in
            do { try build(tx) } catch { throw QuireError.wrapping(error) }
        }
    }

    /// ``commit(_:)`` for records (`change` nil) or for a key change, which
    /// the write gate judges on its own (``writableKey(for:)``).
    func commit(keyChange change: KeyChange?, _ build: (VaultTransaction) throws(QuireError) -> Void) throws(QuireError) {
        try lock.withLock { () throws(QuireError) -> Void in
            // Device memory is written once, after the commit is in the file
            // (two fsyncs, of the memory file and its folder), not also when
            // the commit builds the index: the write after the commit covers
            // what the index showed. A commit that fails writes nothing: the
            // clock it read for its revisions was never committed, and the
            // memory as it was is one the file extends.
            let outer = !deviceMemoryWriteDeferred
            deviceMemoryWriteDeferred = true
            var committed = false
            defer {
                if outer {
                    deviceMemoryWriteDeferred = false
                    if committed { rememberIfNotRolledBack() }
                }
            }
            try writableKey(for: change)
            // Records are not written beside a member's frame of a kind this
            // version does not know; key changes are (Spec/format.md §4.3).
            if change == nil, let fatal = file.fatalCriticalKind { throw QuireError.format(fatal) }
            try joinConcurrentKeyrings()
            // A writer that loses a race with a rewrite (a compaction or a
            // merge renamed a new file over the path) or a key change reads
            // the file again and retries, until the lock timeout: the user's
            // write does not fail because another process was faster.
            let deadline = ProcessStats.monotonicNanoseconds() + UInt64(max(1, writeOptions.lockTimeoutSeconds) * 1e9)
            var attempt = 0
            while true {
                var inner: QuireError?
                var transaction: VaultTransaction?
                do throws(FormatError) {
                    try file.commit(random: random, options: writeOptions, attestWith: signer) {
                        (pending: PendingCommit) throws(FormatError) in
                        // Index what other writers committed since we looked
                        // (or follow it with the cached view, noting what it
                        // changed for refresh(); when the view cannot follow,
                        // the index is read whole and refresh() compares
                        // every entry with the view as it was).
                        if self.index == nil, self.indexCache?.view != nil {
                            try? self.followWithCachedView()
                        } else {
                            self.absorb(pending.externalFrames)
                        }
                        let tx = VaultTransaction(vault: self, pending: pending)
                        transaction = tx
                        // A transaction kept past its closure writes nothing:
                        // this commit's lock and frames are gone by then.
                        defer { tx.isOpen = false }
                        do throws(QuireError) {
                            try build(tx)
                        } catch {
                            inner = error
                            throw FormatError.notWritable(reason: "the commit was abandoned")
                        }
                    }
                    transaction?.finishIndexing()
                    if let newest = transaction?.newestClock, newest > readClock { readClock = newest }
                    advanceCachedView()
                    transaction?.reportLocalChanges()
                    transaction?.settleRefreshBaseline()
                    committed = true
                    return
                } catch {
                    if let inner { throw inner }
                    if case .vaultChanged = error, attempt < 1000, attempt == 0 || ProcessStats.monotonicNanoseconds() < deadline {
                        attempt += 1
                        try reload()
                        // The keys may have changed under us: this device may
                        // have been removed, or keyrings may need joining.
                        try writableKey(for: change)
                        try joinConcurrentKeyrings()
                        continue
                    }
                    throw QuireError.format(error)
                }
            }
        }
    }

    /// ``commit(_:)``, for the facade's single-record writes.
    ///
    /// - Throws: ``QuireError``.
    func commitTyped(_ build: (VaultTransaction) throws(QuireError) -> Void) throws(QuireError) {
        try commit(build)
    }

    /// Unlocks `file` and verifies its commits; when commit recovery
    /// repaired the last commit (which may hold a keyring), unlocks again.
    ///
    /// `cachedKeyringHeads`, for a `file` opened from the frame table of
    /// this device's index cache, are the keyring heads that cache was
    /// written under: when the keys unlocked now come from the same
    /// keyrings (and read every epoch, as a cache is written only then),
    /// the heads of the cached prefix's commits are not computed again
    /// (``VaultFile/trustCachedPrefixHeads(keys:)``, `Spec/index-cache.md §5`,
    /// "The chain"): the chain check costs the commits after the prefix,
    /// not one keyed hash per commit of the vault.
    static func unlock(
        _ file: VaultFile, with credential: Credential, cachedKeyringHeads: [KeyringID]? = nil
    ) throws(QuireError) -> UnlockedKeys {
        var unlocked: UnlockedKeys
        do { unlocked = try KeyringEvaluator.unlock(file, with: credential) } catch { throw .keys(error) }
        if let cachedKeyringHeads, unlocked.removedIn == nil, !unlocked.isBehind, unlocked.unreadableNewerEpoch == nil,
            let heads = (try? KeyState(unlocked, vaultID: file.vaultID))?.heads.map(\.id), heads.sorted() == cachedKeyringHeads.sorted()
        {
            file.trustCachedPrefixHeads(keys: unlocked.keys)
        }
        // A damaged last commit that starts a new epoch is made under the
        // new key (Spec/format.md §9.2): recovery also tries the keys of
        // the tail's keyrings, read as if they were committed (§10.3).
        if file.recoverableTailHoldsKeyring {
            // The tail is not committed: a keyring in it that stops this
            // look (a hostile one) only leaves no more keys to try. Running
            // out of guarded memory says nothing about the file: the open
            // fails as itself rather than leave the last commit torn
            // (Spec/format.md §5.1).
            do {
                file.recoveryKeys = try KeyringEvaluator.unlock(file, with: credential, includingTail: true).keys.all
            } catch {
                if error.isOutOfGuardedMemory { throw .keys(error) }
                file.recoveryKeys = []
            }
        }
        do throws(FormatError) { try file.deriveCommitSubkeys(of: unlocked.keys) } catch { throw .format(error) }
        file.verifyCommits(with: unlocked)
        if file.recoveredCommit {
            do { unlocked = try KeyringEvaluator.unlock(file, with: credential) } catch { throw .keys(error) }
            do throws(FormatError) { try file.deriveCommitSubkeys(of: unlocked.keys) } catch { throw .format(error) }
            file.verifyCommits(with: unlocked)
        }
        // An unknown critical kind inside a commit a member attested stops
        // records, not keys (Spec/format.md §4.3, tenth review R10-3): the
        // vault opens, so that a member can remove the author; reading
        // records (``loadIndex()``) and writing them (``commit(_:)``) throw.
        return unlocked
    }

    /// Opens the path again (the file may have been replaced by a sync tool,
    /// or had keys changed by another writer) and unlocks it with the same
    /// credential. Call it to see what other processes wrote.
    ///
    /// On a handle with device memory (opened with a key store, or after
    /// ``remember(in:)``), a file at the path that fails the rollback test
    /// of an open (`Spec/keys.md §7`) against what the handle had read
    /// (an older copy a sync tool renamed over the path), or that holds
    /// no revision of some entry the handle had read while all its
    /// records read (another history, whose newest clock
    /// passes §7's clock test; a rewrite keeps every entry's heads and
    /// tombstones), is read and said as an open says a rollback:
    /// ``keyWarnings`` gets `rollback_suspected`, writes are refused with
    /// `.needsMerge` (`rolled_back`), and ``refresh()`` throws that error,
    /// until ``acceptRollback()`` or a file that passes both tests. A fresh
    /// open in a new process sees such another history through device
    /// memory's newest entries (`Spec/keys.md §7`, test 3).
    ///
    /// - Throws: ``QuireError``.
    @_spi(Format)
    public func reload() throws(QuireError) {
        try lock.withLock { () throws(QuireError) -> Void in
            let seen = seenMemory()
            let entries = seenEntries()
            try reloadUnjudged()
            judgeReplacement(seen: seen, entries: entries)
        }
    }

    /// ``reload()`` without the rollback test: for this handle's own
    /// rewrites (a compaction, a fold, a key change) and for the open's
    /// own test, which judges the file itself. Under the lock.
    func reloadUnjudged() throws(QuireError) {
        let reopened: VaultFile
        do throws(FormatError) { reopened = try VaultFile(path: file.path, writable: file.isWritable) } catch { throw .format(error) }
        let keys = try Self.unlock(reopened, with: credential)
        noteReloading(onto: reopened)
        currentKeys = keys
        currentFile = reopened
        index = nil
        dropCachedView()
    }

    /// The payload hashes the loaded entry index computed (0 when it is not
    /// loaded), for tests: a revision this handle wrote is hashed only when
    /// a second frame of its id appears.
    @_spi(Testing) public var payloadHashCount: Int {
        lock.withLock { index?.payloadHashes ?? 0 }
    }

    /// True when queries read through the index cache's view (the entry
    /// index not loaded).
    @_spi(Testing) public var readsThroughCachedView: Bool {
        lock.withLock { index == nil && indexCache?.view != nil }
    }

    /// The journal profile (the one with the greatest clock), if any.
    ///
    /// - Throws: ``QuireError``.
    @_spi(Format)
    public func profile() throws(QuireError) -> Profile? {
        return try lock.withLock { () throws(QuireError) -> Profile? in
            try loadIndex().profile
        }
    }
}

/// The records of one commit being built through ``Vault/commit(_:)``.
///
/// Valid only inside the closure it is given to: once that returns or
/// throws, every write through it throws `.programmerError`
/// (`transaction_ended`) and writes nothing.
public final class VaultTransaction {
    unowned let vault: Vault
    let pending: PendingCommit
    var newRevisions: [(Int, EntryRevision)] = []
    /// The encoded payload of each of ``newRevisions``, for the index's
    /// payload hash: encoding a revision again cost as much as sealing it.
    var newPayloads: [[UInt8]] = []
    var newBlobs: [(manifest: BlobManifest, frame: Int)] = []
    /// The vault's blobs before this commit, read at the first attachment
    /// reference that names none of ``newBlobs``.
    var vaultBlobs: EntryIndex?
    /// True for an importer that keeps, on purpose, a reference whose file
    /// the export lacks (reported as skipped, `Spec/import.md`): the
    /// revision is written though its content may not be in the vault.
    package var keepsUnstoredReferences = false
    var newProfile: Profile?
    /// The greatest clock among the revisions and the profile appended.
    var newestClock: HybridLogicalClock? {
        (newRevisions.map(\.1.clock) + (newProfile.map { [$0.clock] } ?? [])).max()
    }
    /// True when an observer wants this handle's own commits
    /// (``VaultObserver``): each entry's state before this commit is kept.
    let reportsLocalChanges: Bool
    /// The state before this commit of each entry it touches (nil inner:
    /// unknown to the vault), when ``reportsLocalChanges``.
    var statesBefore: [EntryID: EntryChange.State?] = [:]

    /// False once the closure it was given to returned or threw: a
    /// transaction kept past its commit refuses every write.
    var isOpen = true

    init(vault: Vault, pending: PendingCommit) {
        self.vault = vault
        self.pending = pending
        reportsLocalChanges = vault.concurrency.hasListeners
    }

    /// Throws `transaction_ended` when the commit has ended.
    func checkOpen() throws(QuireError) {
        guard isOpen else { throw QuireError(.transactionEnded) }
    }

    /// Appends an entry revision.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) (``FormatError/recordTooLarge(byteCount:limit:)``, I/O).
    @_spi(Format) public func append(_ revision: EntryRevision) throws(QuireError) {
        try checkOpen()
        try checkAttachmentsStored(revision)
        if reportsLocalChanges, statesBefore.index(forKey: revision.entryID) == nil {
            // From the cached view when queries answer from it: no full
            // read under the file lock.
            if let view = vault.indexCache?.view, vault.index == nil, case let state = view.state(of: revision.entryID),
                !vault.dropCachedViewIfFailed(view)
            {
                statesBefore[revision.entryID] = .some(state)
            } else {
                statesBefore[revision.entryID] = .some(EntryChange.State(revision.entryID, in: try vault.loadIndex()))
            }
        }
        do {
            let payload = revision.encoded()
            let location = try pending.appendSealed(kind: .entryRevision, payload: payload)
            newRevisions.append((location.index, revision))
            newPayloads.append(payload)
            vault.observe(revision.clock, committed: false)
        } catch {
            throw .format(error)
        }
    }

    /// Throws `attachment_not_stored` when an attachment reference of
    /// `revision` names a blob that is neither stored in this commit nor
    /// in the vault: a `StoredBlob` of an abandoned commit, or of another
    /// vault, would save an entry whose photo never reads. Blobs stored in
    /// this commit are checked against the commit's own list; only another
    /// reference reads the vault's manifests, once per commit.
    ///
    /// A reference the revisions it replaces already held is not refused:
    /// content lost before (a compaction that dropped a damaged attachment,
    /// a vault written by an older version) does not stop an edit of the
    /// rest of the entry; ``Vault/verify()`` reports it. Nor is one an
    /// importer writes with ``keepsUnstoredReferences``.
    func checkAttachmentsStored(_ revision: EntryRevision) throws(QuireError) {
        guard !keepsUnstoredReferences else { return }
        for reference in revision.body.attachments where !newBlobs.contains(where: { $0.manifest.blob == reference.blob }) {
            if vaultBlobs == nil { vaultBlobs = try blobIndex() }
            if vaultBlobs?.resolve(reference.blob) != nil { continue }
            guard try replacedRevisionsHold(reference.blob, revision) else { throw QuireError(.attachmentNotStored(reference.blob)) }
        }
    }

    /// True when a revision `revision` replaces (names as a parent) has an
    /// attachment reference to `blob`.
    private func replacedRevisionsHold(_ blob: BlobID, _ revision: EntryRevision) throws(QuireError) -> Bool {
        guard !revision.parents.isEmpty else { return false }
        let index = try vault.loadIndex()
        for s in index.revisions[revision.entryID] ?? [] where revision.parents.contains(s.revisionID) {
            if try vault.revision(of: s).body.attachments.contains(where: { $0.blob == blob }) { return true }
        }
        return false
    }

    /// The vault's blobs as this commit found them: the entry index's, or,
    /// while queries answer from the index cache, the manifests alone
    /// (decrypting those frames, not every record).
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…).
    func blobIndex() throws(QuireError) -> EntryIndex {
        if vault.index == nil, vault.indexCache?.view != nil {
            var manifests = EntryIndex()
            Vault.absorb(file: vault.file, into: &manifests, frames: nil, retain: false, kinds: [.blobManifest])
            return manifests
        }
        return try vault.loadIndex()
    }

    /// Appends a new entry with `body`: a fresh entry id, no parents, the
    /// vault's next hybrid logical clock value and this credential's author
    /// id (`Spec/records.md §3`). Returns the revision.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…; `.programmerError`
    ///   (`record_too_large`) for a body over the record size limit).
    @discardableResult
    public func add(_ body: EntryBody) throws(QuireError) -> EntryRevision {
        try checkOpen()
        let revision = EntryRevision(
            entryID: EntryID(using: vault.random), revisionID: RevisionID(using: vault.random), parents: [],
            clock: vault.nextClock(), device: vault.author, body: body)
        try append(revision)
        return revision
    }

    /// Appends a revision replacing entry `id`'s content, made from the
    /// revisions `base`, in this commit: with attachments stored in the
    /// same commit, an entry gains photos atomically.
    ///
    /// `base` is the heads the caller read before changing the entry (an
    /// editor's starting point), usually
    /// `[snapshot.revision.revisionID] + snapshot.conflictingHeads`: the
    /// new revision names exactly them as parents, which also resolves a
    /// conflict among them. A revision written meanwhile (another edit, a
    /// synced copy renamed over the vault) is not among them, so it stays a
    /// head and the two become a conflict that is kept and shown
    /// (`Spec/records.md §3`), never silently superseded.
    ///
    /// Sets the body's `modified` to now.
    ///
    /// - Throws: `.notFound` (`entry_not_found`), `.notFound` (`entry_deleted`)
    ///   when the revisions replaced are all tombstones, a container error (`.damaged`, `.unavailable`, `.outOfSpace`…).
    @discardableResult
    public func edit(_ id: EntryID, body: EntryBody, replacing base: [RevisionID]) throws(QuireError) -> EntryRevision {
        try change(id, body: body, deleted: false, base: base)
    }

    /// Deletes entry `id` in this commit: a tombstone revision whose
    /// parents are the entry's current heads (`Spec/records.md §3`), beside
    /// the commit's other records (an entry deleted and another added
    /// atomically, several deleted at once).
    ///
    /// - Throws: `.notFound` (`entry_not_found`) when the vault holds no
    ///   revision of `id`; a container error (`.damaged`, `.unavailable`, `.outOfSpace`…).
    @discardableResult
    public func delete(_ id: EntryID) throws(QuireError) -> EntryRevision {
        try change(id, body: EntryBody(), deleted: true, base: nil)
    }

    /// Brings deleted entry `id` back in this commit as it was before the
    /// deletion (``DeletedEntry/body``: the last revision the deletion
    /// replaced; with versions from two devices, the one the vault showed
    /// first): a revision replacing its tombstones, with `modified` set to
    /// now. A version another device wrote apart from the deletion stays,
    /// as a conflict. On an entry that is not deleted (restored meanwhile)
    /// it writes nothing and returns the entry's winning revision.
    ///
    /// - Throws: `.notFound` (`entry_not_found`); `.notFound`
    ///   (`not_restorable`) when the vault no longer holds a revision from
    ///   before the deletion (compacted away): nothing is written, never an
    ///   empty entry; a container error (`.damaged`, `.unavailable`, `.outOfSpace`…).
    @discardableResult
    public func restore(_ id: EntryID) throws(QuireError) -> EntryRevision {
        try checkOpen()
        let index = try vault.loadIndex()
        let heads = index.heads(of: id)
        guard let winner = heads.first else { throw .entryNotFound(id) }
        guard winner.isDeleted else { return try vault.revision(of: winner) }
        guard let last = try vault.lastLiveRevision(of: id, deletedBy: winner, index: index) else {
            throw QuireError(.entryNotRestorable(id))
        }
        let tombstones = heads.filter(\.isDeleted).map(\.revisionID)
        return try change(id, body: last.body, deleted: false, base: tombstones, restoring: true)
    }

    /// Brings deleted entry `id` back with `body` in this commit (an app
    /// that lets the user change it first; ``restore(_:)`` brings back
    /// ``DeletedEntry/body`` as it is): a revision
    /// replacing the tombstone (or the revisions `base`, as in
    /// ``edit(_:body:replacing:)``; nil: the current heads), with
    /// `modified` set to now. On an entry that is not deleted it is an edit.
    ///
    /// - Throws: `.notFound` (`entry_not_found`); a container error (`.damaged`, `.unavailable`, `.outOfSpace`…).
    @discardableResult
    public func restore(_ id: EntryID, body: EntryBody, replacing base: [RevisionID]? = nil) throws(QuireError) -> EntryRevision {
        try change(id, body: body, deleted: false, base: base, restoring: true)
    }

    /// Appends a revision of `id`. Its parents are `base` when given (those
    /// of them the entry holds), else the current heads, read inside the
    /// commit, under the lock, after other writers' commits are indexed.
    /// A revision that is not a tombstone gets `modified` set to now; it may
    /// replace only tombstones when `restoring`.
    func change(_ id: EntryID, body: EntryBody, deleted: Bool, base: [RevisionID]?, restoring: Bool = false) throws(QuireError)
        -> EntryRevision
    {
        try checkOpen()
        if let parents = try parentsFromCachedView(id, deleted: deleted, base: base, restoring: restoring) {
            return try appendChange(id, body: body, deleted: deleted, parents: parents)
        }
        let index = try vault.loadIndex()
        let heads = index.heads(of: id)
        guard !heads.isEmpty else { throw .entryNotFound(id) }
        var parents = heads.map(\.revisionID)
        if let base {
            let known = Set((index.revisions[id] ?? []).map(\.revisionID))
            parents = Array(Set(base.filter { known.contains($0) }))
            guard !parents.isEmpty else { throw .entryNotFound(id) }
        }
        // An edit of what the caller sees as deleted would silently bring it
        // back: that takes an explicit restore. (An edit from a live base
        // racing a deletion still becomes a conflict, kept and shown.)
        if !deleted, !restoring {
            let replaced = (index.revisions[id] ?? []).filter { parents.contains($0.revisionID) }
            if !replaced.isEmpty, replaced.allSatisfy(\.isDeleted) { throw .entryDeleted(id) }
        }
        return try appendChange(id, body: body, deleted: deleted, parents: parents)
    }

    /// The parents of a change of `id` (as ``change(_:body:deleted:base:restoring:)``
    /// chooses them) from the cached view, without reading every revision:
    /// when the entry has one head and `base` is nil or that head. Nil when
    /// the view cannot say (no view, a conflict, an older base): the entry
    /// index decides.
    ///
    /// - Throws: `.notFound` (`entry_not_found`), `.notFound` (`entry_deleted`).
    private func parentsFromCachedView(_ id: EntryID, deleted: Bool, base: [RevisionID]?, restoring: Bool) throws(QuireError)
        -> [RevisionID]?
    {
        guard vault.index == nil, let view = vault.indexCache?.view else { return nil }
        let found = view.state(of: id)
        if vault.dropCachedViewIfFailed(view) { return nil }
        guard let state = found else { throw .entryNotFound(id) }
        guard state.conflictingHeads.isEmpty, base.map({ Set($0) == [state.winner] }) ?? true else { return nil }
        if !deleted, !restoring, state.isDeleted { throw .entryDeleted(id) }
        return [state.winner]
    }

    /// Appends a revision of `id` with `parents` (a tombstone when
    /// `deleted`), `modified` set to now unless deleted.
    private func appendChange(_ id: EntryID, body: EntryBody, deleted: Bool, parents: [RevisionID]) throws(QuireError) -> EntryRevision {
        var body = body
        if !deleted { body.modifiedMilliseconds = ProcessStats.wallClockMilliseconds() }
        let revision = EntryRevision(
            entryID: id, revisionID: RevisionID(using: vault.random), parents: parents.sorted(), clock: vault.nextClock(),
            device: vault.author, isDeleted: deleted, body: body)
        try append(revision)
        return revision
    }

    /// Streams an attachment from `source` (`Spec/format.md §7`); content the
    /// vault already holds is not stored again.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…).
    public func storeAttachment(from source: any ByteSource, mediaType: String) throws(QuireError) -> StoredBlob {
        try checkOpen()
        // Deduplicate only against content a member stored under the write
        // blob key: a manifest an epoch-key holder planted for a predicted
        // blob id (or an alias) must not stand in for the upload
        // (Spec/format.md §7.3).
        // While queries answer from the index cache, only the manifests
        // are read (decrypting those frames alone), not every record.
        if vaultBlobs == nil { vaultBlobs = try? blobIndex() }
        let index = vaultBlobs
        let writeBlobKey = pending.key.blobKey
        let fresh = Set(newBlobs.map(\.manifest.blob))
        do {
            let stored = try pending.appendBlob(from: source, mediaType: mediaType) {
                fresh.contains($0) || (index?.holdsAttested($0, blobKey: writeBlobKey) ?? false)
            }
            // The manifest is the last frame appended.
            if case .stored(let m) = stored { newBlobs.append((m, vault.file.structure.frames.count + pending.frameCount - 1)) }
            return stored
        } catch {
            throw .format(error)
        }
    }

    /// Stores `bytes` (a photo taken in the app, say) as an attachment
    /// (`Spec/format.md §7`); content the vault already holds is not stored
    /// again. Pass the result to `AttachmentReference(_:mediaType:fileName:)`.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…;
    ///   `.programmerError` (`size_limit_exceeded`) over the attachment size limit).
    public func storeAttachment(_ bytes: [UInt8], mediaType: String) throws(QuireError) -> StoredBlob {
        try storeAttachment(from: MemoryByteSource(bytes), mediaType: mediaType)
    }

    /// Streams the file at `path` in as an attachment. For the CLI and the
    /// tools, which take paths: an app passes a file URL,
    /// ``storeAttachment(contentsOf:mediaType:)``.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…; `.unavailable` (`io`) when the
    ///   file cannot be read, `.busy` (`source_changed`) when it changed while being read).
    @_spi(Format)
    public func storeAttachment(fromFile path: String, mediaType: String) throws(QuireError) -> StoredBlob {
        let source: FileByteSource
        do { source = try FileByteSource(path: path) } catch { throw .format(error) }
        return try storeAttachment(from: source, mediaType: mediaType)
    }

    /// Appends a new profile.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…).
    @_spi(Format) public func setProfile(name: String, about: String = "", settings: CBORMap = CBORMap()) throws(QuireError) {
        try checkOpen()
        let profile = Profile(name: name, about: about, settings: settings, clock: vault.nextClock(), device: vault.author)
        do { try pending.appendSealed(kind: .profile, payload: profile.encoded()) } catch { throw .format(error) }
        // Indexed when the commit lands (finishIndexing), not now: an
        // abandoned commit must leave no trace, and the index may be loaded
        // from the file later in this commit.
        newProfile = profile
    }

    func finishIndexing() {
        // The commit is attested by this writer (a member: writes are
        // refused otherwise), so its revisions retire what they name (merge.md §5).
        let attestor = vault.signer.map { Array($0.publicKey) }
        // Device memory's newest entries count attested revisions only
        // (Spec/keys.md §7), as the index's greatest clock does.
        if attestor != nil, !newRevisions.isEmpty {
            vault.committedNewest = VaultMemory.newestEntries(
                vault.committedNewest + newRevisions.map { VaultMemory.NewestEntry(entry: $0.1.entryID, clock: $0.1.clock.rawValue) })
        }
        guard vault.index != nil else { return }
        for ((frame, rev), payload) in zip(newRevisions, newPayloads) {
            // A fresh revision id: no other frame carries it, so its payload
            // hash waits until one does (merge.md §5).
            vault.index!.insert(
                rev, frame: frame, payload: payload, attestedBy: attestor, retain: vault.retainsEntryBodies, ownPayload: true)
        }
        for (m, frame) in newBlobs {
            vault.index!.insert(m, frame: frame, blobKey: pending.key.blobKey, standing: 2)
        }
        let standing = attestor != nil ? 2 : 1
        if let newProfile,
            Profile.replaces(newProfile, standing: standing, current: vault.index!.profile, standing: vault.index!.profileStanding)
        {
            vault.index!.profile = newProfile
            vault.index!.profileStanding = standing
        }
    }

    /// When refresh() will compare every entry with a baseline (the
    /// cached view could not follow other writers' frames), records this
    /// commit's entries there as they stand now: refresh() does not report
    /// the handle's own writes.
    func settleRefreshBaseline() {
        guard vault.refreshLog.baseline != nil else { return }
        let view = vault.index == nil ? vault.indexCache?.view : nil
        for (_, revision) in newRevisions {
            let id = revision.entryID
            vault.refreshLog.baseline![id] = view.map { $0.state(of: id) } ?? vault.index.flatMap { EntryChange.State(id, in: $0) }
        }
    }

    /// Tells the handle's observers what this commit changed, once it
    /// landed and was indexed (``VaultObserver`` reports local writes too;
    /// ``Vault/refresh()`` does not report them again).
    func reportLocalChanges() {
        guard reportsLocalChanges else { return }
        // After the commit (outside the file lock): the cached view, when
        // it followed the commit, or the entry index.
        let view = vault.index == nil ? vault.indexCache?.view : nil
        let index = view == nil ? try? vault.loadIndex() : nil
        guard view != nil || index != nil else { return }
        var changes: [EntryChange] = []
        for (id, before) in statesBefore {
            let after = view.map { $0.state(of: id) } ?? index.flatMap { EntryChange.State(id, in: $0) }
            if before != after { changes.append(EntryChange(id: id, before: before, after: after)) }
        }
        vault.concurrency.tell(VaultChangeSet(entries: changes, profileChanged: newProfile != nil), origin: .thisHandle)
    }
}
