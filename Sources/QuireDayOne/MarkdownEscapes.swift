/// The backslash escapes Day One's Apple apps add to exported Markdown, and
/// their exact reversal (`Spec/import.md §5`).
public enum MarkdownEscapes {
    /// Removes the backslash escapes that do not change how the Markdown
    /// renders: a backslash is removed only before an ASCII punctuation
    /// character (CommonMark §2.4), left to right, and it is kept where it
    /// is needed — before `*` `_` `` ` `` `[` `]` `<` `>` `&` `|` `~`, before
    /// `!` followed by `[`, before `\` when the next character is
    /// punctuation, and at the start of a line before a block marker (`#`
    /// `>` `-` `+` `*` `=`, or the `.`/`)` after a list number).
    ///
    /// Inside code spans, fenced code blocks and indented code blocks a
    /// backslash does not escape in Markdown, so nothing is removed there,
    /// unless `undoInCode`: Day One's Apple apps escape code too, and then
    /// exactly one level is undone inside code — every backslash before
    /// ASCII punctuation goes, `\\` becoming `\` (`Spec/import.md §5`).
    ///
    /// - Parameter keepNeeded: false removes every escape outside code (the
    ///   plain text for search and titles, not a Markdown body).
    /// - Returns: the text, and the UTF-8 byte offsets in the returned text
    ///   where a backslash was removed (ascending), from which
    ///   ``restore(_:at:)`` rebuilds the input exactly.
    public static func remove(_ text: String, keepNeeded: Bool = true, undoInCode: Bool = false) -> (text: String, removedAt: [Int]) {
        let r = scan(text, mode: .remove(keepNeeded: keepNeeded, undoInCode: undoInCode))
        return (r.text, r.removedAt)
    }

    /// The code of `text` (each code span's content, each fenced or
    /// indented block's lines) as exported and with one escaping level
    /// undone, for the pieces that hold an escape: what ``remove(_:keepNeeded:undoInCode:)``
    /// would change inside code.
    public static func escapedCode(_ text: String) -> [(exported: String, undone: String)] {
        scan(text, mode: .remove(keepNeeded: true, undoInCode: true)).code
    }

    /// Adds one escaping level inside code, the inverse of the undoing in
    /// ``remove(_:keepNeeded:undoInCode:)`` for Day One's Apple dialect:
    /// every backslash in a code span or code block is doubled; nothing
    /// outside code changes.
    public static func escapeCode(_ text: String) -> String {
        scan(text, mode: .escapeCode).text
    }

    enum Mode {
        case remove(keepNeeded: Bool, undoInCode: Bool)
        case escapeCode
    }

