public import QuireCrypto
public import QuireSystem

/// Where a frame sits in a vault file: its byte offset from the start of the
/// file and its index among the frames a reader found (0-based, file order).
@_spi(Format) public struct FrameLocation: Sendable, Hashable, CustomStringConvertible {
    /// Byte offset of the frame's 12-byte header.
    public let offset: UInt64
    /// Index among the frames found, in file order.
    public let index: Int

    /// A location at `offset`, frame `index`.
    @_spi(Format) public init(offset: UInt64, index: Int) {
        self.offset = offset
        self.index = index
    }

    public var description: String { "frame \(index) at byte \(offset)" }
}

/// Every error a Quire reader or writer of the container can raise
/// (`Spec/format.md §12`, the error table).
///
/// Each case has a stable ``code`` (the `expect:` class used by `Vectors/`)
/// and a message a person can act on. Messages never contain key material or
/// decrypted content.
@_spi(Format) public enum FormatError: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: File header (§3)
    /// The file is shorter than the 64-byte header.
    @_spi(Format) case truncatedHeader(fileByteCount: UInt64)
    /// Neither header copy starts with the Quire magic bytes.
    @_spi(Format) case notAVault
    /// The header names a format version this reader does not implement.
    @_spi(Format) case unsupportedVersion(UInt16)
    /// The header sets feature flags this reader does not know.
    @_spi(Format) case unsupportedFeature(flags: UInt16)
    /// Both header copies fail their check value.
    @_spi(Format) case headerDamaged
    /// Both header copies pass their check value but differ.
    @_spi(Format) case headerCopiesDiffer

    // MARK: Frames (§4, §10)
    /// Bytes that do not parse as frames; the reader skipped them and found
    /// the next frame (or the end of the file).
    @_spi(Format) case frameDamaged(offset: UInt64, byteCount: UInt64)
    /// A frame header failed its check and one flipped bit was corrected;
    /// the frame itself is intact. A warning, not a loss.
    @_spi(Format) case frameRepaired(FrameLocation)
    /// A commit's stored previous head (its body bytes 32..<64) is damaged:
    /// its head verified from the head of the commit before it instead
    /// (§9.3 step 2). Its header is intact; nothing is lost. A warning, with
    /// the code `frame_repaired`.
    @_spi(Format) case previousHeadRepaired(FrameLocation)
    /// A frame of a known kind with flags, length or layout its kind forbids.
    @_spi(Format) case malformedFrame(FrameLocation, reason: String)
    /// A record kind this reader does not know, marked critical.
    @_spi(Format) case unknownCriticalKind(FrameLocation, kind: UInt8)
    /// Bytes after the last commit: a write that did not finish. Ignored.
    @_spi(Format) case tornTail(offset: UInt64, byteCount: UInt64, uncommittedFrameCount: Int)

    // MARK: Sealed records (§5–§7)
    /// The AEAD tag or check value did not verify: the bytes were damaged or
    /// altered, or the record was moved from another vault.
    @_spi(Format) case authenticationFailed(FrameLocation)
    /// A record is sealed under a key (by key id) that this reader does not hold.
    @_spi(Format) case unknownKey(FrameLocation, keyID: KeyID)
    /// A record sealed under an epoch older than a keyring before it, not
    /// carried by a commit of a current epoch.
    @_spi(Format) case staleEpoch(FrameLocation, epoch: UInt32, currentEpoch: UInt32)
    /// The padding after a record's payload is not `0x80 0x00…`.
    @_spi(Format) case badPadding(FrameLocation)
    /// The zstd payload is invalid, lacks a declared size, or has trailing bytes.
    @_spi(Format) case decompressionFailed(FrameLocation, reason: String)
    /// A length, count or declared size is over its limit (§11).
    @_spi(Format) case sizeLimitExceeded(FrameLocation?, what: String, size: UInt64, limit: UInt64)
    /// Decompression produced a different size than the zstd frame declared.
    @_spi(Format) case decompressedSizeMismatch(FrameLocation, declared: UInt64, actual: UInt64)
    /// The record body is not canonical CBOR or breaks its schema.
    @_spi(Format) case malformedRecord(FrameLocation?, reason: String)
    /// Two frames carry one revision id with different payloads
    /// (`Spec/merge.md §5`): the one of higher standing (attested, then
    /// verified, then the first in file order) is used; this one is not.
    @_spi(Format) case revisionConflict(FrameLocation, revision: String)

    // MARK: Commits (§9)
    /// A commit's MAC does not verify: records were deleted, reordered,
    /// duplicated, spliced or damaged in this commit.
    @_spi(Format) case commitMismatch(FrameLocation)
    /// A commit is made with a key (by key id) that is not held, so it cannot be checked.
    @_spi(Format) case commitUnverifiable(FrameLocation, keyID: KeyID)
    /// A commit's head verifies, but it is not on the chain: a copy of an
    /// earlier commit, a fork that links past a member's commit, one that
    /// extends a commit off the chain, or one a later commit passes by (an
    /// inserted group) (`Spec/format.md §9.3`). Its records are unverified.
    @_spi(Format) case commitOrphaned(FrameLocation)
    /// A commit a current member attested is verified although it links
    /// past a commit a current member attested, or extends a commit off the
    /// chain: two lines a member vouched for both stay verified, and the
    /// chain goes on from this one (`Spec/format.md §9.3`). A warning:
    /// nothing is lost, but a member wrote it from another place in the
    /// chain than the commits before it.
    @_spi(Format) case commitFork(FrameLocation)
    /// A commit's head does not verify although a later commit chains from
    /// its stored head, and nothing in its group is damaged: frames were
    /// deleted, replaced or inserted after it was written; or a commit's head
    /// verifies from a head no commit of the file stores: the commit it
    /// extends was deleted. Writes are refused.
    @_spi(Format) case commitTampered(FrameLocation)
    /// A verified commit's attestation does not open, is not the synthetic
    /// nonce's, or its signature or signer does not check
    /// (`Spec/format.md §9.4`); its records are unattested.
    @_spi(Format) case attestationFailed(FrameLocation, reason: String)

    /// A keyring frame that no reader trusts (its signature, signer or
    /// parents do not check, or it is malformed), left out of a merge
    /// (`Spec/merge.md §3.2`).
    @_spi(Format) case untrustedKeyring(FrameLocation, reason: String)

    // MARK: Attachments (§7)
    /// A blob's chunk `index` is missing.
    @_spi(Format) case chunkMissing(stream: String, index: UInt32)
    /// A blob's chunk `index` appears more than once.
    @_spi(Format) case chunkDuplicate(stream: String, index: UInt32)
    /// A blob's chunks are not in increasing index order in the file.
    @_spi(Format) case chunkOutOfOrder(stream: String, index: UInt32)
    /// No chunk of the blob carries the final flag.
    @_spi(Format) case chunkFinalMissing(stream: String)
    /// A chunk before the last carries the final flag.
    @_spi(Format) case chunkFinalRepeated(stream: String, index: UInt32)
    /// A chunk breaks the one canonical chunking (`Spec/format.md §7.4`): a
    /// chunk other than the last that is not 64 KiB of stream, an empty
    /// chunk, or a body over one chunk.
    @_spi(Format) case chunkNoncanonical(stream: String, index: UInt32, reason: String)
    /// A blob's stream has another number of chunks than its manifest's
    /// size needs (⌈Padmé(size + 1) / 65,536⌉, `Spec/format.md §7.4`).
    @_spi(Format) case blobSizeMismatch(blob: String, expected: UInt64, actual: UInt64)
    /// A blob's content does not hash to its id.
    @_spi(Format) case blobIDMismatch(blob: String)
    /// The padded stream does not end with `0x80` and zeros up to its Padmé
    /// length after the manifest's size, or is not Padmé(size + 1) bytes
    /// long (`Spec/format.md §7.4`).
    @_spi(Format) case blobPaddingInvalid(blob: String)
    /// No intact blob with this id is in the vault.
    @_spi(Format) case blobNotFound(blob: String)

    // MARK: Writing
    /// A record is too large to seal into one frame.
    @_spi(Format) case recordTooLarge(byteCount: Int, limit: Int)
    /// The file changed underneath an open handle in a way an append cannot
    /// follow (replaced, truncated, or rewritten). Reopen the vault.
    @_spi(Format) case vaultChanged(path: String)
    /// Another writer held the vault's lock for longer than the timeout.
    @_spi(Format) case locked(path: String, seconds: Double)
    /// An attachment's source file changed (shrank or grew) while it was read.
    @_spi(Format) case sourceChanged(path: String)
    /// The vault was opened read-only, or without a key to write with.
    @_spi(Format) case notWritable(reason: String)
    /// A file already exists where a new vault was to be created.
    @_spi(Format) case alreadyExists(path: String)
    /// A system call failed.
    @_spi(Format) case io(SystemError)
    /// Guarded memory for keys ran out: reported as itself, never as damage.
    @_spi(Format) case outOfGuardedMemory
    /// The operation was cancelled (its `Task`, or its progress handler)
    /// before it finished: nothing of it was committed, and the file is as
    /// it was (``OperationCancellation``).
    @_spi(Format) case cancelled
    /// A ``ByteSource`` (an app's) threw `error` while an attachment was
    /// read from it: nothing was stored. The error reaches the caller as it
    /// was thrown.
    @_spi(Format) case source(QuireError)

    /// The stable, machine-readable name of this error, used as the
    /// `expect:` class in `Vectors/` and in `quire verify --json`.
    public var code: String {
        switch self {
        case .truncatedHeader: "truncated_header"
        case .notAVault: "not_a_vault"
        case .unsupportedVersion: "unsupported_version"
        case .unsupportedFeature: "unsupported_feature"
        case .headerDamaged: "header_damaged"
        case .headerCopiesDiffer: "header_copies_differ"
        case .frameDamaged: "frame_damaged"
        case .frameRepaired, .previousHeadRepaired: "frame_repaired"
        case .malformedFrame: "malformed_frame"
        case .unknownCriticalKind: "unknown_critical_kind"
        case .tornTail: "torn_tail"
        case .authenticationFailed: "authentication_failed"
        case .unknownKey: "unknown_key"
        case .staleEpoch: "stale_epoch"
        case .badPadding: "bad_padding"
        case .decompressionFailed: "decompression_failed"
        case .sizeLimitExceeded: "size_limit_exceeded"
        case .decompressedSizeMismatch: "decompressed_size_mismatch"
        case .malformedRecord: "malformed_record"
        case .revisionConflict: "revision_conflict"
        case .commitMismatch: "commit_mismatch"
        case .commitUnverifiable: "commit_unverifiable"
        case .commitOrphaned: "commit_orphaned"
        case .commitFork: "commit_fork"
        case .untrustedKeyring: "keyring_unauthenticated"
        case .commitTampered: "commit_tampered"
        case .attestationFailed: "attestation_failed"
        case .chunkMissing: "chunk_missing"
        case .chunkDuplicate: "chunk_duplicate"
        case .chunkOutOfOrder: "chunk_out_of_order"
        case .chunkFinalMissing: "chunk_final_missing"
        case .chunkFinalRepeated: "chunk_final_repeated"
        case .chunkNoncanonical: "chunk_noncanonical"
        case .blobSizeMismatch: "blob_size_mismatch"
        case .blobIDMismatch: "blob_id_mismatch"
        case .blobPaddingInvalid: "bad_padding"
        case .blobNotFound: "blob_not_found"
        case .recordTooLarge: "record_too_large"
        case .vaultChanged: "vault_changed"
        case .locked: "locked"
        case .sourceChanged: "source_changed"
        case .notWritable: "not_writable"
        case .alreadyExists: "already_exists"
        case .io: "io"
        case .outOfGuardedMemory: "out_of_guarded_memory"
        case .cancelled: "cancelled"
        case .source(let e): e.code
        }
    }

    /// Where in the file the error is, when it is about one frame.
    public var location: FrameLocation? {
        switch self {
        case .frameRepaired(let l), .previousHeadRepaired(let l), .malformedFrame(let l, _), .unknownCriticalKind(let l, _),
            .authenticationFailed(let l),
            .unknownKey(let l, _), .staleEpoch(let l, _, _), .badPadding(let l), .decompressionFailed(let l, _),
            .decompressedSizeMismatch(let l, _, _), .commitMismatch(let l), .commitUnverifiable(let l, _), .attestationFailed(let l, _),
            .commitOrphaned(let l), .commitFork(let l), .commitTampered(let l), .untrustedKeyring(let l, _), .revisionConflict(let l, _):
            return l
        case .sizeLimitExceeded(let l, _, _, _), .malformedRecord(let l, _):
            return l
        default:
            return nil
        }
    }

    /// The byte offset the error is about, when there is one.
    public var offset: UInt64? {
        switch self {
        case .frameDamaged(let o, _), .tornTail(let o, _, _): return o
        case .source(let e): return e.offset
        default: return location?.offset
        }
    }

    public var description: String {
        switch self {
        case .truncatedHeader(let n):
            return "not a Quire vault: the file is \(n) bytes, shorter than the 64-byte header"
        case .notAVault:
            return "not a Quire vault: the file does not start with the Quire magic bytes"
        case .unsupportedVersion(let v):
            if v == 1 {
                return
                    "vault format version 1 is a development version that this Quire no longer reads (it reads version 2); no vault of version 1 exists outside Quire's own history"
            }
            return "vault format version \(v) is not supported by this reader (it reads version 2); update Quire"
        case .unsupportedFeature(let flags):
            return "vault uses header features 0x\(String(flags, radix: 16)) that this reader does not know; update Quire"
        case .headerDamaged:
            return "both copies of the vault header are damaged; the vault id cannot be recovered"
        case .headerCopiesDiffer:
            return "the two copies of the vault header are each intact but differ: the file was tampered with"
        case .frameDamaged(let offset, let count):
            return "\(count) damaged bytes at offset \(offset) could not be read as records and were skipped"
        case .frameRepaired(let loc):
            return "\(loc) had one flipped bit in its header, which was corrected"
        case .previousHeadRepaired(let loc):
            return
                "\(loc) is a commit whose stored previous head was damaged and was repaired from the commit before it (its head verifies from that); nothing is lost"
        case .malformedFrame(let loc, let reason):
            return "\(loc) is malformed: \(reason)"
        case .unknownCriticalKind(let loc, let kind):
            return "\(loc) has record kind 0x\(String(kind, radix: 16)), which this reader does not know and may not skip; update Quire"
        case .tornTail(let offset, let count, let frames):
            return "\(count) bytes after offset \(offset) (\(frames) uncommitted records) are an unfinished write and are ignored"
        case .authenticationFailed(let loc):
            return "\(loc) does not authenticate: it is damaged, was altered, or comes from another vault"
        case .unknownKey(let loc, let id):
            return "\(loc) is sealed under key \(id), which this credential does not hold"
        case .staleEpoch(let loc, let epoch, let current):
            return
                "\(loc) is sealed under epoch \(epoch) after epoch \(current) began and no current commit vouches for it; it is not trusted"
        case .badPadding(let loc):
            return "\(loc) has invalid padding"
        case .decompressionFailed(let loc, let reason):
            return "\(loc) does not decompress: \(reason)"
        case .sizeLimitExceeded(let loc, let what, let size, let limit):
            let place = loc.map { "\($0): " } ?? ""
            return "\(place)\(what) is \(size) bytes, over the limit of \(limit)"
        case .decompressedSizeMismatch(let loc, let declared, let actual):
            return "\(loc) declares \(declared) decompressed bytes but holds \(actual)"
        case .malformedRecord(let loc, let reason):
            let place = loc.map { "\($0) " } ?? "record "
            return "\(place)is not a valid record body: \(reason)"
        case .commitMismatch(let loc):
            return "commit \(loc) does not verify: records before it were removed, reordered, duplicated, inserted or damaged"
        case .revisionConflict(let loc, let revision):
            return
                "\(loc) carries revision \(revision), which another frame carries with other content; the one a member vouches for most is shown, not this one"
        case .untrustedKeyring(let loc, let reason):
            return "keyring \(loc) is not trusted (\(reason)); it is not carried"
        case .commitOrphaned(let loc):
            return
                "commit \(loc) is not part of the chain: the commit after it does not chain from it (a group was inserted); its records are shown as unverified"
        case .commitFork(let loc):
            return
                "commit \(loc) was attested by a member but extends a commit the chain left or links past another member's commit (a fork, such as a group a stolen device inserted); both lines stay verified, and new commits extend this one"
        case .commitTampered(let loc):
            return
                "commit \(loc) was altered after later commits were written, with no sign of damage (records were deleted, replaced or inserted); its records are shown as unverified, and writing is refused until a copy that holds the commit is merged back (quire merge) or the vault is compacted without what cannot be verified"
        case .commitUnverifiable(let loc, let id):
            return "commit \(loc) is made with key \(id), which this credential does not hold, so it cannot be checked"
        case .attestationFailed(let loc, let reason):
            return "commit \(loc) carries an attestation that does not check (\(reason)); its records are shown as unattested"
        case .chunkMissing(let stream, let index):
            return "attachment stream \(stream) is missing chunk \(index)"
        case .chunkDuplicate(let stream, let index):
            return "attachment stream \(stream) has chunk \(index) more than once"
        case .chunkOutOfOrder(let stream, let index):
            return "attachment stream \(stream) has chunk \(index) out of order"
        case .chunkFinalMissing(let stream):
            return "attachment stream \(stream) has no final chunk: it was cut short"
        case .chunkFinalRepeated(let stream, let index):
            return "attachment stream \(stream) marks chunk \(index) final but more chunks follow"
        case .chunkNoncanonical(let stream, let index, let reason):
            return "attachment stream \(stream) chunk \(index) is not canonical: \(reason)"
        case .blobSizeMismatch(let blob, let expected, let actual):
            return "attachment \(blob) should be \(expected) bytes but its chunks hold \(actual)"
        case .blobPaddingInvalid(let blob):
            return "attachment \(blob) has invalid padding after its content"
        case .blobIDMismatch(let blob):
            return "attachment \(blob) does not match its content hash"
        case .blobNotFound(let blob):
            return "no intact attachment \(blob) in this vault"
        case .recordTooLarge(let count, let limit):
            return "record of \(count) bytes is over the \(limit)-byte limit; store large content as an attachment"
        case .vaultChanged(let path):
            return "\(path) changed on disk since it was opened (replaced or rewritten); open it again"
        case .locked(let path, let seconds):
            return "\(path) is locked by another writer (waited \(Int(seconds)) s); try again when it has finished"
        case .sourceChanged(let path):
            return "\(path) changed while it was being read; nothing was stored — store it again when it is complete"
        case .notWritable(let reason):
            return "cannot write to this vault: \(reason)"
        case .alreadyExists(let path):
            return "\(path) already exists; choose another path or remove it first"
        case .io(let error):
            return error.description
        case .outOfGuardedMemory:
            return "out of guarded memory for keys: the system refused to lock more memory (raise RLIMIT_MEMLOCK or close other vaults)"
        case .cancelled:
            return "the operation was cancelled before it finished; nothing of it was written — run it again to complete it"
        case .source(let e):
            return e.message
        }
    }
}

