#!/usr/bin/env bash
# Builds the DocC catalog Docs/Tempo.docc with the toolchain's own `docc` (no plugin package):
# symbol graphs of Tempo and TempoTesting come from `swift build`, then `docc convert` turns the
# catalog and the graphs into an archive. Fails on any DocC warning (a missing or broken symbol
# link, an undocumented parameter, an unknown image), when a public symbol of either module
# is left out of the catalog's topics, and when a public symbol's doc comment lacks a summary,
# a parameter's description, Returns, Throws or an example (scripts/check-reference-docs.py --examples),
# and when a rendered declaration shows a parameter without its type
# (scripts/check-declarations.py).
#
#   scripts/build-docs.sh            builds .build/docs/Tempo.doccarchive
#   scripts/build-docs.sh --preview  builds, then serves it with live reload (docc preview)
#
# Open the archive: `open .build/docs/Tempo.doccarchive` (macOS, in Xcode), or serve it:
#   python3 -m http.server 8000 --directory .build/docs/Tempo.doccarchive
#   then browse http://localhost:8000/documentation/tempo
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=.build/docs                 # its own build folder: the flags below would otherwise
graphs="$PWD/$scratch/symbol-graphs"   # make the next plain `swift build` recompile everything
archive="$scratch/Tempo.doccarchive"

# `docc` sits next to `swift` in the toolchain; $DOCC overrides.
docc="${DOCC:-$(command -v docc || true)}"
if [ -z "$docc" ]; then
    docc="$(dirname "$(command -v swift)")/docc"
fi

mkdir -p "$graphs"
# Building TempoTesting builds Tempo too; each module writes its graph when it is compiled.
swift build --scratch-path "$scratch" --target TempoTesting \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs"

# The compiler's graphs leave the closure type out of a `nonisolated(nonsending)` parameter;
# mended copies, the type put back from the source, are what DocC reads
# (TEMPO_DOCS_KEEP_GRAPHS=1 gives it the compiler's own, to see the check below fail).
if [ "${TEMPO_DOCS_KEEP_GRAPHS:-}" != 1 ]; then
    rm -rf "$scratch/symbol-graphs-mended"
    scripts/fix-symbol-graphs.py "$graphs" "$scratch/symbol-graphs-mended"
    graphs="$PWD/$scratch/symbol-graphs-mended"
fi

if [ "${1:-}" = "--preview" ]; then
    # Its output goes under .build too (by default docc writes it into the catalog).
    exec "$docc" preview Docs/Tempo.docc --additional-symbol-graph-dir "$graphs" \
        --output-path "$scratch/preview" \
        --fallback-display-name Tempo --fallback-bundle-identifier dev.tempo.Tempo
fi

rm -rf "$archive"
"$docc" convert Docs/Tempo.docc \
    --additional-symbol-graph-dir "$graphs" \
    --output-path "$archive" \
    --fallback-display-name Tempo --fallback-bundle-identifier dev.tempo.Tempo \
    --warnings-as-errors

# DocC lists public symbols that no topic curates in groups it generates on the module page.
uncurated=0
for module in tempo tempotesting; do
    if grep -q '"generated":true' "$archive/data/documentation/$module.json"; then
        echo "error: the $module module page lists symbols no topic curates; add them to a" \
            "Topics section (Docs/Tempo.docc/Tempo.md or an extension file)" >&2
        uncurated=1
    fi
done
[ "$uncurated" -eq 0 ] || exit 1

# Every public function documents each parameter, its result and what it throws: the symbol
# graphs say which parameters it has, whether it throws and what it returns.
scripts/check-reference-docs.py --examples --graphs "$graphs"

# Every parameter of every declaration a reader sees names its type.
scripts/check-declarations.py "$archive"
echo "Documentation built: $archive"
