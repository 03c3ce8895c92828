// The report: sections with tables and targets, printed as aligned text and
// written as Markdown (BENCHMARKS.md).

/// A table of strings; the first column is left-aligned, the others right-aligned.
struct Table {
    var headers: [String]
    var rows: [[String]] = []
    /// Left-align every column (for tables of text rather than figures).
    var allLeft = false

    init(_ headers: [String]) { self.headers = headers }

    mutating func row(_ cells: String...) { rows.append(cells) }
    mutating func row(_ cells: [String]) { rows.append(cells) }

    func text(indent: String = "  ") -> String {
        var widths = headers.map(\.count)
        for r in rows {
            for (i, c) in r.enumerated() where i < widths.count { widths[i] = max(widths[i], c.count) }
        }
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for (i, w) in widths.enumerated() {
                let c = i < cells.count ? cells[i] : ""
                let pad = String(repeating: " ", count: max(0, w - c.count))
                parts.append(i == 0 ? c + pad : pad + c)
            }
            return indent + parts.joined(separator: "  ")
        }
        var out = [line(headers), indent + widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
        for r in rows { out.append(line(r)) }
        return out.joined(separator: "\n")
    }

    func markdown() -> String {
        func esc(_ s: String) -> String { s.replacingPipes() }
        var out = ["| " + headers.map(esc).joined(separator: " | ") + " |"]
        out.append("|" + headers.indices.map { $0 == 0 || allLeft ? ":---|" : "---:|" }.joined())
        for r in rows { out.append("| " + r.map(esc).joined(separator: " | ") + " |") }
        return out.joined(separator: "\n")
    }
}

extension String {
    func replacingPipes() -> String {
        var out = ""
        for c in self { if c == "|" { out += "\\|" } else { out.append(c) } }
        return out
    }
}

/// A target from the issue and whether this run meets it.
struct Target {
    let what: String
    let target: String
    let measured: String
    /// nil when the run was too small to judge (for example `--quick`).
    let met: Bool?
    /// Said after the verdict, for example when the figure is within the noise of the goal.
    var qualifier: String? = nil

    var verdict: String {
        let base = plainVerdict
        return qualifier.map { "\(base) (\($0))" } ?? base
    }

    private var plainVerdict: String {
        switch met {
        case .some(true): "met"
        case .some(false): "NOT met"
        case .none: "not judged"
        }
    }
}

/// One benchmark's results.
struct Section {
    let name: String  // the --only name
    let title: String
    var explanation: [String] = []
    var tables: [(caption: String, table: Table)] = []
    var targets: [Target] = []
    var notes: [String] = []

    init(name: String, title: String) {
        self.name = name
        self.title = title
    }

    func text() -> String {
        var out = ["", "== \(title) [\(name)]"]
        for (caption, table) in tables {
            if !caption.isEmpty { out.append("  \(caption)") }
            out.append(table.text())
            out.append("")
        }
        if !targets.isEmpty {
            var t = Table(["target", "goal", "measured", "verdict"])
            for x in targets { t.row(x.what, x.target, x.measured, x.verdict) }
            out.append(t.text())
        }
        for n in notes { out.append("  note: \(n)") }
        return out.joined(separator: "\n")
    }

    func markdown() -> String {
        var out = ["## \(title)", ""]
        for p in explanation {
            out.append(p)
            out.append("")
        }
        for (caption, table) in tables {
            if !caption.isEmpty {
                out.append("**\(caption)**")
                out.append("")
            }
            out.append(table.markdown())
            out.append("")
        }
        if !targets.isEmpty {
            var t = Table(["Target", "Goal", "Measured", "Verdict"])
            t.allLeft = true
            for x in targets { t.row(x.what, x.target, x.measured, x.met == false ? "**" + x.verdict + "**" : x.verdict) }
            out.append(t.markdown())
            out.append("")
        }
        for n in notes { out.append("- " + n) }
        if !notes.isEmpty { out.append("") }
        return out.joined(separator: "\n")
    }
}

/// Everything one run produced.
struct Report {
    var machine: MachineInfo
    var quick: Bool
    var command: String
    var sections: [Section] = []
    var totalSeconds: Double = 0
    var loadAtEnd = ""
    /// Sections another tool writes into the same file (the format comparison
    /// of `make bench-compare`), carried over as they are, after the summary.
    var carried: [String] = []

    /// Headings of the sections `--write` carries over from the file it replaces.
    static let carriedHeadings = ["## Format 2 against format 1"]

    /// The carried sections of an existing report: each from its heading to
    /// the next `## ` heading.
    static func carriedSections(of text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var out: [String] = []
        for heading in carriedHeadings {
            guard let start = lines.firstIndex(where: { $0 == heading }) else { continue }
            var end = start + 1
            while end < lines.count && !lines[end].hasPrefix("## ") { end += 1 }
            out.append(lines[start..<end].joined(separator: "\n").trimmingSpaces())
        }
        return out
    }

    func markdown() -> String {
        var out: [String] = []
        out.append("# Quire benchmarks")
        out.append("")
        out.append(
            "Figures from one run of `quire-bench`\(quick ? " **in `--quick` mode (smoke run: reduced sizes, targets not judged)**" : ""). "
                + "Regenerate them with `make bench`, which runs `swift run -c release quire-bench --write BENCHMARKS.md` "
                + "(it keeps the section \"Format 2 against format 1\", which `make bench-compare` writes). "
                + "The benchmark only measures and reports; it never fails because of a timing.")
        out.append("")
        var m = Table(["Machine", ""])
        m.allLeft = true
        m.row("Date", machine.date)
        m.row("CPU", "\(machine.cpuModel) (`nproc` = \(machine.processors))")
        m.row("Memory", machine.memory)
        m.row("Kernel", machine.kernel)
        m.row("Swift", machine.swiftVersion)
        m.row("libsodium / zstd", "\(machine.sodiumVersion) / \(machine.zstdVersion)")
        m.row("Temporary files", "/tmp on \(machine.tmpFilesystem)")
        m.row("Command", "`\(command)`")
        m.row("Run time", fmt(totalSeconds, 0) + " s")
        m.row("Load average (1/5/15 min) at start / end", "\(machine.loadAtStart) / \(loadAtEnd)")
        out.append(m.markdown())
        out.append("")
        out.append(
            "Timings use `ProcessStats.monotonicNanoseconds()` (CLOCK_MONOTONIC). MB means 10⁶ bytes, MiB 2²⁰. "
                + "Each library figure is compared with the raw primitives (libsodium XChaCha20-Poly1305, zstd) measured in the same run "
                + "on the same bytes. Files live in a private directory under /tmp that is removed at the end; "
                + "they stay in the page cache, so reads are served from memory, not from the disk. "
                + "The machine may be shared with other work (see the load average), so timings carry noise; where sizes or "
                + "paths are compared, their runs are interleaved so that the noise falls on both sides alike.")
        out.append("")
        var summary = Table(["Benchmark", "Target", "Goal", "Measured", "Verdict"])
        summary.allLeft = true
        let ordered = sections.sorted { $0.title < $1.title }  // "1. …" to "4. …", the issue's order
        for s in ordered {
            for t in s.targets { summary.row(s.title, t.what, t.target, t.measured, t.met == false ? "**" + t.verdict + "**" : t.verdict) }
        }
        out.append("## Summary")
        out.append("")
        out.append(summary.markdown())
        out.append("")
        for c in carried {
            out.append(c)
            out.append("")
        }
        for s in ordered { out.append(s.markdown()) }
        return out.joined(separator: "\n")
    }
}
