import Foundation
import Quire
import QuireSystem

/// `--mood N`, checked.
func moodOption(_ c: Context) throws(CLIFailure) -> Int64? {
    guard let text = c.args.value("mood") else { return nil }
    guard let n = Int64(text), (1...5).contains(n) else { throw c.usage("--mood must be a whole number from 1 to 5, not '\(text)'") }
    return n
}

/// `quire add VAULT [TEXT | -]`.
func addCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    let mood = try moodOption(c)
    var created = ProcessStats.wallClockMilliseconds()
    if let d = c.args.value("date") { created = try DateArgument.require(d, option: "date", command: "add").milliseconds }
    for file in c.args.all("attach") where !FileSystem.isRegularFile(file) {
        if Paths.isFolder(file) {
            throw CLIFailure("cannot attach \(file): it is a folder, not a file", hint: "attach the files in it one by one: --attach FILE for each")
        }
        throw CLIFailure("cannot attach \(file): no such file", hint: "check the path given to --attach")
    }
    try Unlock.requireVault(path)
    let text = try EntryText.from(c, operand: 1)!
    guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || !c.args.all("attach").isEmpty else {
        throw CLIFailure(
            "the entry is empty; nothing was added", hint: "give the text as TEXT, '-' to read it from standard input, or no TEXT on a terminal to open the editor",
            code: "empty_entry")
    }
    let opened = try Unlock.open(path, c.args, out: c.out)
    let zone = TimeZone.current
    var body = EntryBody(
        created: created, timeZone: zone.identifier, utcOffsetSeconds: Int64(zone.secondsFromGMT(for: DateText.date(created))),
        text: text, tags: c.args.all("tag"), mood: mood, journal: c.args.value("journal") ?? "")
    var revision: EntryRevision?
    do {
        try opened.vault.commit { tx in
            for (i, file) in c.args.all("attach").enumerated() {
                let type = EntryFormat.mediaType(forFile: file)
                let stored = try tx.storeAttachment(fromFile: file, mediaType: type)
                body.attachments.append(AttachmentReference(
                    id: Array("\(i + 1)".utf8), blob: stored.blob, mediaType: type, fileName: (file as NSString).lastPathComponent))
            }
            revision = try tx.add(body)
        }
    } catch let e as VaultError {
        throw .vault(e, path: path)
    } catch {
        throw CLIFailure("\(error)")
    }
    let id = revision!.entryID
    c.out.line(id.description)
    c.out.emit(["id": id.description, "created": DateText.iso(created, zoneName: zone.identifier), "timeZone": zone.identifier, "attachments": body.attachments.count])
    return .success
}

/// Opens the vault read-only and returns its live entries.
///
/// Warns on stderr, from what opening the vault already learned (no extra
/// pass over the file), when records exist that this key cannot read (it
/// was removed) or that are damaged or unverified.
func readEntries(_ c: Context, path: String) throws(CLIFailure) -> (OpenedVault, [EntrySnapshot]) {
    let opened = try Unlock.open(path, c.args, out: c.out, writable: false)
    let entries: [EntrySnapshot]
    do { entries = try opened.vault.entries() } catch { throw .vault(error, path: path) }
    warnAboutUnreadRecords(opened.vault, entries: entries, path: path, out: c.out)
    return (opened, entries)
}

/// `quire: warning:` lines for records the entries shown leave out: newer
/// records this key cannot read (a removed or left-out key), damaged regions and
/// commits that did not verify, entries shown unverified.
func warnAboutUnreadRecords(_ vault: Vault, entries: [EntrySnapshot], path: String, out: Output) {
    let unlocked = vault.unlocked
    let s = vault.file.structure
    if let reason = unlocked.behindReason {
        let hidden = s.frames[0..<s.committedFrameCount].filter {
            $0.header.kind == .entryRevision && unlocked.keys.keys(for: $0.header.keyID).isEmpty
        }.count
        out.warning(
            "newer records exist that this key cannot read\(hidden == 0 ? "" : " (" + plural(hidden, "entry revision") + ")"): "
                + "\(reason), so what is shown stops there. "
                + "Open the vault on a device that can read them, or with --recovery-key-file FILE")
    }
    var damaged = s.damagedRegions.count
    for (g, status) in vault.file.commits.statuses.enumerated() where status == .mismatch || status == .tampered || { if case .stale = status { true } else { false } }() {
        damaged += s.groups[g].members.count
    }
    let unverified = entries.filter { !$0.isVerified }.count
    if damaged > 0 {
        out.warning("\(plural(damaged, "record")) in \(path) may be damaged or unreadable; run 'quire verify \(path)'")
    } else if unverified > 0 {
        out.warning("\(plural(unverified, "entry", "entries")) shown could not be verified; run 'quire verify \(path)'")
    }
}

