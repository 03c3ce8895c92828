import Foundation
@_spi(Format) import Quire
import QuireSystem

/// `quire extract [VAULT] ATTACHMENT [-o FILE]`.
struct ExtractCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "extract", abstract: "write an attachment to a file",
        discussion: """
            ATTACHMENT is the id the entry's text links to (quire-attachment://ID)
            and 'quire attachments' shows, or a prefix of 4 or more of its hex
            digits. Without -o the file gets the attachment's own name in this
            folder, with -2, -3… added when that name is taken: nothing is ever
            overwritten.
            """,
        json: ExtractJSON.self, section: .journal, unlocks: true)

    @VaultArgument var vault: String
    @Argument(help: "the attachment's id (or a prefix of 4 or more hex digits)") var attachment: AttachmentIDPrefix
    @Option(short: "o", placeholder: "FILE", help: "the file to write ('-': standard output); it must not exist") var output: String?
    @Option(placeholder: "ID", help: "look only at this entry's attachments") var entry: EntryIDPrefix?
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var json: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        if let output, output.isEmpty { throw c.usage("-o FILE is empty: give the path of the file to write") }
        if let output, output != "-" {
            if FileSystem.nameExists(output) {
                throw CLIFailure("\(output) already exists; nothing was written", hint: "choose another name or remove it first")
            }
            try Paths.requireParentFolder(output)
        }
        let (opened, all) = try Reading.entries(vault, unlock, out: c.out)
        let entries = try entry.map { (p: EntryIDPrefix) throws(CLIFailure) in [try EntryFormat.resolve(p, in: all)] } ?? all
        let p = attachment.prefix
        var matches: [String: AttachmentReference] = [:]
        var exact: [String: AttachmentReference] = [:]
        for e in entries {
            for ref in e.body.attachments {
                let id = EntryFormat.attachmentID(ref)
                if id == p { exact[ref.blob.description] = ref }
                if p.count >= 4 && id.hasPrefix(p) { matches[ref.blob.description] = ref }
            }
        }
        let found = exact.isEmpty ? matches : exact
        guard found.count == 1, let ref = found.first?.value else {
            if found.isEmpty {
                let hint =
                    p.count < 4
                    ? "give 4 or more hex digits, or the whole id 'quire attachments ID' shows"
                    : "see an entry's attachments with 'quire attachments ID'"
                throw CLIFailure(
                    "no attachment has the id \(p)\(p.count >= 4 ? " or an id starting with it" : "")", hint: hint, code: "blob_not_found")
            }
            throw CLIFailure(
                "\(found.count) attachments have ids starting with \(p)", hint: "give more hex digits, or the entry with --entry ID",
                code: "ambiguous_id", exit: .usage)
        }
        Reading.include([ref])
        // Standard output cannot take bytes back: the attachment is read
        // through once (every chunk opened, the blob id checked) before a
        // byte is written. A file is written under a temporary name and
        // appears only once that same check has passed while writing it, so
        // one read is enough: reading it twice cost as much as the rest.
        if output == "-", let damage = Reading.damagedAttachments(opened.vault)[ref.blob] { throw damaged(ref, code: damage.code) }
        let reader: BlobReader
        do { reader = try opened.vault.openAttachment(ref.blob) } catch {
            if case .attachmentNotFound = error.detail { throw .vault(error, path: vault) }
            let format: FormatError? = if case .format(let f) = error.detail { f } else { nil }
            let code = format?.code ?? error.code
            Reading.noteRead(ref, failure: (code, format?.location, format?.description ?? error.description))
            throw damaged(ref, code: code)
        }
        if output == "-" {
            var buffer = [UInt8](repeating: 0, count: Self.bufferByteCount)
            defer { wipe(&buffer) }
            do throws(FormatError) {
                while true {
                    let n = try Self.readChunk(reader, into: &buffer)
                    if n == 0 { break }
                    do { try ProcessControl.write(Array(buffer[0..<n]), to: Terminal.standardOutput) } catch {
                        throw FormatError.io(error)
                    }
                }
            } catch { throw .vault(.format(error), path: vault) }
            return .success
        }
        let (path, written) = try write(reader, to: output, ref: ref)
        c.out.line("wrote \(path) (\(formatBytes(written)), \(ref.mediaType))")
        c.out.emit(
            ExtractJSON(
                id: EntryFormat.attachmentID(ref), path: path, byteCount: written, mediaType: ref.mediaType,
                unreadRecords: UnreadRecordsJSON(Reading.records(opened.vault), vault: opened.vault)))
        return .success
    }

    /// Writes the attachment to `output`, or to its own file name here (the
    /// first of `name`, `name-2`… that is free): a temporary file first,
    /// then linked to the name, which fails rather than replace a file.
    func write(_ reader: BlobReader, to output: String?, ref: AttachmentReference) throws(CLIFailure) -> (String, UInt64) {
        let temp = ".quire-extract-\(FileSystem.processID)-\(UInt32.random(in: 0...UInt32.max))"
        let tempPath = output.map { Paths.parentFolder(of: $0) + "/" + temp } ?? temp
        var written: UInt64 = 0
        do {
            let file = try SystemFile(path: tempPath, mode: .createExclusive(permissions: 0o600))
            defer { try? FileSystem.remove(tempPath) }
            while true {
                // Written from where the reader opened it (up to 1 MiB a
                // write), not copied to a buffer of ours first.
                let piece = try reader.nextContent()
                if piece.isEmpty { break }
                try file.write(piece, at: written)
                // Written back while the next bytes are opened, not all in the fsync.
                file.startWriteback(from: written, count: piece.count)
                written += UInt64(piece.count)
            }
            try file.sync()
            Reading.noteRead(ref, failure: nil)
            if let output {
                try FileSystem.link(tempPath, to: output)
                return (output, written)
            }
            let (stem, ext) = Self.ownName(ref)
            for n in 1...1000 {
                let name = n == 1 ? stem + ext : "\(stem)-\(n)\(ext)"
                if try Self.link(tempPath, to: name) { return (name, written) }
            }
            throw CLIFailure(
                "every name from \(stem)\(ext) to \(stem)-1000\(ext) is taken here; nothing was written", hint: "give a name with -o FILE")
        } catch let e as CLIFailure {
            throw e
        } catch let e as FormatError {
            // Only reading the attachment throws these: it is damaged.
            Reading.noteRead(ref, failure: (e.code, e.location, e.description))
            throw damaged(ref, code: e.code)
        } catch let e as SystemError {
            if e.isAlreadyExists, let output {
                throw CLIFailure("\(output) already exists; nothing was written", hint: "choose another name or remove it first")
            }
            throw CLIFailure("cannot write \(output ?? "the attachment"): \(e)", hint: CLIFailure.hint(for: e))
        } catch {
            throw CLIFailure("cannot write \(output ?? "the attachment"): \(error)")
        }
    }

    /// The failure for an attachment whose bytes cannot be read.
    func damaged(_ ref: AttachmentReference, code: String) -> CLIFailure {
        CLIFailure(
            "attachment \(EntryFormat.attachmentID(ref)) in \(vault) is damaged and cannot be read (\(code)); nothing was written",
            hint: "'quire verify \(vault)' lists the damage; restore the attachment from another copy ('quire merge \(vault) COPY')",
            code: code)
    }

    /// Links `temp` to `name`; false when `name` is taken.
    static func link(_ temp: String, to name: String) throws(SystemError) -> Bool {
        do {
            try FileSystem.link(temp, to: name)
            return true
        } catch {
            if error.isAlreadyExists { return false }
            throw error
        }
    }

    /// The attachment's own file name, made safe to create here: its last
    /// path component, without control characters or a leading dot or dash;
    /// `attachment-ID.ext` when it has none. Split into stem and extension.
    static func ownName(_ ref: AttachmentReference) -> (String, String) {
        var name = Paths.lastComponent(of: ref.fileName).unicodeScalars.filter {
            $0.value >= 0x20 && $0.value != 0x7f && !(0x80...0x9f).contains($0.value)
        }
        .map(String.init).joined()
        while name.hasPrefix(".") || name.hasPrefix("-") { name.removeFirst() }
        if name.isEmpty || name == "/" {
            let ext = EntryFormat.fileExtension(forMediaType: ref.mediaType)
            name = "attachment-" + String(EntryFormat.attachmentID(ref).prefix(8)) + (ext.isEmpty ? "" : "." + ext)
        }
        let ext = Paths.pathExtension(of: name)
        return ext.isEmpty ? (name, "") : (String(name.dropLast(ext.count + 1)), "." + ext)
    }

    /// Bytes read from the attachment and written to the file at a time
    /// (1 MiB): each write is a system call.
    static let bufferByteCount = 1 << 20

    /// Reads the next piece of an attachment into `buffer` (as much as
    /// fills it, unless the attachment ends first); 0 at the end.
    static func readChunk(_ reader: BlobReader, into buffer: inout [UInt8]) throws(FormatError) -> Int {
        var failure: FormatError?
        let n = buffer.withUnsafeMutableBytes { raw -> Int in
            var done = 0
            while done < raw.count {
                do throws(FormatError) {
                    let n = try reader.readChecked(into: UnsafeMutableRawBufferPointer(rebasing: raw[done...]))
                    if n == 0 { break }
                    done += n
                } catch {
                    failure = error
                    return 0
                }
            }
            return done
        }
        if let failure { throw failure }
        return n
    }
}

/// What `quire extract --json` prints.
struct ExtractJSON: JSONShape {
    let id: String
    let path: String
    let byteCount: UInt64
    let mediaType: String
    /// The records the entries searched leave out (``UnreadRecordsJSON``).
    let unreadRecords: UnreadRecordsJSON

    static var example: ExtractJSON { ExtractJSON(id: "", path: "", byteCount: 0, mediaType: "", unreadRecords: .example) }
}
