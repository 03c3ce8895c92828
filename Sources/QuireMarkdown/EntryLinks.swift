/// Quire's two link schemes inside an entry's Markdown text.
///
/// - `quire-attachment://<reference id in hex>`: one of the entry's own
///   attachments (`Spec/records.md §3.6`).
/// - `quire-entry://<entry id, 32 hex digits>`: another entry of the same
///   vault (`Spec/import.md §3.4`); exporters turn it into a link inside
///   the book or folder when that entry is exported too.
public enum EntryLinks {
    /// The text of an attachment link before the reference id in hex.
    public static let attachmentPrefix = "quire-attachment://"
    /// The text of an entry link before the entry id in hex.
    public static let entryPrefix = "quire-entry://"

    /// `quire-entry://` followed by the lowercase hex of `id` (16 bytes).
    public static func entryLink(_ id: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = Array(entryPrefix.utf8)
        for b in id {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The 16 bytes of the entry id a link destination names when it is
    /// exactly `quire-entry://` and 32 hex digits (either case), else nil.
    public static func entryID(inLink url: String) -> [UInt8]? {
        let u = Array(url.utf8)
        let p = Array(entryPrefix.utf8)
        guard u.count == p.count + 32, u.starts(with: p) else { return nil }
        return idBytes(u[p.count...])
    }

    /// Every entry link in `text`, in order: the UTF-8 byte range of the
    /// whole link and the id's 16 bytes. A prefix not followed by exactly
    /// 32 hex digits (and then no further hex digit) is not a link.
    public static func entryLinks(in text: String) -> [(range: Range<Int>, id: [UInt8])] {
        let b = Array(text.utf8)
        let p = Array(entryPrefix.utf8)
        var out: [(Range<Int>, [UInt8])] = []
        var i = 0
        while i + p.count + 32 <= b.count {
            guard b[i] == p[0], b[i..<i + p.count].elementsEqual(p) else {
                i += 1
                continue
            }
            let end = i + p.count + 32
            if let id = idBytes(b[i + p.count..<end]), end == b.count || nibble(b[end]) == nil {
                out.append((i..<end, id))
                i = end
            } else {
                i += p.count
            }
        }
        return out
    }

    /// True for outside link destinations a book may follow: `http:`,
    /// `https:` and `mailto:` (any case), with no space or control
    /// character. Every exporter applies this one rule.
    public static func isSafeOutsideLink(_ url: String) -> Bool {
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") || lower.hasPrefix("mailto:") else { return false }
        return !url.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
    }

    static func idBytes(_ hex: ArraySlice<UInt8>) -> [UInt8]? {
        guard hex.count == 32 else { return nil }
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            guard let h = nibble(hex[i]), let l = nibble(hex[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }

    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}
