import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import Synchronization

/// Reading entries for the commands that show them.
enum Reading {
    /// Opens the vault read-only and returns its live entries, warning on
    /// stderr about records they leave out (``warnAboutUnreadRecords(_:entries:path:out:)``).
    static func entries(_ path: String, _ unlock: UnlockOptions, out: Output) throws(CLIFailure) -> (OpenedVault, [EntrySnapshot]) {
        let opened = try Unlock.open(path, unlock, out: out, writable: false)
        let entries: [EntrySnapshot]
        do { entries = try opened.vault.entries() } catch { throw .vault(error, path: path) }
        warnAboutUnreadRecords(opened.vault, entries: entries, path: path, out: out)
        return (opened, entries)
    }

    /// Opens the vault read-only and returns the live entry `prefix` names,
    /// with the warnings ``entries(_:_:out:)`` gives. When the library
    /// answers from this device's index cache, only that entry's record is
    /// read (every commit then verified, so the warnings are those of a full
    /// read: `Spec/index-cache.md §5`); otherwise every entry is.
    static func entry(
        _ path: String, _ unlock: UnlockOptions, _ prefix: EntryIDPrefix, out: Output
    ) throws(CLIFailure) -> (OpenedVault, EntrySnapshot) {
        let opened = try Unlock.open(path, unlock, out: out, writable: false)
        let vault = opened.vault
        if let ids = vault.cachedLiveEntryIDs(from: prefix.lowest, through: prefix.highest, where: prefix.matches) {
            let id: EntryID
            do { id = try EntryFormat.resolve(prefix, matching: ids) } catch {
                warnAboutUnreadRecords(vault, entries: [], path: path, out: out)
                throw error
            }
            if let e = vault.cachedSnapshot(of: id) {
                warnAboutUnreadRecords(vault, entries: [], path: path, out: out)
                return (opened, e)
            }
            // The record does not read as the cache says (damaged since the
            // cache was written): read everything, and say what the full
            // read could not, as a read without the cache does.
            let entries: [EntrySnapshot]
            do { entries = try vault.entries() } catch { throw .vault(error, path: path) }
            warnAboutUnreadRecords(vault, entries: entries, path: path, out: out)
            return (opened, try EntryFormat.resolve(prefix, in: entries))
        }
        let entries: [EntrySnapshot]
        do { entries = try vault.entries() } catch { throw .vault(error, path: path) }
        warnAboutUnreadRecords(vault, entries: entries, path: path, out: out)
        return (opened, try EntryFormat.resolve(prefix, in: entries))
    }

    /// `quire: warning:` lines for records the entries shown leave out:
    /// newer records this key cannot read (a removed device), every record
    /// that could not be read (damaged, altered, or cut out:
    /// ``Vault/unreadRecords()``, counted by the library in the pass that
    /// read the entries), entries shown unverified.
    static func warnAboutUnreadRecords(_ vault: Vault, entries: [EntrySnapshot], path: String, out: Output) {
        let unread = records(vault)
        if let newer = unread.newerEpoch {
            let hidden = unread.hiddenEntryRevisions
            out.warning(
                "newer records exist that this key cannot read\(hidden == 0 ? "" : " (" + plural(hidden, "entry revision") + ")"): "
                    + "\(vault.unlocked.behindReason ?? "this key was removed from the vault (epoch \(newer))"), so what is shown stops there "
                    + "and writing with this key is refused. "
                    + "Open the vault on a device that can read them, or with --recovery-key-file FILE")
        }
        // Records of a newer epoch are said above, for a removed device.
        // Every other record that could not be read is damage, including
        // one under a key only a removal's cut keyrings held: a record's
        // key id is an unauthenticated label, so it cannot show what cut it
        // (review 33 F1; verify says the cut keyrings themselves).
        let damaged = unread.damaged.filter { $0.code != "attestation_failed" }
        if !damaged.isEmpty {
            out.warning("\(summary(damaged, path: path)); what is shown leaves them out. Run 'quire verify \(path)'")
        }
        let untrusted = unread.untrusted
        if !untrusted.isEmpty {
            out.warning(
                "\(summary(untrusted, path: path, what: "trusted")): the attestation of the commit holding them is damaged, "
                    + "so they are shown as not attested. Run 'quire verify \(path)'")
        }
        let unverified = entries.reduce(0) { $0 + ($1.isVerified ? 0 : 1) }
        if unverified > 0 {
            out.warning("\(plural(unverified, "entry", "entries")) shown could not be verified; run 'quire verify \(path)'")
        }
    }

