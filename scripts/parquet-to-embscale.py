#!/usr/bin/env python3
"""Convert a HugeCTR Parquet dataset to a HugeCTR Norm data file that embscale reads.

embscale has no Parquet reader (Debian packages no C++ Parquet library), so a Parquet trace goes
through this script (pyarrow) and then any embscale trace reader.

HugeCTR's Parquet layout ("Parquet"): a file list (first line the count, then the
Parquet files) and, beside the data, a _metadata.json whose "labels", "conts" and "cats" name the
label, dense and slot columns (label and dense float, slots int64, or lists of int64 for multi-hot
slots), in that order. Slot keys are per slot (0 .. slot_size - 1); with --slot-size-array the
script adds each slot's offset (the prefix sum of the sizes), as HugeCTR's Parquet reader does,
and checks that every key fits its slot; without it the keys are written as they are.

  scripts/parquet-to-embscale.py FILE_LIST_OR_PARQUET OUT.data [--metadata _metadata.json]
      [--slot-size-array 10,20,...] [--checksum] [--i32]

Output: one Norm data file (long long keys unless --i32; --checksum writes HugeCTR's checksum
mode). Exit status 2 on bad input, naming the file and column.
"""
import argparse
import json
import os
import struct
import sys


def fail(message):
    print(f"parquet-to-embscale: {message}", file=sys.stderr)
    sys.exit(2)


def parquet_files(source):
    if source.endswith(".parquet"):
        return [source]
    with open(source) as f:
        lines = [line.strip() for line in f if line.strip()]
    if not lines or not lines[0].isdigit():
        fail(f"{source}:1: expected the number of Parquet files")
    count = int(lines[0])
    if count != len(lines) - 1:
        fail(f"{source}: the first line counts {count} files, the list names {len(lines) - 1}")
    return lines[1:]


def columns(metadata, key):
    return [c["col_name"] for c in sorted(metadata.get(key, []), key=lambda c: c["index"])]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source")
    parser.add_argument("output")
    parser.add_argument("--metadata")
    parser.add_argument("--slot-size-array")
    parser.add_argument("--checksum", action="store_true")
    parser.add_argument("--i32", action="store_true")
    args = parser.parse_args()
    try:
        import pyarrow.parquet as pq
    except ImportError:
        fail("needs pyarrow (pip install pyarrow, or Debian python3-pyarrow where packaged)")

    files = parquet_files(args.source)
    metadata_path = args.metadata or os.path.join(os.path.dirname(files[0]) or ".", "_metadata.json")
    try:
        with open(metadata_path) as f:
            metadata = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{metadata_path}: {e}")
    labels, conts, cats = columns(metadata, "labels"), columns(metadata, "conts"), columns(metadata, "cats")
    if not cats:
        fail(f"{metadata_path}: \"cats\" names no slot column")
    sizes = [int(s) for s in args.slot_size_array.split(",")] if args.slot_size_array else None
    if sizes is not None and len(sizes) != len(cats):
        fail(f"--slot-size-array has {len(sizes)} entries for {len(cats)} slot columns")
    offsets = [sum(sizes[:j]) for j in range(len(sizes))] if sizes else [0] * len(cats)
    key_format = "<I" if args.i32 else "<q"

    tmp = f"{os.path.dirname(args.output) or '.'}/.{os.path.basename(args.output)}.tmp.{os.getpid()}"
    records = 0

    def emit(out, body):
        if args.checksum:
            out.write(struct.pack("<i", len(body)))
        out.write(body)
        if args.checksum:
            out.write(struct.pack("<B", sum(body) % 256))

    def header():
        return struct.pack("<8q", 1 if args.checksum else 0, records, len(labels), len(conts), len(cats), 0, 0, 0)

    try:
        with open(tmp, "wb") as out:
            emit(out, header())
            for path in files:
                table = pq.read_table(path, columns=labels + conts + cats)
                data = {name: table.column(name).to_pylist() for name in labels + conts + cats}
                for row in range(table.num_rows):
                    body = bytearray()
                    for name in labels + conts:
                        value = data[name][row]
                        if value is None:
                            fail(f"{path}: row {row}, column {name}: a missing value (HugeCTR allows none)")
                        body += struct.pack("<f", float(value))
                    for j, name in enumerate(cats):
                        value = data[name][row]
                        keys = value if isinstance(value, list) else [value]
                        body += struct.pack("<i", len(keys))
                        for key in keys:
                            if key is None or key < 0 or (sizes and key >= sizes[j]):
                                fail(f"{path}: row {row}, column {name}: key {key} outside [0, "
                                     f"{sizes[j] if sizes else '2^63'})")
                            body += struct.pack(key_format, key + offsets[j])
                    emit(out, bytes(body))
                    records += 1
            out.seek(0)
            if args.checksum:
                out.write(struct.pack("<i", 64))
            h = header()
            out.write(h)
            if args.checksum:
                out.write(struct.pack("<B", sum(h) % 256))
        os.replace(tmp, args.output)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    print(f"parquet-to-embscale: {records} samples from {len(files)} files -> {args.output}")


if __name__ == "__main__":
    main()
