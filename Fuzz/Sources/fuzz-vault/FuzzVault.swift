// fuzz-vault: open an arbitrary file as a whole vault with a fixed recovery
// key, verify its commits, read every record and every attachment.
//
// Errors are expected. A crash, a hang or a huge allocation is a bug, and so
// is an attachment that reads to its end with a size other than its
// manifest's. Seeds made by fuzz-seed are real vaults unlocked by this
// recovery key, so mutants start from a vault that opens and reach the
// keyring evaluator, the commit check, the record reader and the
// attachment chunk checks.
//
// A `.qv` test vector (Vectors/files) is read from its vault bytes, after
// its text header, and opened with the vector's own recovery key or device
// seed when it names one (see VectorInput), so the vectors' sealed records
// and attachments are read too.

import FuzzSupport
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// Set QUIRE_FUZZ_VERBOSE=1 to print how far each input got (for triage:
/// `fuzz-vault some-input` runs just that input).
let verbose = FileSystem.environment("QUIRE_FUZZ_VERBOSE") != nil

let recoveryKey: RecoveryKey = {
    do { return RecoveryKey(secret: try SymmetricKey(bytes: [UInt8](repeating: 1, count: 32))) } catch { fatalError("\(error)") }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let vector = VectorInput.parse(input)
    let path = Scratch.write(UnsafeRawBufferPointer(rebasing: input[(vector?.prefixCount ?? 0)...]))
    let credential = vector?.credential ?? .recoveryKey(recoveryKey)
    let file: VaultFile
    do { file = try VaultFile(path: path, writable: false) } catch {
        if verbose { print("fuzz-vault: open: \(error)") }
        return 0
    }
    let unlocked: UnlockedKeys
    do { unlocked = try KeyringEvaluator.unlock(file, with: credential) } catch {
        Sink.touch(error.description)
        if verbose { print("fuzz-vault: unlock: \(error) (\(file.structure.frames.count) frames)") }
        return 0
    }
    Sink.touch(unlocked.trustedKeyrings)
    Sink.touch(unlocked.issues.count)
    Sink.touch(unlocked.unreadableNewerEpoch)
    Sink.touch(unlocked.newestTrusted?.epoch)
    file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
    Sink.touch(file.commits.statuses.count)
    Sink.touch(file.commits.attestations.map { "\($0)" })
    Sink.touch(file.commitIssues.count)
    // Whether an unknown critical kind is fatal is decided on verified,
    // attested commits only (Spec/format.md §4.3); both lists are read.
    Sink.touch(file.fatalCriticalKind?.code)
    Sink.touch(file.skippedCriticalKinds.count)
    guard file.commits.statuses.count == file.structure.groups.count, file.commits.attestations.count == file.structure.groups.count else {
        fatalError("\(file.structure.groups.count) commit groups but \(file.commits.statuses.count) verdicts and \(file.commits.attestations.count) attestations")
    }
    for (g, status) in file.commits.statuses.enumerated() where status != .verified {
        guard file.commits.attestations[g] == .notChecked else { fatalError("commit \(g) is \(status) but its attestation was checked") }
    }
    var released = 0
    var manifests: [(BlobManifest, SymmetricKey?)] = []
    let issues = file.forEachRecord(kinds: [.entryRevision, .blobManifest, .profile, .keyring]) { record in
        released += 1
        Sink.touch(record.payload)
        Sink.touch(record.commitVerified)
        Sink.touch(record.attestedBy)
        if record.attestedBy != nil && !record.commitVerified { fatalError("an unverified record is attested") }
        // Decode what was released, as the facade would.
        let location = record.frame.location
        switch record.frame.header.kind {
        case .entryRevision: Sink.touch((try? EntryRevision(decoding: record.payload, location: location))?.revisionID)
        case .blobManifest:
            if let m = try? BlobManifest(decoding: record.payload, location: location) {
                manifests.append((m, file.keys.keys(for: record.frame.header.keyID).first?.blobKey))
            }
        case .profile: Sink.touch((try? Profile(decoding: record.payload, location: location))?.name)
        default: break
        }
        return true
    }
    Sink.touch(issues.count)
    // Attachments: the chunk structure checks need no key, and the frame
    // edits of the mutator duplicate, drop and reorder chunk frames.
    var blobsRead = 0
    for (manifest, blobKey) in manifests {
        guard let reader = try? file.openBlob(manifest, blobKey: blobKey), let content = try? reader.readAll() else { continue }
        guard UInt64(content.count) == manifest.byteCount else {
            fatalError("attachment \(manifest.blob) read as \(content.count) bytes, its manifest says \(manifest.byteCount)")
        }
        blobsRead += 1
    }
    if verbose {
        print("fuzz-vault: unlocked, \(file.commits.statuses.count) commits, \(file.commitIssues.count) commit issues, \(released) records released, \(issues.count) read issues, \(blobsRead)/\(manifests.count) attachments read")
    }
    return 0
}

/// libFuzzer's mutator with gradual growth, frame-aware edits (which
/// reorder and duplicate keyrings and commits) and repair of the unkeyed
/// check values, so mutated keyring bodies reach the keyring parser instead
/// of failing their checksum (see VaultMutator).
@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    VaultMutator.mutate(data, size: size, maxSize: maxSize, seed: seed) { _ in (header: 0, frames: FileHeader.byteCount) }
}
