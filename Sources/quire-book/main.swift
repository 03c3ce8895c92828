// quire-book: the `quire` commands with the PDF book (QuirePDF: cairo and
// pango). `quire export --format pdf` replaces its own process with this
// one, given the same arguments, so that no other command loads the PDF
// stack at start-up. Installed in PREFIX/libexec/quire by `make install`.

import Foundation
import QuireCommandLine
@_spi(Format) import QuireExport
@_spi(Format) import QuirePDF
import QuireSystem

// Decrypted entries and keys are in this process's memory: never in a core dump.
ProcessHardening.disableCoreDumps()
exit(
    QuireCLI.run(Array(CommandLine.arguments.dropFirst())) { vault, path, filter, progress throws(ExportError) in
        try exportPDFBook(vault, to: path, filter: filter, progress: progress)
    }.rawValue)