extension FormatError: QuireErrorLayer {
    /// The `errno` of a failed read or write, or of the app's source.
    package var errorNumber: Int32? {
        switch self {
        case .io(let e): e.code
        case .source(let e): e.layer.errorNumber
        default: nil
        }
    }

    /// The container layer's part of ``QuireError/category``.
    package var category: QuireError.Category {
        switch self {
        case .truncatedHeader(let count): count == 0 ? .unavailable : .damaged
        case .notAVault, .unsupportedVersion, .unsupportedFeature, .unknownCriticalKind, .vaultChanged: .unavailable
        case .headerDamaged, .headerCopiesDiffer, .frameDamaged, .frameRepaired, .previousHeadRepaired, .malformedFrame, .tornTail,
            .authenticationFailed, .unknownKey, .staleEpoch, .badPadding, .decompressionFailed,
            .decompressedSizeMismatch, .revisionConflict, .commitMismatch, .commitUnverifiable, .commitOrphaned,
            .commitFork, .attestationFailed, .untrustedKeyring, .chunkMissing, .chunkDuplicate, .chunkOutOfOrder,
            .chunkFinalMissing, .chunkFinalRepeated, .chunkNoncanonical, .blobSizeMismatch, .blobIDMismatch,
            .blobPaddingInvalid:
            .damaged
        // Without a place in the file, the size or record was the caller's.
        case .sizeLimitExceeded(let location, _, _, _): location == nil ? .programmerError : .damaged
        case .malformedRecord(let location, _): location == nil ? .programmerError : .damaged
        case .commitTampered: .needsMerge
        case .blobNotFound: .notFound
        case .recordTooLarge, .alreadyExists: .programmerError
        case .locked, .sourceChanged: .busy
        case .notWritable: .readOnly
        case .io(let e): e.category
        case .outOfGuardedMemory: .outOfSpace
        case .cancelled: .cancelled
        case .source(let e): e.category
        }
    }
}

extension QuireError {
    /// The container layer's `error` as a `QuireError`; an error a
    /// ``ByteSource`` threw (``FormatError/source(_:)``) as it was thrown.
    package static func fromFormat(_ error: FormatError) -> QuireError {
        if case .source(let e) = error { return e }
        return QuireError(layer: error)
    }
}
