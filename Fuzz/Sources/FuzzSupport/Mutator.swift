import CFuzzerHooks
@_spi(Format) import QuireFormat

/// The custom mutator shared by fuzz-frames and fuzz-vault.
///
/// libFuzzer turns its length control off when a target defines
/// `LLVMFuzzerCustomMutator`, so inputs would jump to `-max_len` (64 KiB in
/// the Makefile) at once and the run would spend its time on big random
/// files. This mutator grows inputs gradually instead, sometimes applies a
/// frame-aware edit (duplicate, drop, swap or cut at a frame boundary, which
/// is what reorders keyrings and commits), and then usually repairs the
/// unkeyed check values (``ChecksumRepair``).
public enum VaultMutator {
    /// Mutates `size` bytes at `data` (capacity `maxSize`) and returns the new size.
    ///
    /// - Parameter layout: given the length of the vault part of an input
    ///   (after a `.qv` header, see ``VectorInput``), where in it the 64-byte
    ///   file header is (nil: none) and where the first frame starts.
    public static func mutate(
        _ data: UnsafeMutablePointer<UInt8>, size: Int, maxSize: Int, seed: UInt32, layout: (Int) -> (header: Int?, frames: Int)
    ) -> Int {
        func offsets(_ count: Int) -> (header: Int?, frames: Int) {
            let prefix = VectorInput.prefixCount(UnsafeRawBufferPointer(start: data, count: count))
            let l = layout(count - prefix)
            return (l.header.map { $0 + prefix }, l.frames + prefix)
        }
        var random = MutatorRandom(seed: seed)
        let limit = random.next(16) == 0 ? maxSize : min(maxSize, max(256, size + 64, size + size / 4))
        var newSize: Int
        if random.next(4) == 0, let edited = frameEdit(data, size: size, limit: limit, framesFrom: offsets(size).frames, random: &random) {
            newSize = edited
        } else {
            newSize = LLVMFuzzerMutate(data, size, limit)
        }
        if random.next(8) != 0 {
            let o = offsets(newSize)
            ChecksumRepair.repair(UnsafeMutableRawBufferPointer(start: data, count: newSize), headerAt: o.header, framesFrom: o.frames)
        }
        return newSize
    }

    /// The frames found by walking lengths from `start` (without checking
    /// check values), as byte ranges.
    static func frames(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var pos = start
        while pos >= 0, bytes.count - pos >= FrameHeader.byteCount {
            let length = Int(bytes[pos + 8]) | Int(bytes[pos + 9]) << 8 | Int(bytes[pos + 10]) << 16 | Int(bytes[pos + 11]) << 24
            let end = pos + FrameHeader.byteCount + length
            guard length >= Limits.minFrameBodyByteCount, end <= bytes.count else { break }
            out.append(pos..<end)
            pos = end
        }
        return out
    }

    /// One frame-aware edit, or nil when the input has no frames to edit.
    static func frameEdit(
        _ data: UnsafeMutablePointer<UInt8>, size: Int, limit: Int, framesFrom: Int, random: inout MutatorRandom
    ) -> Int? {
        let bytes = UnsafeBufferPointer(start: data, count: size)
        let list = frames(bytes, from: framesFrom)
        guard !list.isEmpty else { return nil }
        var out = Array(bytes)
        let a = list[random.next(list.count)]
        let b = list[random.next(list.count)]
        switch random.next(4) {
        case 0:  // duplicate frame a just before frame b (or at the end)
            let at = random.next(2) == 0 ? b.lowerBound : list.last!.upperBound
            out.insert(contentsOf: bytes[a], at: at)
        case 1:  // drop frame a
            out.removeSubrange(a)
        case 2:  // swap frames a and b
            guard a != b else { return nil }
            let (first, second) = a.lowerBound < b.lowerBound ? (a, b) : (b, a)
            var swapped = Array(bytes[..<first.lowerBound])
            swapped += bytes[second]
            swapped += bytes[first.upperBound..<second.lowerBound]
            swapped += bytes[first]
            swapped += bytes[second.upperBound...]
            out = swapped
        default:  // cut inside or at the end of frame a: a torn tail
            out.removeSubrange((a.lowerBound + random.next(a.count + 1))...)
        }
        guard out.count <= limit else { return nil }
        out.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: $0.count) }
        return out.count
    }
}
