/// What the PDF book needs from an image file's header: its size in pixels
/// and, for JPEG, the EXIF orientation. Only headers are read; no image
/// data is decoded here.
struct ImageHeader: Sendable, Equatable {
    enum Kind: Sendable, Equatable { case jpeg, png }

    var kind: Kind
    /// Stored width in pixels, before the orientation is applied.
    var width: Int
    /// Stored height in pixels, before the orientation is applied.
    var height: Int
    /// EXIF orientation 1…8 (1 when absent or out of range).
    var orientation: Int = 1

    /// Width as shown, after the orientation (5…8 swap the sides).
    var displayWidth: Int { orientation >= 5 ? height : width }
    /// Height as shown, after the orientation.
    var displayHeight: Int { orientation >= 5 ? width : height }

    /// The outcome of reading a prefix of a file.
    enum Parse: Sendable, Equatable {
        case header(ImageHeader)
        /// The prefix ends before the header does: read more.
        case needMore
        /// Not an image of the kind asked, or a header that breaks its format.
        case invalid
    }

    /// Parses a JPEG prefix: the SOF segment for the size and an APP1 Exif
    /// segment (before it) for the orientation. Every length is checked
    /// against the bytes present.
    static func jpeg(_ b: [UInt8]) -> Parse {
        guard b.count >= 2 else { return .needMore }
        guard b[0] == 0xFF, b[1] == 0xD8 else { return .invalid }
        var orientation = 1
        var i = 2
        while true {
            // Markers may be preceded by any number of 0xFF fill bytes.
            guard i < b.count else { return .needMore }
            guard b[i] == 0xFF else { return .invalid }
            while i < b.count, b[i] == 0xFF { i += 1 }
            guard i < b.count else { return .needMore }
            let marker = b[i]
            i += 1
            switch marker {
            case 0x01, 0xD0...0xD7:
                continue  // no length
            case 0xD8, 0xD9, 0xDA, 0x00:
                return .invalid  // a second SOI, the end, or scan data before any frame header
            default:
                break
            }
            guard i + 2 <= b.count else { return .needMore }
            let length = Int(b[i]) << 8 | Int(b[i + 1])
            guard length >= 2 else { return .invalid }
            guard i + length <= b.count else { return .needMore }
            let segment = b[(i + 2)..<(i + length)]
            switch marker {
            case 0xC0...0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                guard segment.count >= 6 else { return .invalid }
                let s = segment.startIndex
                let height = Int(b[s + 1]) << 8 | Int(b[s + 2])
                let width = Int(b[s + 3]) << 8 | Int(b[s + 4])
                guard width > 0, height > 0 else { return .invalid }
                return .header(ImageHeader(kind: .jpeg, width: width, height: height, orientation: orientation))
            case 0xE1:
                if let o = exifOrientation(Array(segment)) { orientation = o }
            default:
                break
            }
            i += length
        }
    }

    /// The orientation tag (0x0112) of IFD0 in an APP1 segment body, or nil.
    static func exifOrientation(_ s: [UInt8]) -> Int? {
        let magic: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]  // "Exif\0\0"
        guard s.count >= 14, Array(s[0..<6]) == magic else { return nil }
        let t = Array(s[6...])  // the TIFF structure; offsets are relative to it
        let little: Bool
        switch (t[0], t[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ o: Int) -> Int? {
            guard o >= 0, o + 2 <= t.count else { return nil }
            return little ? Int(t[o]) | Int(t[o + 1]) << 8 : Int(t[o]) << 8 | Int(t[o + 1])
        }
        func u32(_ o: Int) -> Int? {
            guard let a = u16(o), let b = u16(o + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for n in 0..<min(count, 512) {
            let entry = ifd + 2 + 12 * n
            guard let tag = u16(entry) else { return nil }
            if tag == 0x0112 {
                guard u16(entry + 2) == 3, let value = u16(entry + 8), (1...8).contains(value) else { return nil }
                return value
            }
        }
        return nil
    }

    /// Parses a PNG prefix: the signature and the IHDR chunk.
    static func png(_ b: [UInt8]) -> Parse {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard b.count >= 24 else {
            return b.prefix(8).elementsEqual(signature.prefix(b.count)) ? .needMore : .invalid
        }
        guard Array(b[0..<8]) == signature, Array(b[12..<16]) == Array("IHDR".utf8) else { return .invalid }
        func u32(_ o: Int) -> Int { Int(b[o]) << 24 | Int(b[o + 1]) << 16 | Int(b[o + 2]) << 8 | Int(b[o + 3]) }
        let width = u32(16)
        let height = u32(20)
        guard width > 0, height > 0 else { return .invalid }
        return .header(ImageHeader(kind: .png, width: width, height: height))
    }
}
