import CPangoCairo
@_spi(Format) import Quire

/// A photo attachment placed in the book: its header (size, orientation)
/// read in the measuring pass, its bytes read again in the drawing pass.
struct Photo {
    let reference: AttachmentReference
    let header: ImageHeader

    /// Attachments larger than this are not embedded (a placeholder line is
    /// printed instead): bytes. The drawing pass holds one photo at a time.
    static let maxByteCount: UInt64 = 64 << 20
    /// JPEGs with more pixels are not embedded. cairo needs an image surface
    /// of the JPEG's size; its pixels are never written (the JPEG bytes are
    /// embedded), so the surface costs address space, not memory.
    static let maxJPEGPixels = 120_000_000
    /// PNGs with more pixels are not embedded: a PNG is decoded (4 bytes a pixel).
    static let maxPNGPixels = 16_000_000
    /// How far into a JPEG the frame header may be looked for: bytes.
    static let maxHeaderSearch = 1 << 20

    /// The media types drawn as photos.
    static func kind(of reference: AttachmentReference) -> ImageHeader.Kind? {
        switch reference.mediaType.lowercased() {
        case "image/jpeg", "image/jpg", "image/pjpeg": .jpeg
        case "image/png": .png
        default: nil
        }
    }

    /// Reads just enough of the attachment to know its size; nil when it is
    /// missing, damaged, too large or not the image its type says.
    static func load(_ reference: AttachmentReference, from vault: Vault) -> Photo? {
        guard let kind = kind(of: reference) else { return nil }
        guard let reader = try? vault.openAttachment(reference.blob), reader.manifest.byteCount <= maxByteCount else { return nil }
        var prefix: [UInt8] = []
        for index in 0..<reader.chunkCount {
            guard let chunk = try? reader.chunk(index) else { return nil }
            prefix += chunk
            switch kind == .jpeg ? ImageHeader.jpeg(prefix) : ImageHeader.png(prefix) {
            case .header(let header):
                let pixels = header.width * header.height
                guard pixels <= (kind == .jpeg ? maxJPEGPixels : maxPNGPixels) else { return nil }
                return Photo(reference: reference, header: header)
            case .invalid:
                return nil
            case .needMore:
                guard prefix.count < maxHeaderSearch else { return nil }
            }
        }
        return nil
    }

    /// The size the photo takes on the page, in points: 150 pixels an inch,
    /// shrunk to the text width and to 60% of the text height.
    var size: (width: Double, height: Double) {
        var w = Double(header.displayWidth) * 72 / 150
        var h = Double(header.displayHeight) * 72 / 150
        let maxW = Page.textWidth
        let maxH = Page.textHeight * 0.6
        if w > maxW {
            h *= maxW / w
            w = maxW
        }
        if h > maxH {
            w *= maxH / h
            h = maxH
        }
        return (max(w, 1), max(h, 1))
    }

