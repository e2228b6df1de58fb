#!/usr/bin/env bash
# README.md's phase table defines every phase a run records: the PhaseDefinition rows
# `{"name", "meaning..."` (a meaning may go on over lines) anywhere in lib/embedding (the schemes,
# the engine's `loss`) lib/ps (the trainers' phases) and lib/run (the servers' and the dense layers').
#   phase_docs_test.sh SOURCE_DIR
set -uo pipefail
root=$1
names=$(grep -rhoE '\{"[a-z_]+", "[^"]* ' --include='*.hpp' --include='*.cpp' "$root"/lib/embedding "$root"/lib/ps "$root"/lib/run |
        sed 's/{"\([a-z_]*\)".*/\1/' | sort -u)
[ -n "$names" ] || { echo "FAIL: no PhaseDefinition found in lib/embedding, lib/ps or lib/run" >&2; exit 1; }
missing=0
for name in $names; do
  grep -q "^| $name |" "$root/README.md" || { echo "FAIL: README.md's phase table lacks '$name'" >&2; missing=1; }
done
[ "$missing" -eq 0 ] && echo "PASS: README.md defines every phase:" $names
exit "$missing"
