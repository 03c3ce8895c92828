// quire: the command-line tool. `quire help` lists the commands; the
// commands are in the QuireCommandLine module. This program links no PDF
// stack: `quire export --format pdf` runs the quire-book helper instead.

import Foundation
import QuireCommandLine
import QuireSystem

// Decrypted entries and keys are in this process's memory: never in a core dump.
ProcessHardening.disableCoreDumps()
exit(QuireCLI.run(Array(CommandLine.arguments.dropFirst())).rawValue)