    /// The vault's unread records (none when its index cannot be read: the
    /// read that failed says why), with the attachments this command shows
    /// or writes whose bytes cannot be read (``damagedAttachments(_:)``).
    static func records(_ vault: Vault) -> UnreadRecords {
        let unread = (try? vault.unreadRecords()) ?? UnreadRecords()
        return unread.adding(Array(damagedAttachments(vault).values))
    }

    /// Adds attachments whose bytes this command shows or writes (show,
    /// attachments, extract, export) to those ``damagedAttachments(_:)``
    /// reads through. A listing or a search adds none: it reads no
    /// attachment bytes, so a photo library costs nothing to list.
    static func include(_ refs: [AttachmentReference]) {
        attachmentScope.withLock { scope in for r in refs where scope[r.blob] == nil { scope[r.blob] = r } }
    }

    /// Of the attachments this command included (``include(_:)``), those
    /// whose bytes cannot be read (a chunk damaged or cut out), each with the
    /// record to report: every chunk is opened, as 'quire verify' does, once
    /// per attachment. An attachment the vault does not hold is not damage
    /// (it is shown as missing).
    static func damagedAttachments(_ vault: Vault) -> [BlobID: UnreadRecords.Record] {
        let scope = attachmentScope.withLock { $0 }
        let checked = checkedAttachments.withLock { $0 }
        attachmentsVisited.add(scope.count, ordering: .relaxed)
        var damaged: [BlobID: UnreadRecords.Record] = [:]
        // Made only when an attachment is read here (most calls read none).
        var scratch: UnsafeMutableRawBufferPointer?
        defer {
            if let scratch {
                scratch.initializeMemory(as: UInt8.self, repeating: 0)
                scratch.deallocate()
            }
        }
        for (blob, ref) in scope {
            if let known = checked[blob] {
                if let record = known { damaged[blob] = record }
                continue
            }
            let buffer = scratch ?? UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
            scratch = buffer
            let failure: (code: String, location: FrameLocation?, message: String)?
            do {
                let reader = try vault.openAttachment(blob)
                do {
                    while try reader.readChecked(into: buffer) > 0 {}
                    failure = nil
                } catch {
                    failure = (error.code, error.location, error.description)
                }
            } catch {
                if case .attachmentNotFound = error.detail {
                    failure = nil
                } else if case .format(let f) = error.detail {
                    failure = (f.code, f.location, f.description)
                } else {
                    failure = (error.code, nil, error.description)
                }
            }
            if let record = noteRead(ref, failure: failure) { damaged[blob] = record }
        }
        return damaged
    }

    /// Records that attachment `ref` was read through, by this command
    /// itself (extract) or by ``damagedAttachments(_:)``: `failure` is the
    /// error that stopped the read, nil when every chunk opened and the blob
    /// id checked. ``damagedAttachments(_:)`` then reports it without reading
    /// it again. Returns the record to report, nil when it read.
    @discardableResult
    static func noteRead(_ ref: AttachmentReference, failure: (code: String, location: FrameLocation?, message: String)?)
        -> UnreadRecords.Record?
    {
        let record = failure.map {
            UnreadRecords.Record(
                code: $0.code, offset: $0.location?.offset, frameIndex: $0.location?.index,
                message: "attachment \(EntryFormat.attachmentID(ref)) cannot be read: \($0.message)")
        }
        checkedAttachments.withLock { $0[ref.blob] = .some(record) }
        return record
    }

