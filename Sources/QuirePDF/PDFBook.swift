import CPangoCairo
@_spi(Format) public import Quire
public import QuireExport
import QuireSystem

/// What ``writePDFBook(_:to:filter:progress:)`` wrote.
public struct PDFBookReport: Sendable, Equatable {
    /// Entries printed.
    public var entries = 0
    /// Photos drawn (JPEG as is, PNG recompressed by cairo), one for each
    /// attachment reference shown: a photo that three entries show counts 3.
    public var photos = 0
    /// Distinct photos embedded in the file, by blob (``BlobID``): each is
    /// one image object however many entries show it, so a photo that three
    /// entries show counts 1.
    public var distinctPhotos = 0
    /// Attachments not shown as photos: other media types, and images that
    /// are damaged, unreadable or over the size limits (a line names each).
    public var attachmentsNotShown = 0
    /// Pages in the PDF, title page and contents included.
    public var pages = 0
    /// Size of the PDF in bytes.
    public var bytes: UInt64 = 0
    /// Glyphs pango found in no installed font (drawn as boxes), summed over
    /// every layout in the book, after the substitution counted in
    /// ``substitutedCharacters``. 0 when every character had a glyph.
    public var unknownGlyphs = 0
    /// Characters found in no installed font (private-use code points,
    /// rare ideographs) and printed as 〓 (U+3013 GETA MARK) instead, so
    /// the book never shows an empty box.
    public var substitutedCharacters = 0
    /// Markup strings pango refused and that were set as plain text instead;
    /// 0 unless the Markdown renderer has a bug.
    public var markupFallbacks = 0
    /// An empty report (every count 0).
    public init() {}
}

/// Why a PDF could not be written; reported as
/// ``ExportError/cannotWrite(path:reason:)``.
enum PDFBookError: Error {
    /// Creating, writing, syncing or renaming the file failed.
    case system(SystemError)
    /// cairo reported an error status (its message).
    case cairo(String)
    /// The caller cancelled the book (``QuireError/cancelled``).
    case cancelled

    var reason: String {
        switch self {
        // The C library's reason, without the temporary file's path.
        case .system(let e): e.reason
        case .cairo(let message): "cairo: \(message)"
        case .cancelled: QuireError.cancelled.description
        }
    }
}

/// Writes the entries `filter` selects as an A5 PDF book to `path`.
///
/// The report's `attachments` counts the distinct attachments written (by
/// blob, ``PDFBookReport/distinctPhotos``), as the other export formats
/// count them: a photo twelve entries show counts once, and is embedded
/// once.
///
/// The book has a title page (the journal name from the vault profile, the
/// date range and the entry count), a table of contents by year and month
/// with page numbers, then every entry under a heading with its date in
/// its own time zone, its Markdown text and its photos. See
/// ``writePDFBook(_:to:filter:progress:)`` for the details.
///
/// This form blocks its thread; apps call the `async` form.
///
/// - Throws: ``ExportError``: ``ExportError/vault(_:)`` when the entries
///   cannot be read, ``ExportError/cannotWrite(path:reason:)`` when the file
///   cannot be written or cairo fails; nothing is left at `path` on failure.
@_spi(Format) public func exportPDFBook(
    _ vault: Vault, to path: String, filter: ExportFilter = ExportFilter(), locale: String? = nil,
    progress: (ExportProgress) -> Void = { _ in }
) throws(ExportError) -> ExportReport {
    let book = try writePDFBook(vault, to: path, filter: filter, locale: locale, progress: progress)
    var report = ExportReport()
    report.entries = book.entries
    report.attachments = book.distinctPhotos
    report.bytes = book.bytes
    report.attachmentsNotShown = book.attachmentsNotShown
    return report
}

/// Writes the entries `filter` selects as an A5 PDF book (419.53 × 595.28
/// points) to `path` and returns what it wrote, including the count of
/// glyphs no font had (``PDFBookReport/unknownGlyphs``).
///
/// - Layout: pango lays out each paragraph; a paragraph that does not fit
///   is split between lines. The table of contents comes from a first pass
///   that lays everything out without drawing. Fonts: Noto Serif, then
///   Noto Serif CJK SC and Noto Sans CJK SC, through fontconfig.
/// - Photos: JPEG attachments are embedded byte for byte (cairo MIME data)
///   with their EXIF orientation applied; PNGs are decoded by cairo. Each
///   distinct blob is one image object, however many entries show it.
/// - Determinism: the same vault and filter give the same bytes; the PDF's
///   creation date is when the latest selected entry was written (its
///   revision clock), not the time of the export.
/// - Memory: one entry's layouts and one photo (at most 64 MiB, and for a
///   PNG its decoded pixels, at most 16 Mpx × 4 bytes) at a time, plus one
///   row per month for the contents, and cairo's per-page object table and
///   per-glyph font-subset tables; the vault's own entry index is held as
///   the vault was opened to hold it (no body with `retainsEntryBodies:
///   false`, as the CLI opens it; the book never changes that setting).
///   Measured on Pepys (3,413 entries, 4,253 pages,
///   `quire-bench --only pdf`): the resident set stays at 50 MiB from the
///   first entry drawn to the 2,560th; the fonts pango loads on demand
///   (a fallback face for two symbols) and cairo's font subsetting at the
///   end add about 58 MiB, the same for the last quarter of the journal
///   alone as for all of it.
/// - Files: the PDF streams into `.<name>.quire-export-<pid>.tmp` beside `path`
///   (mode 0600), is fsynced and renamed to `path`; on failure it is removed.
///
/// - Progress: `done` 0 before the measuring pass, then each entry drawn.
/// - Language: headings, the contents page and dates are in `locale`
///   (a BCP 47 or ICU identifier), else the profile's `settings["locale"]`,
///   else the system's (``BookLocale``).
///
/// This form blocks its thread; apps call the `async` form.
///
/// - Throws: ``ExportError/vault(_:)``, ``ExportError/cannotWrite(path:reason:)``.
@_spi(Format) public func writePDFBook(
    _ vault: Vault, to path: String, filter: ExportFilter = ExportFilter(), locale: String? = nil,
    progress: (ExportProgress) -> Void = { _ in }
) throws(ExportError) -> PDFBookReport {
    let selected = try selectEntries(vault, filter: filter)
    let profile: Profile?
    do { profile = try vault.profile() } catch { throw .vault(error) }
    let name = profile?.name.isEmpty == false ? profile!.name : "Journal"
    let plan = BookPlan(entries: selected, title: name, profileClock: profile?.clock, locale: BookLocale.forVault(vault, option: locale))
    let output: PDFOutput
    do { output = try PDFOutput(path: path) } catch { throw .cannotWrite(path: path, reason: error.reason) }
    var report: PDFBookReport
    do throws(PDFBookError) {
        report = try BookRenderer(plan: plan, vault: vault).render(into: output, progress: progress)
    } catch {
        output.discard()
        if case .cancelled = error { throw .vault(.cancelled) }
        throw .cannotWrite(path: path, reason: error.reason)
    }
    // An entry that could not be read again would be missing from the book.
    if let error = selected.readError {
        output.discard()
        throw .vault(error)
    }
    do throws(PDFBookError) {
        do { try output.commit() } catch { throw PDFBookError.system(error) }
    } catch {
        output.discard()
        throw .cannotWrite(path: path, reason: error.reason)
    }
    report.bytes = output.bytesWritten
    return report
}
