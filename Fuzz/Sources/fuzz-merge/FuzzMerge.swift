// fuzz-merge: merge an arbitrary copy into a vault (Spec/merge.md §3).
//
// The input is split in two at a point its last byte chooses: the vault
// is the input cut there (at most a prefix of it), the copy is the whole
// input. Both go to scratch files, and the copy is merged into the vault
// with the fixed recovery key of the fuzz seeds (or a vector's own key).
//
// Errors are expected. A crash or a hang is a bug, and so is: a refused
// merge that changed the vault's bytes or left a temporary file behind, or
// a merge that succeeded but whose result no longer opens with the key.

import FuzzSupport
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
@_spi(Format) import QuireSync
import QuireSystem

let recoveryKey: RecoveryKey = {
    do { return RecoveryKey(secret: try SymmetricKey(bytes: [UInt8](repeating: 1, count: 32))) } catch { fatalError("\(error)") }
}()

let folder: String = {
    let dir = "/tmp/quire-fuzz-merge-\(FileSystem.processID)"
    try? FileSystem.makeDirectory(dir)
    return dir
}()

func write(_ bytes: [UInt8], to path: String) {
    do {
        if FileSystem.exists(path) { try FileSystem.remove(path) }
        try SystemFile(path: path, mode: .createExclusive(permissions: 0o600)).write(bytes, at: 0)
    } catch {
        fatalError("fuzz harness: cannot write \(path): \(error)")
    }
}

func contents(_ path: String) -> [UInt8] {
    guard let f = try? SystemFile(path: path, mode: .readOnly), let n = try? f.size(), let b = try? f.read(count: Int(n), at: 0) else { return [] }
    return b
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let vector = VectorInput.parse(input)
    let body = Array(input[(vector?.prefixCount ?? 0)...])
    guard body.count > FileHeader.byteCount else { return 0 }
    let credential = vector?.credential ?? .recoveryKey(recoveryKey)
    // Cut the vault somewhere after the header: a proportion chosen by the last byte.
    let cut = FileHeader.byteCount + (body.count - FileHeader.byteCount) * Int(body[body.count - 1]) / 255
    let vault = folder + "/Journal.quire", copy = folder + "/Journal.sync-conflict-20260101-000000-FUZZ.quire"
    write(Array(body[0..<cut]), to: vault)
    write(body, to: copy)
    let before = contents(vault)
    do {
        let report = try VaultMerge.merge(vaultAt: vault, copyAt: copy, credential: credential, options: WriteOptions(synchronous: false))
        Sink.touch(report.framesAdded)
        Sink.touch(report.leftOut.count)
        if report.changed {
            do {
                let file = try VaultFile(path: vault)
                _ = try KeyringEvaluator.unlock(file, with: credential)
            } catch {
                fatalError("a merged vault no longer opens: \(error)")
            }
        } else if contents(vault) != before {
            fatalError("a merge that reported no change changed the vault")
        }
    } catch {
        Sink.touch(error.description)
        if contents(vault) != before { fatalError("a refused merge changed the vault: \(error)") }
    }
    if let names = try? FileSystem.listDirectory(folder), names.contains(where: { $0.hasPrefix(".") }) {
        fatalError("a temporary file was left behind: \(names)")
    }
    return 0
}

@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    VaultMutator.mutate(data, size: size, maxSize: maxSize, seed: seed) { _ in (header: 0, frames: FileHeader.byteCount) }
}