    /// The whole attachment, streamed from the vault; nil when it cannot be read.
    func bytes(from vault: Vault) -> [UInt8]? {
        guard let reader = try? vault.openAttachment(reference.blob) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(Int(reader.manifest.byteCount))
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n: Int
            do { n = try buffer.withUnsafeMutableBytes { (b) throws(FormatError) -> Int in try reader.readChecked(into: b) } } catch {
                return nil
            }
            if n == 0 { break }
            out += buffer[0..<n]
        }
        return out
    }

    /// A cairo image surface for the photo: for a JPEG an undrawn surface
    /// of its size carrying the JPEG bytes as MIME data (cairo-pdf embeds
    /// them as they are, DCTDecode); for a PNG the decoded image. Either
    /// carries the blob id (hex) as `CAIRO_MIME_TYPE_UNIQUE_ID`, so cairo-pdf
    /// writes one image object per blob and every later surface of the same
    /// blob, on any page, refers to it. Nil when cairo refuses it. The
    /// caller destroys the surface.
    func surface(_ bytes: [UInt8]) -> OpaquePointer? {
        guard let surface = imageSurface(bytes) else { return nil }
        return attach(CAIRO_MIME_TYPE_UNIQUE_ID, Array(hex(reference.blob.bytes).utf8), to: surface)
    }

    /// Gives `surface` a copy of `bytes` as its MIME data of `type` (cairo
    /// frees the copy with the surface). Returns the surface, or nil after
    /// destroying it when cairo refuses.
    private func attach(_ type: String, _ bytes: [UInt8], to surface: OpaquePointer) -> OpaquePointer? {
        let data = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        bytes.withUnsafeBytes { if let base = $0.baseAddress { data.copyMemory(from: base, byteCount: bytes.count) } }
        let status = cairo_surface_set_mime_data(
            surface, type, data.assumingMemoryBound(to: UInt8.self), UInt(bytes.count), { $0?.deallocate() }, data)
        guard status == CAIRO_STATUS_SUCCESS else {
            data.deallocate()
            cairo_surface_destroy(surface)
            return nil
        }
        return surface
    }

    private func imageSurface(_ bytes: [UInt8]) -> OpaquePointer? {
        switch header.kind {
        case .jpeg:
            guard let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(header.width), Int32(header.height)) else {
                return nil
            }
            guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
                cairo_surface_destroy(surface)
                return nil
            }
            return attach(CAIRO_MIME_TYPE_JPEG, bytes, to: surface)
        case .png:
            let source = PNGSource(bytes)
            let surface = withExtendedLifetime(source) {
                cairo_image_surface_create_from_png_stream(
                    { closure, data, length in
                        guard let closure, let data else { return CAIRO_STATUS_READ_ERROR }
                        let source = Unmanaged<PNGSource>.fromOpaque(closure).takeUnretainedValue()
                        return source.read(into: data, count: Int(length)) ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_READ_ERROR
                    }, Unmanaged.passUnretained(source).toOpaque())
            }
            guard let surface else { return nil }
            guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
                cairo_surface_destroy(surface)
                return nil
            }
            return surface
        }
    }

    /// The EXIF orientation as a cairo matrix from stored pixels to shown
    /// pixels (`width`×`height` stored).
    static func orientationMatrix(_ orientation: Int, width: Double, height w2: Double) -> cairo_matrix_t {
        let w = width
        let h = w2
        var m = cairo_matrix_t()
        switch orientation {
        case 2: cairo_matrix_init(&m, -1, 0, 0, 1, w, 0)  // mirror horizontally
        case 3: cairo_matrix_init(&m, -1, 0, 0, -1, w, h)  // rotate 180°
        case 4: cairo_matrix_init(&m, 1, 0, 0, -1, 0, h)  // mirror vertically
        case 5: cairo_matrix_init(&m, 0, 1, 1, 0, 0, 0)  // transpose
        case 6: cairo_matrix_init(&m, 0, 1, -1, 0, h, 0)  // rotate 90° clockwise
        case 7: cairo_matrix_init(&m, 0, -1, -1, 0, h, w)  // transverse
        case 8: cairo_matrix_init(&m, 0, -1, 1, 0, 0, w)  // rotate 90° counter-clockwise
        default: cairo_matrix_init_identity(&m)
        }
        return m
    }
}

extension Photo {
    /// Where the orientation matrix sends the stored pixel point (x, y) (for tests).
    static func oriented(_ orientation: Int, width: Double, height: Double, x: Double, y: Double) -> (Double, Double) {
        var m = orientationMatrix(orientation, width: width, height: height)
        var (px, py) = (x, y)
        cairo_matrix_transform_point(&m, &px, &py)
        return (px, py)
    }
}

/// Feeds PNG bytes to cairo's stream reader.
final class PNGSource {
    let bytes: [UInt8]
    var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(into data: UnsafeMutablePointer<UInt8>, count: Int) -> Bool {
        guard count <= bytes.count - offset else { return false }
        bytes.withUnsafeBufferPointer { src in
            data.update(from: src.baseAddress!.advanced(by: offset), count: count)
        }
        offset += count
        return true
    }
}
