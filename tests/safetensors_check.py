#!/usr/bin/env python3
"""safetensors_check.py FILE - an independent safetensors parser for tests.

Written from the format description only (standard library, no netloom
code), so test-checkpoint can check that netloom's files read the same way
elsewhere. Prints JSON:
  {"header_length": N, "metadata": {...},
   "tensors": {name: {"dtype", "shape", "data_offsets", "sha256"}}}
Exits 1 with a message on stderr when the file breaks the format.
"""
import hashlib
import json
import struct
import sys

DTYPE_SIZES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
}


def fail(msg):
    sys.stderr.write("safetensors_check: %s\n" % msg)
    sys.exit(1)


def is_uint(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def main():
    if len(sys.argv) != 2:
        fail("usage: safetensors_check.py FILE")
    with open(sys.argv[1], "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        fail("file shorter than 8 bytes")
    (n,) = struct.unpack("<Q", blob[:8])
    if n < 2 or 8 + n > len(blob):
        fail("header length %d out of range" % n)
    if n % 8 != 0:
        fail("header length %d is not a multiple of 8" % n)
    raw = blob[8:8 + n]
    if not raw.startswith(b"{"):
        fail("header does not start with '{'")
    if raw.rstrip(b" ") != raw.rstrip():
        fail("header padding is not spaces")

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            fail("duplicate key in header")
        return dict(pairs)

    header = json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicates)
    if not isinstance(header, dict):
        fail("header is not an object")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        fail("__metadata__ is not an object of strings")

    data = blob[8 + n:]
    out = {}
    spans = []
    for name, info in header.items():
        if set(info) != {"dtype", "shape", "data_offsets"}:
            fail("%s: keys %s" % (name, sorted(info)))
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if dtype not in DTYPE_SIZES:
            fail("%s: unknown dtype %r" % (name, dtype))
        if not isinstance(shape, list) or not all(is_uint(d) for d in shape):
            fail("%s: bad shape %r" % (name, shape))
        if not isinstance(offsets, list) or len(offsets) != 2 or not all(is_uint(o) for o in offsets):
            fail("%s: bad data_offsets %r" % (name, offsets))
        begin, end = offsets
        numel = 1
        for d in shape:
            numel *= d
        if not begin <= end <= len(data) or end - begin != numel * DTYPE_SIZES[dtype]:
            fail("%s: data_offsets %r do not fit %s %r" % (name, offsets, dtype, shape))
        spans.append((begin, end, name))
        out[name] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": offsets,
            "sha256": hashlib.sha256(data[begin:end]).hexdigest(),
        }
    pos = 0
    for begin, end, name in sorted(spans):
        if begin != pos:
            fail("%s: starts at %d, expected %d" % (name, begin, pos))
        pos = end
    if pos != len(data):
        fail("data section has %d bytes, tensors cover %d" % (len(data), pos))
    json.dump({"header_length": n, "metadata": metadata, "tensors": out}, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
