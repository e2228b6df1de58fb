#!/usr/bin/env bash
# README.md's phase table defines every phase a scheme declares (PhaseDefinition rows
# `{"name", "meaning"}` or `{"name", "meaning", "collective"}` anywhere in lib/embedding,
# schemes/ included) and the engine's own `loss`.
#   phase_docs_test.sh SOURCE_DIR
set -uo pipefail
root=$1
names=$(grep -rhoE '\{"[a-z_]+", "[^"]* [^"]*"(, "[a-z_]*")?\}' --include='*.hpp' --include='*.cpp' "$root"/lib/embedding |
        sed 's/{"\([a-z_]*\)".*/\1/' | sort -u)
[ -n "$names" ] || { echo "FAIL: no PhaseDefinition found in lib/embedding" >&2; exit 1; }
missing=0
for name in $names; do
  grep -q "^| $name |" "$root/README.md" || { echo "FAIL: README.md's phase table lacks '$name'" >&2; missing=1; }
done
[ "$missing" -eq 0 ] && echo "PASS: README.md defines every phase:" $names
exit "$missing"