    /// One left-to-right pass over the lines of `text` that tells code
    /// (spans, fenced and indented blocks) from the rest, as CommonMark
    /// does for the cases journals use, and applies `mode`.
    static func scan(_ text: String, mode: Mode) -> (text: String, removedAt: [Int], code: [(exported: String, undone: String)]) {
        let b = Array(text.utf8)
        guard b.contains(UInt8(ascii: "\\")) else { return (text, [], []) }
        var out: [UInt8] = []
        out.reserveCapacity(b.count + 16)
        var removed: [Int] = []
        var code: [(String, String)] = []
        var keepNeeded = true
        var undoInCode = false
        var escapingCode = false
        switch mode {
        case .remove(let k, let u):
            keepNeeded = k
            undoInCode = u
        case .escapeCode: escapingCode = true
        }
        let removing = !escapingCode
        /// Copies the code bytes `r`, undoing or adding one escaping level as the mode says.
        func codeBytes(_ r: Range<Int>) {
            if escapingCode {
                for c in b[r] {
                    out.append(c)
                    if c == UInt8(ascii: "\\") { out.append(c) }
                }
                return
            }
            guard undoInCode, b[r].contains(UInt8(ascii: "\\")) else {
                out += b[r]
                return
            }
            let start = out.count
            var changed = false
            var j = r.lowerBound
            while j < r.upperBound {
                if b[j] == UInt8(ascii: "\\"), j + 1 < r.upperBound, b[j + 1] != 0x0A, isASCIIPunctuation(b[j + 1]) {
                    removed.append(out.count)
                    out.append(b[j + 1])
                    changed = true
                    j += 2
                } else {
                    out.append(b[j])
                    j += 1
                }
            }
            if changed { code.append((String(decoding: b[r], as: UTF8.self), String(decoding: out[start...], as: UTF8.self))) }
        }
        var i = 0
        var fence: (char: UInt8, length: Int)?
        var block: (start: Int, end: Int)?  // the lines of the fenced or indented block being read
        func endBlock() {
            if let bl = block { codeBytes(bl.start..<bl.end) }
            block = nil
        }
        var previousBlank = true
        var previousIndentedCode = false
        while i < b.count {
            // One line at a time: [i, lineEnd) plus its newline.
            var lineEnd = i
            while lineEnd < b.count, b[lineEnd] != 0x0A { lineEnd += 1 }
            let next = lineEnd < b.count ? lineEnd + 1 : lineEnd
            let line = b[i..<lineEnd]
            let isBlank = line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
            if let f = fence {
                if let c = fenceRun(line), c.char == f.char, c.length >= f.length,
                    c.rest.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D })
                {
                    endBlock()
                    fence = nil
                    out += b[i..<next]
                } else {
                    block = (block?.start ?? i, next)
                }
                i = next
                previousBlank = false
                continue
            }
            if let c = fenceRun(line), c.char != UInt8(ascii: "`") || !c.rest.contains(UInt8(ascii: "`")) {
                endBlock()
                fence = (c.char, c.length)
                out += b[i..<next]
                i = next
                previousBlank = false
                continue
            }
            let indented = line.starts(with: [0x20, 0x20, 0x20, 0x20]) || line.first == 0x09
            if indented, !isBlank, previousBlank || previousIndentedCode {
                // The indentation is not code; the rest of the line is.
                let indent = line.first == 0x09 ? 1 : 4
                endBlock()
                out += b[i..<i + indent]
                codeBytes(i + indent..<next)
                i = next
                previousIndentedCode = true
                previousBlank = false
                continue
            }
            endBlock()
            if !isBlank { previousIndentedCode = false }
            previousBlank = isBlank
            // Inline: escapes and code spans (which may run over lines of the paragraph).
            var j = i
            var stop = next
            while j < stop {
                let c = b[j]
                if c == UInt8(ascii: "\\"), j + 1 < b.count, b[j + 1] != 0x0A, isASCIIPunctuation(b[j + 1]) {
                    if !removing || (keepNeeded && isNeeded(b, at: j, lineStart: i)) {
                        out.append(c)
                    } else {
                        removed.append(out.count)
                    }
                    out.append(b[j + 1])
                    j += 2
                    if j > stop { stop = j }
                } else if c == UInt8(ascii: "`") {
                    var run = 0
                    while j + run < b.count, b[j + run] == UInt8(ascii: "`") { run += 1 }
                    if let close = closingBackticks(b, from: j + run, length: run) {
                        out += b[j..<j + run]
                        codeBytes(j + run..<close - run)
                        out += b[close - run..<close]
                        j = close
                        if j > stop {
                            // The span ran into later lines: continue after its line.
                            var e = j
                            while e < b.count, b[e] != 0x0A { e += 1 }
                            stop = e < b.count ? e + 1 : e
                        }
                    } else {
                        out += b[j..<j + run]
                        j += run
                    }
                } else {
                    out.append(c)
                    j += 1
                }
            }
            i = stop
        }
        endBlock()
        return (String(decoding: out, as: UTF8.self), removed, code)
    }

    /// Puts back the backslashes ``remove(_:)`` took out: `offsets` are UTF-8
    /// byte offsets into `text`, ascending. Offsets past the end are ignored.
    public static func restore(_ text: String, at offsets: [Int]) -> String {
        guard !offsets.isEmpty else { return text }
        let b = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(b.count + offsets.count)
        var k = 0
        for (i, c) in b.enumerated() {
            while k < offsets.count, offsets[k] == i {
                out.append(UInt8(ascii: "\\"))
                k += 1
            }
            out.append(c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True when the escape at `j` (a backslash before punctuation) changes
    /// how the line renders, so it must stay.
    static func isNeeded(_ b: [UInt8], at j: Int, lineStart: Int) -> Bool {
        let x = b[j + 1]
        switch x {
        case UInt8(ascii: "*"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "<"),
            UInt8(ascii: ">"), UInt8(ascii: "&"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        case UInt8(ascii: "!"):
            return j + 2 < b.count && b[j + 2] == UInt8(ascii: "[")
        case UInt8(ascii: "\\"):
            return j + 2 < b.count && isASCIIPunctuation(b[j + 2])
        default:
            break
        }
        // At the start of a line (after up to 3 spaces, or after a list number).
        var k = lineStart
        var spaces = 0
        while k < j, b[k] == 0x20, spaces < 3 {
            k += 1
            spaces += 1
        }
        if k == j { return [UInt8(ascii: "#"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "=")].contains(x) }
        if x == UInt8(ascii: ".") || x == UInt8(ascii: ")") {
            let digits = b[k..<j]
            return !digits.isEmpty && digits.count <= 9 && digits.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        }
        return false
    }

    /// ASCII punctuation as CommonMark defines it: `!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~`.
    static func isASCIIPunctuation(_ c: UInt8) -> Bool {
        (0x21...0x2F).contains(c) || (0x3A...0x40).contains(c) || (0x5B...0x60).contains(c) || (0x7B...0x7E).contains(c)
    }

    /// A fence line: up to 3 spaces, then 3 or more of one of ``` ` ``` or `~`.
    private static func fenceRun(_ line: ArraySlice<UInt8>) -> (char: UInt8, length: Int, rest: ArraySlice<UInt8>)? {
        var i = line.startIndex
        var spaces = 0
        while i < line.endIndex, line[i] == 0x20, spaces < 4 {
            i += 1
            spaces += 1
        }
        guard spaces < 4, i < line.endIndex, line[i] == UInt8(ascii: "`") || line[i] == UInt8(ascii: "~") else { return nil }
        let c = line[i]
        var n = 0
        while i < line.endIndex, line[i] == c {
            i += 1
            n += 1
        }
        guard n >= 3 else { return nil }
        return (c, n, line[i...])
    }

    /// The index just past a run of exactly `length` backticks closing a
    /// code span that opened before `from`, within the paragraph (a blank
    /// line ends the search).
    private static func closingBackticks(_ b: [UInt8], from: Int, length: Int) -> Int? {
        var j = from
        while j < b.count {
            if b[j] == 0x0A {
                var k = j + 1
                while k < b.count, b[k] == 0x20 || b[k] == 0x09 || b[k] == 0x0D { k += 1 }
                if k >= b.count || b[k] == 0x0A { return nil }
            }
            if b[j] == UInt8(ascii: "`") {
                var run = 0
                while j + run < b.count, b[j + run] == UInt8(ascii: "`") { run += 1 }
                if run == length { return j + run }
                j += run
            } else {
                j += 1
            }
        }
        return nil
    }
}
