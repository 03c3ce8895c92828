// fuzz-frames: VaultScanner.scan over an arbitrary file.
//
// The input is written to the scratch file and scanned without a key. An
// input shorter than 64 bytes gets a valid header in front, so that short
// inputs exercise the frame reader rather than stopping at the header. A
// `.qv` test vector (Vectors/files) is read from its vault bytes, after its
// text header (see VectorInput).
//
// Errors are fine; a crash, a hang or a huge allocation is a bug, and so is
// a structure that breaks the scanner's own promises (frames in order,
// inside the file, groups and tail consistent), checked below.

import FuzzSupport
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat

let validHeader: [UInt8] = {
    do { return FileHeader(vaultID: try VaultID(bytes: Array(repeating: 7, count: 16))).encoded() } catch { fatalError("\(error)") }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let whole = UnsafeRawBufferPointer(start: data, count: size)
    let input = UnsafeRawBufferPointer(rebasing: whole[VectorInput.prefixCount(whole)...])
    let path = input.count < FileHeader.byteCount ? Scratch.write(validHeader + Array(input)) : Scratch.write(input)
    guard let s = try? VaultScanner.scan(path: path) else { return 0 }
    check(s)
    return 0
}

func check(_ s: VaultStructure) {
    Sink.touch(s.header.version)
    Sink.touch(s.header.flags)
    Sink.touch(s.header.vaultID)
    Sink.touch(s.headerDamage == .none)
    Sink.touch(s.fileSize)

    var previousEnd = UInt64(FileHeader.byteCount)
    for (i, f) in s.frames.enumerated() {
        Sink.touch(f.location.offset)
        Sink.touch(f.location.index)
        Sink.touch(f.header)
        Sink.touch(f.header.kind.description)
        Sink.touch(f.header.kind.isKnown)
        Sink.touch(f.header.isSealed)
        Sink.touch(f.header.isCompressed)
        Sink.touch(f.header.encoded())
        Sink.touch(f.trailer)
        Sink.touch(f.repaired)
        Sink.touch(f.chunk)
        Sink.touch(f.plaintextBody)
        Sink.touch(f.checksumIntact)
        Sink.touch(f.malformation)
        Sink.touch(f.bodyOffset)
        Sink.touch(f.end)
        Sink.touch(f.isCommit)
        Sink.touch(f.commitBody)
        Sink.touch(f.header.keyID)
        Sink.touch(s.groupIndex(ofFrame: i))

        guard f.location.index == i else { fatalError("frame \(i) says it is frame \(f.location.index)") }
        guard f.location.offset >= previousEnd else { fatalError("frame \(i) at \(f.location.offset) overlaps the previous frame ending at \(previousEnd)") }
        guard f.end <= s.fileSize else { fatalError("frame \(i) ends at \(f.end), past the file size \(s.fileSize)") }
        let trailer = f.header.kind == .commit ? CommitChain.headByteCount : f.header.trailerByteCount
        guard f.trailer.count == trailer else { fatalError("frame \(i) trailer has \(f.trailer.count) bytes") }
        if f.isCommit, f.commitBody?.count != CommitChain.bodyByteCount { fatalError("commit frame \(i) has no \(CommitChain.bodyByteCount)-byte body") }
        if let body = f.plaintextBody, body.count != Int(f.header.bodyLength) - FrameHeader.bodyHashByteCount {
            fatalError("frame \(i) plaintext body has \(body.count) bytes for body length \(f.header.bodyLength)")
        }
        previousEnd = f.end
    }

    var previousCommit = -1
    for (g, group) in s.groups.enumerated() {
        Sink.touch(group.commitFrame)
        Sink.touch(group.members)
        Sink.touch(group.digest)
        Sink.touch(group.storedHead)
        Sink.touch(group.containsDamage)
        guard group.members.lowerBound == previousCommit + 1, group.members.upperBound == group.commitFrame,
            group.commitFrame < s.frames.count, s.frames[group.commitFrame].isCommit
        else { fatalError("commit group \(g) is inconsistent: \(group.members) / \(group.commitFrame)") }
        guard s.groupIndex(ofFrame: group.commitFrame) == g else { fatalError("groupIndex(ofFrame: \(group.commitFrame)) != \(g)") }
        guard group.storedHead == s.frames[group.commitFrame].trailer, group.commitBody == s.frames[group.commitFrame].commitBody else {
            fatalError("commit group \(g) does not hold its commit frame's head and body")
        }
        previousCommit = group.commitFrame
    }
    for region in s.damagedRegions {
        Sink.touch(region)
        guard region.offset + region.byteCount <= s.committedEnd else { fatalError("damaged region \(region) past the committed end \(s.committedEnd)") }
    }
    guard s.committedEnd <= s.fileSize else { fatalError("committed end \(s.committedEnd) past the file size \(s.fileSize)") }
    Sink.touch(s.tailByteCount)
    guard s.uncommittedFrames.lowerBound == previousCommit + 1, s.uncommittedFrames.upperBound == s.frames.count else {
        fatalError("uncommitted frames \(s.uncommittedFrames) inconsistent with \(s.frames.count) frames, last commit \(previousCommit)")
    }
    Sink.touch(s.committedFrameCount)
}

/// libFuzzer's mutator with gradual growth, frame-aware edits and check
/// value repair (see VaultMutator). Inputs under 64 bytes are frames only,
/// as fuzz() reads them.
@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    VaultMutator.mutate(data, size: size, maxSize: maxSize, seed: seed) { count in
        count < FileHeader.byteCount ? (header: nil, frames: 0) : (header: 0, frames: FileHeader.byteCount)
    }
}