    /// The attachments this command reads through.
    private static let attachmentScope = Mutex<[BlobID: AttachmentReference]>([:])
    /// Each attachment already read through: the record to report, or nil when it reads whole.
    private static let checkedAttachments = Mutex<[BlobID: UnreadRecords.Record?]>([:])
    /// How many attachments ``damagedAttachments(_:)`` has looked at, in all
    /// its calls: a test's count that the work grows with the references, not
    /// with their square.
    static let attachmentsVisited = Atomic<Int>(0)

    /// `2 records in PATH could not be read (frame 8 at byte 2110: authentication_failed; …)`
    /// (`what`: "read", or "trusted").
    static func summary(_ records: [UnreadRecords.Record], path: String, what: String = "read") -> String {
        let places = records.prefix(5).map { r -> String in
            let place = [r.frameIndex.map { "frame \($0)" }, r.offset.map { "byte \($0)" }].compactMap { $0 }.joined(separator: " at ")
            return "\(place.isEmpty ? "the file" : place): \(r.code)"
        }
        let more = records.count > 5 ? "; and \(records.count - 5) more" : ""
        return "\(plural(records.count, "record")) in \(path) could not be \(what) (\(places.joined(separator: "; "))\(more))"
    }

    /// Says on stderr that nothing matched, so an empty result is not silence.
    /// `vault`, when given, tells a key that is behind (removed): it is
    /// not told to write one. `total`, the number of live entries, is
    /// evaluated only when the note depends on it (nothing filtered, no
    /// `what`): a search counts it only then.
    static func sayNothingMatched(
        _ count: Int, total: @autoclosure () -> Int, filtered: Bool, what: String? = nil, vault: Vault? = nil, out: Output
    ) {
        guard count == 0, !out.json else { return }
        let empty = !filtered && what == nil && total() == 0
        if empty, vault?.unlocked.unreadableNewerEpoch != nil {
            out.note("no entries this key can read")
        } else if empty {
            out.note("no entries yet: write one with 'quire add'")
        } else if let what {
            out.note("no entries match \(what)")
        } else {
            out.note("no entries match the filters")
        }
    }
}

/// The records the entries shown leave out, in every command that reads
/// entries: `{"count", "records": [{"code", "offset", "frame", "message"}]}`
/// (`Spec/cli-json.md §3.2`).
struct UnreadRecordsJSON: PrettyJSONWritable {
    struct Record: Encodable {
        let code: String
        @OrNull var offset: UInt64?
        @OrNull var frame: Int?
        let message: String
    }

    var count: Int
    var records: [Record]

    init(_ unread: UnreadRecords) {
        count = unread.count
        records = unread.records.map { Record(code: $0.code, offset: $0.offset, frame: $0.frameIndex, message: $0.message) }
    }

    /// ``init(_:)``, and first, when this device saw records committed that
    /// `vault` no longer holds (`rollback_suspected`, `Spec/keys.md §7`),
    /// one record saying so (no offset, no frame: what was cut off is not
    /// known record by record), so JSON alone tells that records are
    /// missing (`Spec/cli-json.md §3`; trial 25 F5).
    init(_ unread: UnreadRecords, vault: Vault) {
        self.init(unread)
        if let rollback = vault.keyWarnings.first(where: { $0.code == "rollback_suspected" }) {
            records.insert(Record(code: rollback.code, offset: nil, frame: nil, message: rollback.description), at: 0)
            count += 1
        }
    }

    func write(to json: inout PrettyJSON) {
        json.object { j in
            j.key("count")
            j.number(count)
            j.key("records")
            j.array(records) { j, r in
                j.object { j in
                    j.key("code")
                    j.string(r.code)
                    j.key("frame")
                    j.number(orNull: r.frame)
                    j.key("message")
                    j.string(r.message)
                    j.key("offset")
                    j.number(orNull: r.offset)
                }
            }
        }
    }

    /// For the JSON outlines of `help`: one record.
    static var example: UnreadRecordsJSON {
        var e = UnreadRecordsJSON(UnreadRecords())
        e.records = [Record(code: "", offset: 0, frame: 0, message: "")]
        return e
    }
}
