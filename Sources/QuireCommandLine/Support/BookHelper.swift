@_spi(Format) package import Quire
package import QuireExport
import QuireSystem

/// Writes the entries `filter` selects from the vault as a PDF book at the
/// path, reporting progress: QuirePDF's `exportPDFBook`, handed to
/// ``QuireCLI/run(_:book:)`` by the `quire-book` helper.
///
/// - Throws: ``ExportError``, as `exportPDFBook` does.
package typealias BookRenderer = (Vault, String, ExportFilter, (ExportProgress) -> Void) throws(ExportError) -> ExportReport

/// The `quire-book` helper: the same commands as `quire`, linked with the
/// PDF stack (QuirePDF: cairo, pango and some thirty libraries under them).
/// `quire` itself does not link it, so that no other command pays for
/// loading it at start-up; `quire export --format pdf` replaces its process
/// with the helper, given the same arguments, before anything is read or
/// asked (issue 14).
enum BookHelper {
    /// The helper's file name.
    static let name = "quire-book"

    /// Where the helper is: beside this program (a build folder), else in
    /// `../libexec/quire/` from it (where `make install` puts it).
    static func path() -> String? {
        guard let exe = ProcessControl.executablePath() else { return nil }
        let folder = Paths.parentFolder(of: exe)
        return [folder + "/" + name, folder + "/../libexec/quire/" + name].first { ProcessControl.isExecutable($0) }
    }

    /// Replaces this process with the helper, run with this process's
    /// arguments.
    ///
    /// - Throws: ``CLIFailure`` when the helper is not installed or cannot
    ///   be run.
    static func run() throws(CLIFailure) -> Never {
        guard let path = path() else {
            throw CLIFailure(
                "the PDF book is written by \(name), which is not installed beside quire; nothing was written",
                hint: "install quire with 'make install' (it puts \(name) in PREFIX/libexec/quire), or export another format",
                code: "helper_missing")
        }
        do { try ProcessControl.replaceProcess(with: path, arguments: [path] + CommandLine.arguments.dropFirst()) } catch {
            throw CLIFailure("cannot run \(path): \(error); nothing was written", hint: CLIFailure.hint(for: error), code: "helper_missing")
        }
    }
}
