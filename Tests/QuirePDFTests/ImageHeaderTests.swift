import Testing
@testable import QuirePDF

@Suite struct ImageHeaderTests {
    /// `photo.jpg` with an APP1 Exif segment carrying `orientation` inserted after SOI.
    static func oriented(_ orientation: UInt8, littleEndian: Bool) throws -> [UInt8] {
        let jpeg = try Fixtures.bytes("photo.jpg")
        let tiff: [UInt8] = littleEndian
            ? [0x49, 0x49, 0x2A, 0x00, 0x08, 0, 0, 0, 0x01, 0x00, 0x12, 0x01, 0x03, 0x00, 0x01, 0, 0, 0, orientation, 0, 0, 0, 0, 0, 0, 0]
            : [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 0x08, 0x00, 0x01, 0x01, 0x12, 0x00, 0x03, 0, 0, 0, 0x01, 0, orientation, 0, 0, 0, 0, 0, 0]
        let body: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = body.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + body + jpeg[2...]
    }

    @Test func readsTheFixtureJPEG() throws {
        let jpeg = try Fixtures.bytes("photo.jpg")
        #expect(ImageHeader.jpeg(jpeg) == .header(ImageHeader(kind: .jpeg, width: 100, height: 99, orientation: 1)))
    }

    @Test func readsExifOrientationBothByteOrders() throws {
        for little in [true, false] {
            for o: UInt8 in 1...8 {
                let parsed = ImageHeader.jpeg(try Self.oriented(o, littleEndian: little))
                #expect(parsed == .header(ImageHeader(kind: .jpeg, width: 100, height: 99, orientation: Int(o))))
            }
        }
        guard case .header(let h) = ImageHeader.jpeg(try Self.oriented(6, littleEndian: true)) else { Issue.record("no header"); return }
        #expect(h.displayWidth == 99 && h.displayHeight == 100)
        // Out-of-range orientation is ignored.
        #expect(ImageHeader.jpeg(try Self.oriented(9, littleEndian: true)) == .header(ImageHeader(kind: .jpeg, width: 100, height: 99)))
    }

    @Test func truncatedAndHostileHeaders() throws {
        let jpeg = try Fixtures.bytes("photo.jpg")
        #expect(ImageHeader.jpeg([]) == .needMore)
        #expect(ImageHeader.jpeg(Array(jpeg[0..<1])) == .needMore)
        #expect(ImageHeader.jpeg(Array(jpeg[0..<30])) == .needMore)
        #expect(ImageHeader.jpeg([0x89, 0x50, 0x4E, 0x47]) == .invalid)
        // A segment length below 2, scan data before a frame header, EOI.
        #expect(ImageHeader.jpeg([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01]) == .invalid)
        #expect(ImageHeader.jpeg([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02]) == .invalid)
        #expect(ImageHeader.jpeg([0xFF, 0xD8, 0xFF, 0xD9]) == .invalid)
        // A zero-sized frame.
        #expect(ImageHeader.jpeg([0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x08, 8, 0, 0, 0, 5, 1]) == .invalid)
        // An Exif IFD offset far past the segment: no orientation, no crash.
        let bad: [UInt8] = Array("Exif".utf8) + [0, 0, 0x49, 0x49, 0x2A, 0x00, 0xFF, 0xFF, 0xFF, 0x7F]
        #expect(ImageHeader.exifOrientation(bad) == nil)
        // Every prefix of the oriented JPEG: needMore until the frame header, never a wrong answer.
        let oriented = try Self.oriented(6, littleEndian: false)
        for n in 0..<oriented.count {
            let r = ImageHeader.jpeg(Array(oriented[0..<n]))
            #expect(r == .needMore || r == .header(ImageHeader(kind: .jpeg, width: 100, height: 99, orientation: 6)))
        }
    }

    @Test func readsPNGHeader() {
        #expect(ImageHeader.png(PNGFixture.bytes) == .header(ImageHeader(kind: .png, width: 4, height: 3)))
        #expect(ImageHeader.png(Array(PNGFixture.bytes[0..<10])) == .needMore)
        #expect(ImageHeader.png(Array("GIF89a-and-more-bytes-here".utf8)) == .invalid)
    }

    /// Each orientation maps the stored image onto the shown rectangle.
    @Test func orientationMatricesMapCornersOntoTheShownRectangle() {
        let w = 100.0, h = 99.0
        let expectedTopLeft: [Int: (Double, Double)] = [
            1: (0, 0), 2: (w, 0), 3: (w, h), 4: (0, h), 5: (0, 0), 6: (h, 0), 7: (h, w), 8: (0, w),
        ]
        for o in 1...8 {
            let (dw, dh) = o >= 5 ? (h, w) : (w, h)
            var xs: [Double] = [], ys: [Double] = []
            for (x, y) in [(0.0, 0.0), (w, 0), (0, h), (w, h)] {
                let (px, py) = Photo.oriented(o, width: w, height: h, x: x, y: y)
                xs.append(px); ys.append(py)
            }
            #expect(xs.min() == 0 && xs.max() == dw && ys.min() == 0 && ys.max() == dh, "orientation \(o)")
            let origin = Photo.oriented(o, width: w, height: h, x: 0, y: 0)
            #expect(origin == expectedTopLeft[o]!, "orientation \(o)")
        }
    }
}

/// A 4×3 red RGB PNG, made with Python's zlib.
enum PNGFixture {
    static let bytes: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x04,
        0x00, 0x00, 0x00, 0x03, 0x08, 0x02, 0x00, 0x00, 0x00, 0x3B, 0x96, 0x39, 0x91, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41,
        0x54, 0x78, 0x9C, 0x63, 0x38, 0x21, 0x27, 0x07, 0x47, 0x0C, 0x38, 0x39, 0x00, 0xF5, 0xC7, 0x0C, 0x31, 0x07, 0xEB, 0xAD,
        0x99, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]
}
