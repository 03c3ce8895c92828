// fuzz-memory: the device memory file of a vault (Spec/keys.md §3.3, §7).
//
// The input is the file's bytes. `VaultMemory(decoding:)` must never crash;
// a memory that parses must encode to text that parses back to the same
// memory (the keyring lines are written sorted, so they are compared as a
// set), and to no more than the 16,384 bytes a store reads when it came
// from at most that many. A crash, a trap or a broken invariant
// (fatalError) is a bug.

import FuzzSupport
@_spi(Format) import QuireKeys

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let memory = VaultMemory(decoding: bytes) else { return 0 }
    Sink.touch("\(memory.vaultID) \(memory.path.count) \(memory.committedLength) \(memory.newestClock)")
    let encoded = memory.encoded()
    guard let again = VaultMemory(decoding: encoded) else { fatalError("an encoded memory does not parse back") }
    guard again.vaultID == memory.vaultID, again.path == memory.path, again.committedLength == memory.committedLength,
          again.chainHead == memory.chainHead, again.newestClock == memory.newestClock, Set(again.keyringHeads) == Set(memory.keyringHeads),
          again.removedKey == memory.removedKey, again.acceptedTampered == memory.acceptedTampered
    else { fatalError("a memory does not survive encode → decode") }
    guard again.encoded() == encoded else { fatalError("encoding is not stable") }
    if size <= 16_384, encoded.count > 16_384 + 128 { fatalError("a memory of \(size) bytes encodes to \(encoded.count)") }
    return 0
}
