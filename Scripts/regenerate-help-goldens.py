# Rewrites the golden help texts in HelpTests.swift from the built binary,
# whose help is written from the command declarations (Sources/QuireCommandLine/Commands):
#   python3 Scripts/regenerate-help-goldens.py .build/debug/quire
# Review the diff: a change to the help is a change to what users read.
import subprocess, sys
Q = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/quire"
def out(*a): return subprocess.run([Q, *a], capture_output=True, text=True, check=True).stdout
goldens = {"overview": out("--help"), "initHelp": out("help", "init"), "addHelp": out("add", "--help"),
           "listHelp": out("help", "list"), "searchHelp": out("search", "--help")}
p = "Tests/QuireCLITests/HelpTests.swift"
s = open(p).read()
for k, v in goldens.items():
    a = s.index(f'    static let {k} = #"""\n')
    b = s.index('"""#\n', a) + 5
    # A multi-line literal drops the line break before its closing delimiter.
    s = s[:a] + f'    static let {k} = #"""\n{v}\n"""#\n' + s[b:]
open(p, "w").write(s)
