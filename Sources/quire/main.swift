// quire: the command-line tool. `quire help` lists the commands; the
// command layer is in Core/, the commands in Commands/.

import Foundation
import QuireSystem

// Decrypted entries and keys are in this process's memory: never in a core dump.
ProcessHardening.disableCoreDumps()
exit(QuireCLI.run(Array(CommandLine.arguments.dropFirst())).rawValue)
