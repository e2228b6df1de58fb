#!/usr/bin/env bash
# scripts/parquet-to-embscale.py on a two-row HugeCTR Parquet dataset made here with pyarrow: the
# Norm file it writes is checked byte by byte. Skipped (77) where pyarrow is missing.
#   parquet_convert_test.sh SOURCE_DIR
set -euo pipefail
src=$1
python3 -c 'import pyarrow' 2>/dev/null || { echo "pyarrow missing: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python3 - <<'PY'
import json, pyarrow as pa, pyarrow.parquet as pq
pq.write_table(pa.table({"label": [1.0, 0.0], "I1": [0.5, 2.0], "C1": [3, 0], "C2": [[1, 2], []]}), "d.parquet")
json.dump({"file_stats": [{"file_name": "d.parquet", "num_rows": 2}],
           "cats": [{"col_name": "C1", "index": 2}, {"col_name": "C2", "index": 3}],
           "conts": [{"col_name": "I1", "index": 1}], "labels": [{"col_name": "label", "index": 0}]},
          open("_metadata.json", "w"))
open("list.txt", "w").write("1\nd.parquet\n")
PY
python3 "$src/scripts/parquet-to-embscale.py" list.txt out.data --slot-size-array 4,10
python3 - <<'PY'
import struct
expected = struct.pack("<8q", 0, 2, 1, 1, 2, 0, 0, 0)
expected += struct.pack("<ffiqiqq", 1.0, 0.5, 1, 3, 2, 5, 6)
expected += struct.pack("<ffiqi", 0.0, 2.0, 1, 0, 0)
got = open("out.data", "rb").read()
assert got == expected, (got, expected)
PY
echo "parquet_convert: ok"
