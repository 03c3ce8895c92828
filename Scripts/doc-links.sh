#!/usr/bin/env bash
# Fails when the doc comment of a name an app sees through `import Quire`
# links (a ``Name`` symbol link) to a declaration the app cannot see: one
# that is @_spi, `package` or internal. DocC renders such a link as broken
# and Quick Help shows a name the app cannot write (iOS review 27 §1.5).
#
# It reads the same symbol graph as Scripts/public-surface.sh (the Quire
# module with the modules Sources/Quire/Exports.swift re-exports folded in)
# twice: once at public access without @_spi symbols (what an app sees,
# the names `make api-surface` counts) and once with every internal,
# package and @_spi symbol too (what a link can point at). For each public
# name with a doc comment, each ``link`` outside code blocks is resolved
# the way DocC does, from the name's own scope outwards (``code`` in
# QuireError's comment is QuireError/code, ``Vault/open(at:)`` from
# anywhere is that path); `-swift.enum` and hash disambiguators are
# dropped. A link fails when
#   - it resolves to a declaration that is not public (hidden), or
#   - it names the declaration's own path, which a hidden declaration
#     shares (an async form saying "as ``x()``" of its blocking @_spi twin
#     of the same name: the app is sent to a declaration it cannot see), or
#   - it resolves to nothing the app can see (a private declaration, one
#     internal to a re-exported module, a typo, a stale name).
# A link to a path that a public and a hidden declaration share (an async
# method and its @_spi blocking twin) is fine elsewhere: for the app it is
# the public one.
#
#   Scripts/doc-links.sh     lists each bad link: file:line, the name, the link, why
#
# It builds the Quire target first (`swift build --target Quire`).
# `make lint` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

work_prefix=quire-doc-links
. Scripts/symbol-graph.sh

mkdir "$work/public" "$work/all"
"$swift" symbolgraph-extract -module-name Quire -I "$bin/Modules" -I "$bin" -target "$target" \
    -minimum-access-level public -skip-synthesized-members -output-dir "$work/public" "${extra[@]}"
"$swift" symbolgraph-extract -module-name Quire -I "$bin/Modules" -I "$bin" -target "$target" \
    -minimum-access-level internal -include-spi-symbols -skip-synthesized-members -output-dir "$work/all" "${extra[@]}"

python3 - "$work/public/Quire.symbols.json" "$work/all/Quire.symbols.json" <<'PY'
import collections, json, re, sys

public = json.load(open(sys.argv[1]))["symbols"]
every = json.load(open(sys.argv[2]))["symbols"]

def key(s):
    return s["identifier"]["precise"]

public_ids = {key(s) for s in public}
# Every declaration by its path (Vault/open(at:credential:)), public or not.
by_path = collections.defaultdict(list)
for s in every:
    by_path[tuple(s["pathComponents"])].append(s)
for s in public:  # in case the wider graph lacks one
    if key(s) not in {key(t) for t in by_path[tuple(s["pathComponents"])]}:
        by_path[tuple(s["pathComponents"])].append(s)

def components(link):
    """``Vault/open(at:credential:)-1a2b3`` -> ("Vault", "open(at:credential:)")."""
    link = link.strip()
    if link.startswith("Quire/"):
        link = link[len("Quire/"):]
    parts = []
    for part in link.split("/"):
        part = re.sub(r"-swift\.[a-z.]+$", "", part)
        part = re.sub(r"-[0-9a-z]{3,6}$", "", part)
        parts.append(part)
    return tuple(parts)

def resolve(scope, link):
    """What DocC finds: the link under the symbol's own path, then under
    each enclosing scope, then at the top level."""
    for depth in range(len(scope), -1, -1):
        path = tuple(scope[:depth]) + link
        if path in by_path:
            return path
    return None

def where(s):
    location = s.get("location", {})
    uri = location.get("uri", "")
    path = uri.split("/Sources/", 1)[1] if "/Sources/" in uri else uri
    line = location.get("position", {}).get("line", -1) + 1
    return f"Sources/{path}:{line}"

def hidden(decls):
    return [d for d in decls if key(d) not in public_ids]

problems = []
for s in public:
    lines = [l.get("text", "") for l in s.get("docComment", {}).get("lines", [])]
    fenced = False
    for text in lines:
        if text.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for link in re.findall(r"``([^`]+)``", text):
            path = resolve(s["pathComponents"], components(link))
            name = ".".join(s["pathComponents"])
            if path is None:
                problems.append((where(s), name, link, "names no declaration an app can see (a private one, one internal to another module, or a typo)"))
                continue
            decls = by_path[path]
            secret = hidden(decls)
            if not secret:
                continue
            what = "/".join(path)
            if len(secret) == len(decls):
                access = ", ".join(sorted({("@_spi " if d.get("spi") else "") + d.get("accessLevel", "?") for d in secret}))
                problems.append((where(s), name, link, f"{what} is not public ({access})"))
            elif path == tuple(s["pathComponents"]):
                problems.append((where(s), name, link, f"links to its own name, which means its hidden twin {what} (@_spi or package)"))

problems = sorted(set(problems))
for w, name, link, why in problems:
    print(f"{w}: {name}: ``{link}``: {why}")
if problems:
    print(f"{len(problems)} doc links of public declarations point at names an app cannot see: "
          "say it in words, or link a public name")
    sys.exit(1)
print(f"doc links: every ``link`` in the doc comments of {len(public)} public names points at a public name")
PY
