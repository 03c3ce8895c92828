# Sourced by public-surface.sh and doc-links.sh: builds the Quire target
# and sets what `swift symbolgraph-extract` needs to read it: $swift, $work
# (a temporary folder, removed on exit; its prefix is $work_prefix), $bin,
# $target and the array $extra (module maps, the SDK on Darwin, the
# re-exported modules).
swift=${SWIFT:-swift}
work=$(mktemp -d "${TMPDIR:-/tmp}/$work_prefix.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$swift" build --target Quire >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
bin=$("$swift" build --show-bin-path)
target=$("$swift" -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
reexported=$(sed -n 's/^@_exported public import \([A-Za-z0-9_]*\).*/\1/p' Sources/Quire/Exports.swift | paste -sd, -)

extra=()
for map in Sources/C*/module.modulemap; do extra+=(-Xcc "-fmodule-map-file=$map"); done
if [ "$(uname)" = Darwin ]; then extra+=(-sdk "$(xcrun --show-sdk-path)"); fi
if [ -n "$reexported" ]; then extra+=("-experimental-allowed-reexported-modules=$reexported"); fi
