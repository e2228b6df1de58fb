#!/usr/bin/env bash
# The architecture documents stay true to the tree: every repository path they name in
# backquotes (a token with a '/' and a file or folder name, no spaces or placeholders) exists.
# A file moved or renamed without its documents fails here.
#   doc_paths_test.sh SOURCE_DIR DOC...
set -uo pipefail
root=$1; shift
missing=0
for doc in "$@"; do
  [ -f "$root/$doc" ] || { echo "FAIL: $doc does not exist" >&2; missing=1; continue; }
  # `a/b.hpp`, `lib/device/`, `scripts/mpi-env`: backquoted, starting with a top-level folder.
  while IFS= read -r path; do
    # Root-relative, or relative to the document's folder; paths git ignores (results/runs,
    # build/) appear only once something runs.
    [ -e "$root/$path" ] || [ -e "$root/$(dirname "$doc")/$path" ] ||
      git -C "$root" check-ignore -q "${path%/}/" 2>/dev/null ||
      { echo "FAIL: $doc names $path, which is not in the repository" >&2; missing=1; }
  done < <(grep -o '`[A-Za-z0-9_.][A-Za-z0-9_./-]*`' "$root/$doc" | tr -d '`' |
           grep -E '^(lib|workloads|kernels|bench|results|scripts|slurm|tests|fuzz|cmake)/' | sort -u)
done
[ "$missing" -eq 0 ] && echo "PASS: every path named in $* exists"
exit "$missing"