func printEntryList(_ entries: [EntrySnapshot], _ c: Context) {
    for e in entries { c.out.line(EntryFormat.line(e, out: c.out)) }
    // The summaries are made only when they are printed.
    if c.out.json { c.out.emit(["count": entries.count, "entries": entries.map(EntryFormat.summary)]) }
}

/// `quire list VAULT`.
func listCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let (_, entries) = try readEntries(c, path: c.operand(0)!)
    printEntryList(try EntryFormat.filter(entries, c), c)
    return .success
}

/// `quire search VAULT QUERY`: case-insensitive, over text, tags and journal.
func searchCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let query = c.operand(1)!
    guard !query.isEmpty else { throw c.usage("the query is empty") }
    let (_, entries) = try readEntries(c, path: c.operand(0)!)
    let found = try EntryFormat.filter(entries, c).filter { e in
        e.body.text.range(of: query, options: [.caseInsensitive]) != nil
            || e.body.tags.contains { $0.range(of: query, options: [.caseInsensitive]) != nil }
            || e.body.journal.range(of: query, options: [.caseInsensitive]) != nil
    }
    printEntryList(found, c)
    return .success
}

/// `quire show VAULT ID`.
func showCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let (opened, entries) = try readEntries(c, path: c.operand(0)!)
    let e = try EntryFormat.resolve(c.operand(1)!, in: entries)
    let b = e.body
    c.out.line(c.out.colour("entry \(e.id)", "33"))
    c.out.line("date:     \(b.isAllDay ? DateText.localDay(b.created) + " (all day)" : DateText.local(b.created))\(b.timeZone.isEmpty ? "" : " (written in \(b.timeZone))")")
    if !b.tags.isEmpty { c.out.line("tags:     " + b.tags.joined(separator: ", ")) }
    if !b.journal.isEmpty { c.out.line("journal:  " + b.journal) }
    if let m = b.mood { c.out.line("mood:     \(m) of 5") }
    if b.isStarred { c.out.line("starred:  yes") }
    if let l = b.location {
        let place = [l.placeName, l.locality, l.region, l.country].filter { !$0.isEmpty }.joined(separator: ", ")
        if !place.isEmpty { c.out.line("place:    " + place) }
    }
    if let w = b.weather, !w.conditions.isEmpty || w.temperatureCelsius != nil {
        c.out.line("weather:  " + [w.conditions, w.temperatureCelsius.map { String(format: "%.0f °C", $0) } ?? ""].filter { !$0.isEmpty }.joined(separator: ", "))
    }
    for ref in b.attachments {
        let size = (try? opened.vault.attachment(ref.blob).byteCount).map(formatBytes) ?? "missing"
        c.out.line("attached: \(EntryFormat.short(ref.blob))  \(ref.mediaType)  \(size)\(ref.fileName.isEmpty ? "" : "  " + ref.fileName)")
    }
    if e.revisionCount > 1 { c.out.line("versions: \(e.revisionCount) (revisions kept until 'quire compact')") }
    if !e.conflictingHeads.isEmpty {
        c.out.line("conflict: \(plural(e.conflictingHeads.count, "other version")) kept; 'quire edit' resolves it")
    }
    if !e.isVerified { c.out.line("verified: no: the commit holding this revision did not verify; see 'quire verify'") }
    c.out.line()
    c.out.line(b.text)
    c.out.emit(EntryFormat.full(e, vault: opened.vault))
    return .success
}

/// `quire edit VAULT ID [TEXT | -]`.
func editCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    let mood = try moodOption(c)
    let date = try c.args.value("date").map { (d: String) throws(CLIFailure) in try DateArgument.require(d, option: "date", command: "edit").milliseconds }
    let changesFields = mood != nil || date != nil || c.args.values["tag"] != nil
    try Unlock.requireVault(path)
    let opened = try Unlock.open(path, c.args, out: c.out)
    let entries: [EntrySnapshot]
    do { entries = try opened.vault.entries() } catch { throw .vault(error, path: path) }
    let e = try EntryFormat.resolve(c.operand(1)!, in: entries)
    var body = e.body
    if let text = try EntryText.from(c, operand: 2, initial: body.text, optional: changesFields) { body.text = text }
    else if !changesFields { throw c.usage("nothing to change: give TEXT, '-', --tag, --date or --mood") }
    if let mood { body.mood = mood }
    if let date {
        body.created = date
        body.timeZone = TimeZone.current.identifier
        body.utcOffsetSeconds = Int64(TimeZone.current.secondsFromGMT(for: DateText.date(date)))
    }
    if c.args.values["tag"] != nil { body.tags = c.args.all("tag") }
    body.modified = ProcessStats.wallClockMilliseconds()
    guard body != e.body || !e.conflictingHeads.isEmpty else {
        c.out.line("unchanged: \(EntryFormat.short(e.id))")
        c.out.emit(["id": e.id.description, "revision": e.revision.revisionID.description, "changed": false])
        return .success
    }
    let revision: EntryRevision
    do { revision = try opened.vault.edit(e.id, body: body) } catch { throw .vault(error, path: path) }
    c.out.line("edited \(EntryFormat.short(e.id))")
    c.out.emit(["id": e.id.description, "revision": revision.revisionID.description, "changed": true])
    return .success
}

