#!/usr/bin/python3
"""Writes the small seed corpora of the libFuzzer targets under tests/fuzz/corpus/<target>/ (committed)."""
import io
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy(array, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array)
    else:
        np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


# --- .npy ---
put("fuzz_npy", "f4_2x3.npy", npy(np.arange(6, dtype="<f4").reshape(2, 3)))
put("fuzz_npy", "f8_3.npy", npy(np.array([0.5, -1.0, 2.0], dtype="<f8")))
put("fuzz_npy", "f4_scalar.npy", npy(np.float32(3.0)))
put("fuzz_npy", "f4_empty.npy", npy(np.zeros((0, 4), dtype="<f4")))
put("fuzz_npy", "f4_hnd.npy", npy(np.linspace(-1, 1, 2 * 3 * 4, dtype="<f4").reshape(2, 3, 4)))
put("fuzz_npy", "f4_v2.npy", npy(np.ones((2, 2), dtype="<f4"), version=(2, 0)))
put("fuzz_npy", "f4_fortran.npy", npy(np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3))))
put("fuzz_npy", "f4_big_endian.npy", npy(np.arange(4, dtype=">f4")))
put("fuzz_npy", "i4.npy", npy(np.arange(4, dtype="<i4")))
put("fuzz_npy", "f4_nan.npy", npy(np.array([1, np.nan, np.inf], dtype="<f4")))

# --- safetensors ---
def safetensors(tensors, metadata=None, raw_header=None):
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    data = b""
    for name, (dtype, shape, payload) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


f32 = lambda *v: struct.pack("<%df" % len(v), *v)
put("fuzz_safetensors", "two_tensors.safetensors",
    safetensors({"a": ("F32", [2, 2], f32(1, 2, 3, 4)), "b": ("F32", [3], f32(5, 6, 7))},
                {"scheme": "alibi", "config": json.dumps({"layers": 2})}))
put("fuzz_safetensors", "dtypes.safetensors",
    safetensors({"d": ("F64", [2], struct.pack("<2d", 1.5, -2)), "h": ("F16", [2], struct.pack("<2H", 0x3C00, 0x7C00)),
                 "bf": ("BF16", [1], struct.pack("<H", 0x3F80))}))
put("fuzz_safetensors", "empty_tensor.safetensors", safetensors({"e": ("F32", [0, 3], b""), "s": ("F32", [], f32(1))}))
put("fuzz_safetensors", "empty.safetensors", safetensors({}))
put("fuzz_safetensors", "overlap.safetensors",
    struct.pack("<Q", 96) + json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                         "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}).encode().ljust(96) + f32(1, 2, 3))

# --- corpus text ---
put("fuzz_corpus", "ascii.txt", b"Train short, test long.\nALiBi extrapolates.\n")
put("fuzz_corpus", "utf8.txt", "Längenextrapolation — 长度外推 🙂\n".encode())
put("fuzz_corpus", "latin1.txt", "caf\xe9\n".encode("latin-1"))
put("fuzz_corpus", "surrogate.txt", b"\xed\xa0\x80 overlong \xc0\xaf end \xf4\x90\x80\x80")

# --- CLI argument lists, NUL-separated ---
for i, args in enumerate([
    ["schemes", "--json"],
    ["bias", "alibi", "--length", "8", "--heads", "4"],
    ["bias", "t5", "--buckets", "--bidirectional", "--length", "9", "-o", "b.json"],
    ["bias", "kerple-power", "--set", "r1=0.5", "--set", "r2=1.5", "--head", "1", "-o", "k.npy"],
    ["bias", "local", "--context", "4", "--logn", "--length", "12"],
    ["bias", "xpos", "--set", "gamma=0.4", "--set", "scale-base=64", "--length", "6"],
    ["dot", "--dim", "16", "--base", "100", "--max-distance", "20", "-o", "d.csv"],
    ["entropy", "rope", "--lengths", "4,8,16", "--qk", "random", "--seed", "3", "--set", "dim=8", "--head-dim", "8"],
    ["entropy", "sandwich", "--lengths", "8", "--heads", "2", "-o", "e.json"],
    ["attention", "alibi", "--q", "q.npy", "--k", "k.npy", "--v", "v.npy", "-o", "o.npy"],
    ["eval", "m.safetensors", "--lengths", "16,32"],
    ["bias", "--help"],
]):
    put("fuzz_cli_args", "args%02d" % i, b"\0".join(a.encode() for a in args))

# fuzz_lessons: the first shipped lessons in both languages, and one refused state.
LESSONS = os.path.join(HERE, "..", "..", "resources", "lessons")
for name in sorted(os.listdir(LESSONS)):
    if name[:2] in ("01", "02", "03", "04", "05") and name.endswith(".md"):
        with open(os.path.join(LESSONS, name), "rb") as f:
            put("fuzz_lessons", name[:-3], f.read())
put("fuzz_lessons", "bad-scheme", b'# Bad\n\n```json\n{"view": "bias",\n "scheme": "rop"}\n```\n')
