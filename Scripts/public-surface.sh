#!/usr/bin/env bash
# Counts the public names an app sees through `import Quire` (issue 13,
# need 7): the symbol graph of the Quire module, with the modules that
# Sources/Quire/Exports.swift re-exports (`@_exported`) folded in, at
# public access, without @_spi symbols and without the members a type only
# inherits from a protocol extension (-skip-synthesized-members).
#
# A name is one symbol of that graph: a top-level type, protocol, typealias
# or function, or a member (property, method, initializer, subscript, enum
# case, operator) of a public type, each counted once. Compiler-made
# members a declaration asks for (init(rawValue:) of a raw-value enum, the
# `$x` of a property wrapper) count too: the app sees them. It also says
# how many distinct base names there are (`open` once however many
# types have an `open`; `add` for `add(_:)`).
#
#   Scripts/public-surface.sh                 the count: total, top level, by module
#   Scripts/public-surface.sh --list          and every name: module, kind, path
#   Scripts/public-surface.sh --max N         fails when more than N names
#   Scripts/public-surface.sh --undocumented  lists the names without a doc
#                                             comment; fails when there is one
#
# It builds the Quire target first (`swift build --target Quire`).
# `make api-surface` runs it with the ceiling; `make lint` runs that.
set -euo pipefail
cd "$(dirname "$0")/.."

list=0
max=""
undocumented=0
while [ $# -gt 0 ]; do
    case $1 in
        --list) list=1 ;;
        --max) max=${2:?--max needs a number}; shift ;;
        --undocumented) undocumented=1 ;;
        *) echo "usage: Scripts/public-surface.sh [--list] [--max N] [--undocumented]" >&2; exit 2 ;;
    esac
    shift
done

work_prefix=quire-surface
. Scripts/symbol-graph.sh

"$swift" symbolgraph-extract -module-name Quire -I "$bin/Modules" -I "$bin" -target "$target" \
    -minimum-access-level public -skip-synthesized-members -output-dir "$work" "${extra[@]}"

LIST=$list MAX=$max UNDOCUMENTED=$undocumented python3 - "$work/Quire.symbols.json" <<'PY'
import collections, json, os, sys

symbols = json.load(open(sys.argv[1]))["symbols"]

def module(symbol):
    uri = symbol.get("location", {}).get("uri", "")
    return uri.split("/Sources/")[1].split("/")[0] if "/Sources/" in uri else "(compiler-made)"

rows = sorted(((module(s), s["kind"]["identifier"].removeprefix("swift."), ".".join(s["pathComponents"]), s) for s in symbols),
              key=lambda r: r[:3])
total = len(rows)
top = sum(1 for r in rows if "." not in r[2])
by_module = collections.Counter(r[0] for r in rows)
distinct = len({r[2].split(".")[-1].split("(")[0] for r in rows})
print(f"public names through `import Quire`: {total} ({top} top-level; {distinct} distinct base names)")
print("  by module: " + ", ".join(f"{m} {n}" for m, n in sorted(by_module.items())))
if os.environ["LIST"] == "1":
    for m, kind, path, _ in rows:
        print(f"{m:16} {kind:14} {path}")
status = 0
if os.environ["UNDOCUMENTED"] == "1":
    missing = [r for r in rows if "docComment" not in r[3] and r[0] != "(compiler-made)"]
    for m, kind, path, _ in missing:
        print(f"undocumented: {m} {kind} {path}")
    if missing:
        print(f"{len(missing)} public names have no doc comment")
        status = 1
if os.environ["MAX"] and total > int(os.environ["MAX"]):
    print(f"the public surface grew to {total} names, over the ceiling of {os.environ['MAX']}: "
          "make the new declarations package, internal or @_spi, or raise API_SURFACE_MAX in the Makefile with a reason")
    status = 1
sys.exit(status)
PY