/// `quire rm VAULT ID`.
func removeCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    let opened = try Unlock.open(path, c.args, out: c.out)
    let entries: [EntrySnapshot]
    do { entries = try opened.vault.entries() } catch { throw .vault(error, path: path) }
    let e = try EntryFormat.resolve(c.operand(1)!, in: entries)
    do { try opened.vault.delete(e.id) } catch { throw .vault(error, path: path) }
    c.out.line("deleted \(EntryFormat.short(e.id)) (\(EntryFormat.title(e.body.text, limit: 40)))")
    c.out.emit(["id": e.id.description, "deleted": true])
    return .success
}

/// `quire attachments VAULT ID`.
func attachmentsCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let (opened, entries) = try readEntries(c, path: c.operand(0)!)
    let e = try EntryFormat.resolve(c.operand(1)!, in: entries)
    for ref in e.body.attachments {
        let size = (try? opened.vault.attachment(ref.blob).byteCount).map(formatBytes) ?? "missing"
        c.out.line("\(c.out.colour(EntryFormat.short(ref.blob), "33"))  \(ref.mediaType)  \(size)\(ref.fileName.isEmpty ? "" : "  " + ref.fileName)")
    }
    if e.body.attachments.isEmpty && !c.out.json { c.out.note("entry \(EntryFormat.short(e.id)) has no attachments") }
    c.out.emit(["entry": e.id.description, "attachments": e.body.attachments.map { EntryFormat.attachment($0, vault: opened.vault) }])
    return .success
}

/// `quire extract VAULT ATTACHMENT -o FILE`.
func extractCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    guard let output = c.args.value("output") else { throw c.usage("-o FILE is required: where to write the attachment") }
    if output != "-" && FileSystem.nameExists(output) {
        throw CLIFailure("\(output) already exists; nothing was written", hint: "choose another name or remove it first")
    }
    let (opened, entries) = try readEntries(c, path: path)
    let prefix = c.operand(1)!.lowercased()
    guard prefix.count >= 4, prefix.allSatisfy({ $0.isHexDigit }) else {
        throw CLIFailure("'\(prefix)' is not an attachment id", hint: "give 4 or more hex digits of an id 'quire attachments' shows", code: "usage", exit: .usage)
    }
    var refs: [BlobID: AttachmentReference] = [:]
    for e in entries { for r in e.body.attachments where r.blob.description.hasPrefix(prefix) { refs[r.blob] = r } }
    guard refs.count == 1, let (blob, ref) = refs.first else {
        if refs.isEmpty { throw CLIFailure("no attachment has an id starting with \(prefix)", hint: "see them with 'quire attachments VAULT ENTRY'", code: "blob_not_found") }
        throw CLIFailure("\(refs.count) attachments have ids starting with \(prefix)", hint: "give more hex digits", code: "ambiguous_id", exit: .usage)
    }
    let reader: BlobReader
    do { reader = try opened.vault.openAttachment(blob) } catch { throw .vault(error, path: path) }
    var written: UInt64 = 0
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    defer { wipe(&buffer) }
    if output == "-" {
        do throws(FormatError) {
            while true {
                let n = try readChunk(reader, into: &buffer)
                if n == 0 { break }
                writeStandardOutput(Data(buffer[0..<n]))
                written += UInt64(n)
            }
        } catch { throw .vault(.format(error), path: path) }
        return .success
    }
    let temp = output + ".quire-tmp-\(FileSystem.processID)"
    do {
        let file = try SystemFile(path: temp, mode: .createExclusive(permissions: 0o600))
        do {
            while true {
                let n = try readChunk(reader, into: &buffer)
                if n == 0 { break }
                try file.write(Array(buffer[0..<n]), at: written)
                written += UInt64(n)
            }
            try file.sync()
            try FileSystem.rename(temp, to: output)
        } catch {
            try? FileSystem.remove(temp)
            throw error
        }
    } catch let e as FormatError {
        throw .vault(.format(e), path: path)
    } catch {
        throw CLIFailure("cannot write \(output): \(error)")
    }
    c.out.line("wrote \(output) (\(formatBytes(written)), \(ref.mediaType))")
    c.out.emit(["id": blob.description, "path": output, "byteCount": Int(written), "mediaType": ref.mediaType])
    return .success
}

/// Reads the next piece of an attachment into `buffer`; 0 at the end.
func readChunk(_ reader: BlobReader, into buffer: inout [UInt8]) throws(FormatError) -> Int {
    var failure: FormatError?
    let n = buffer.withUnsafeMutableBytes { raw -> Int in
        do throws(FormatError) { return try reader.read(into: raw) } catch {
            failure = error
            return 0
        }
    }
    if let failure { throw failure }
    return n
}
