// quire: the command-line tool. `quire help` lists the commands; the
// command layer is in Core/, the commands in Commands/.

import Foundation

exit(QuireCLI.run(Array(CommandLine.arguments.dropFirst())).rawValue)
