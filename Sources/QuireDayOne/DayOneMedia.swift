/// The four kinds of media a Day One entry lists (`Spec/import.md §3.5`).
public enum DayOneMediaKind: String, CaseIterable, Sendable {
    /// `photos[]`, files in `photos/`, linked as `dayone-moment://ID`.
    case photos
    /// `videos[]`, files in `videos/`, linked as `dayone-moment:/video/ID`.
    case videos
    /// `audios[]`, files in `audios/`, linked as `dayone-moment:/audio/ID`.
    case audios
    /// `pdfAttachments[]`, files in `pdfs/`, linked as `dayone-moment:/pdfAttachment/ID`.
    case pdfAttachments

    /// The entry key holding the list.
    public var listKey: String { rawValue }

    /// The export folder holding the files.
    public var folder: String {
        switch self {
        case .photos: "photos"
        case .videos: "videos"
        case .audios: "audios"
        case .pdfAttachments: "pdfs"
        }
    }

    /// The text of a link up to the identifier.
    public var linkPrefix: String {
        switch self {
        case .photos: "dayone-moment://"
        case .videos: "dayone-moment:/video/"
        case .audios: "dayone-moment:/audio/"
        case .pdfAttachments: "dayone-moment:/pdfAttachment/"
        }
    }

    /// The extension tried when no file with the md5 is found by name
    /// alone, from the item's `type` (or `format` for audio).
    package func fallbackExtension(type: String?) -> String {
        switch self {
        case .photos: type ?? "jpeg"
        case .videos: type ?? "mov"
        case .audios: "m4a"
        case .pdfAttachments: "pdf"
        }
    }

    /// The kind for a media type, for attachments that did not come from Day One.
    package static func forMediaType(_ type: String) -> DayOneMediaKind {
        if type.hasPrefix("video/") { return .videos }
        if type.hasPrefix("audio/") { return .audios }
        if type == "application/pdf" { return .pdfAttachments }
        return .photos
    }
}

/// Media types for file extensions, and back.
package enum MediaTypes {
    package static let byExtension: [String: String] = [
        "jpeg": "image/jpeg", "jpg": "image/jpeg", "png": "image/png", "gif": "image/gif", "heic": "image/heic",
        "heif": "image/heif", "webp": "image/webp", "tiff": "image/tiff", "tif": "image/tiff", "bmp": "image/bmp",
        "mp4": "video/mp4", "mov": "video/quicktime", "m4v": "video/x-m4v", "3gp": "video/3gpp",
        "m4a": "audio/mp4", "aac": "audio/aac", "mp3": "audio/mpeg", "wav": "audio/wav", "caf": "audio/x-caf",
        "ogg": "audio/ogg", "pdf": "application/pdf",
    ]

    package static func forExtension(_ ext: String) -> String { byExtension[ext.lowercased()] ?? "application/octet-stream" }

    package static func fileExtension(for type: String) -> String {
        switch type {
        case "image/jpeg": "jpeg"
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/heic": "heic"
        case "video/mp4": "mp4"
        case "video/quicktime": "mov"
        case "audio/mp4": "m4a"
        case "audio/mpeg": "mp3"
        case "audio/aac": "aac"
        case "application/pdf": "pdf"
        default: byExtension.first(where: { $0.value == type })?.key ?? "bin"
        }
    }
}

/// One `dayone-moment:` link found in a text.
package struct MomentLink {
    /// UTF-8 byte range of the whole link (`dayone-moment:…ID`).
    package var range: Range<Int>
    package var kind: DayOneMediaKind
    package var identifier: String

    /// Every moment link in `text`, in order.
    package static func find(in text: String) -> [MomentLink] {
        let b = Array(text.utf8)
        let marker = Array("dayone-moment:".utf8)
        var out: [MomentLink] = []
        var i = 0
        while i + marker.count <= b.count {
            guard b[i] == marker[0], b[i..<i + marker.count].elementsEqual(marker) else {
                i += 1
                continue
            }
            let afterMarker = i + marker.count
            var matched: (DayOneMediaKind, Int)?
            for kind in DayOneMediaKind.allCases {
                let rest = Array(kind.linkPrefix.utf8.dropFirst(marker.count))
                if afterMarker + rest.count <= b.count, b[afterMarker..<afterMarker + rest.count].elementsEqual(rest) {
                    if matched == nil || rest.count > matched!.1 { matched = (kind, rest.count) }
                }
            }
            guard let (kind, restCount) = matched else {
                i = afterMarker
                continue
            }
            var j = afterMarker + restCount
            let idStart = j
            while j < b.count, isIdentifierByte(b[j]) { j += 1 }
            if j > idStart {
                out.append(MomentLink(range: i..<j, kind: kind, identifier: String(decoding: b[idStart..<j], as: UTF8.self)))
            }
            i = max(j, afterMarker)
        }
        return out
    }

    package static func isIdentifierByte(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || c == UInt8(ascii: "-")
            || c == UInt8(ascii: "_")
    }
}

/// Replaces byte ranges of `text` (ascending, not overlapping).
package func replacing(_ text: String, _ replacements: [(Range<Int>, String)]) -> String {
    guard !replacements.isEmpty else { return text }
    let b = Array(text.utf8)
    var out: [UInt8] = []
    out.reserveCapacity(b.count)
    var at = 0
    for (r, s) in replacements {
        out += b[at..<r.lowerBound]
        out += Array(s.utf8)
        at = r.upperBound
    }
    out += b[at...]
    return String(decoding: out, as: UTF8.self)
}

/// One link to a Day One entry found in a text: `dayone2://view?entryId=ID`
/// or the older `dayone://view?entryId=ID` (ID: ASCII letters, digits, `-`).
package struct EntryLink {
    /// UTF-8 byte range of the link (scheme to the end of the id).
    package var range: Range<Int>
    /// The link as written, up to the end of the id.
    package var url: String
    /// The id of the entry it names.
    package var uuid: String
    /// True when it stands in the text by itself: neither a link's
    /// destination (`[text](…)`) nor an autolink (`<…>`).
    package var isBare: Bool

    static let prefixes = ["dayone2://view?entryId=", "dayone://view?entryId="].map { Array($0.utf8) }

    /// Every entry link in `text`, in order.
    package static func find(in text: String) -> [EntryLink] {
        let b = Array(text.utf8)
        var out: [EntryLink] = []
        var i = 0
        while i < b.count {
            guard b[i] == UInt8(ascii: "d"),
                let p = prefixes.first(where: { i + $0.count <= b.count && b[i..<i + $0.count].elementsEqual($0) })
            else {
                i += 1
                continue
            }
            var j = i + p.count
            while j < b.count, MomentLink.isIdentifierByte(b[j]) { j += 1 }
            guard j > i + p.count else {
                i += p.count
                continue
            }
            let destination = i >= 2 && b[i - 1] == UInt8(ascii: "(") && b[i - 2] == UInt8(ascii: "]")
            let autolink = i >= 1 && b[i - 1] == UInt8(ascii: "<") && j < b.count && b[j] == UInt8(ascii: ">")
            out.append(
                EntryLink(
                    range: i..<j, url: String(decoding: b[i..<j], as: UTF8.self), uuid: String(decoding: b[i + p.count..<j], as: UTF8.self),
                    isBare: !destination && !autolink))
            i = j
        }
        return out
    }
}
