#!/usr/bin/python3
"""Dumps whose weights are held by reference (FORMAT.md v2), with the small
safetensors checkpoint they name, written by this script's own writer.

  /usr/bin/python3 tools/gen/weights_dumps.py OUTDIR

writes OUTDIR/weights_ref.h5 and OUTDIR/ckpt/model.safetensors. Cases:
  ref.ok            head_weight and eh_proj_weight by reference: PASSED with
                    --weights OUTDIR/ckpt, SKIPPED without
  ref.bad_hash      the same with a wrong ref_sha256: exit 2
  ref.live_ok       a live_sha256 that matches the data: PASSED
and OUTDIR/bad_path.h5 (ref_file with ".."), OUTDIR/bad_live.h5 (a
live_sha256 that is not the data's): both refused with exit 2.
"""

import hashlib
import json
import os
import struct
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numerics as nx
from bug_dumps import FIX, V3, attrs_of, read, write

ST_DTYPE = {"bfloat16": "BF16", "float32": "F32", "float16": "F16", "float64": "F64"}


def write_safetensors(path, tensors):
    """tensors: {name: (stored numpy array, fixtures dtype)}; the format:
    u64 LE header length, a JSON header, then the tensors' bytes in order."""
    header, blobs, off = {}, [], 0
    for name, (arr, dt) in tensors.items():
        raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": ST_DTYPE[dt], "shape": list(arr.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.writelines(blobs)


def placeholder(g, name, stored, dt, ref_file, tensor, sha):
    d = g.create_dataset(name, data=np.zeros(0, dtype=stored.dtype))
    d.attrs["dtype"] = dt
    d.attrs["ref_file"] = ref_file
    d.attrs["ref_tensor"] = tensor
    d.attrs["ref_sha256"] = sha
    d.attrs["ref_shape"] = np.array(stored.shape, dtype=np.int64)


NAMES = {"head_weight": "model.layers.61.shared_head.head.weight",
         "eh_proj_weight": "model.layers.61.eh_proj.weight"}


def new_file(path):
    out = h5py.File(path, "w")
    out.attrs["format"] = "mtpcheck-fixture"
    out.attrs["format_version"] = np.int64(2)
    out.attrs["generator"] = "tools/gen/weights_dumps.py"
    out.attrs["created"] = "2026-12-01T00:00:00Z"
    out.create_group("cases")
    return out


def add_case(out, src, cid, sha_of, ref_file="model.safetensors", live=None):
    inp, exp = read(src["inputs"]), read(src["expected"])
    g = out["cases"].create_group(cid)
    for k, v in attrs_of(src).items():
        g.attrs[k] = v
    gi = g.create_group("inputs")
    write(gi, {k: v for k, v in inp.items() if k not in NAMES})
    for k, tensor in NAMES.items():
        stored = nx.encode(*inp[k])
        placeholder(gi, k, stored, inp[k][1], ref_file, tensor, sha_of[k])
    if live:
        gi["enorm_weight"].attrs["live_sha256"] = live
    write(g.create_group("observed"), exp)


def main(outdir):
    os.makedirs(os.path.join(outdir, "ckpt"), exist_ok=True)
    with h5py.File(os.path.join(FIX, "steps_v3.h5"), "r") as f:
        src = f["cases"][V3]
        inp = read(src["inputs"])
        stored = {NAMES[k]: (nx.encode(*inp[k]), inp[k][1]) for k in NAMES}
        write_safetensors(os.path.join(outdir, "ckpt", "model.safetensors"), stored)
        sha = {k: hashlib.sha256(stored[NAMES[k]][0].astype("<u2").tobytes()).hexdigest()
               for k in NAMES}
        enorm = nx.encode(*inp["enorm_weight"]).astype("<u2").tobytes()
        with new_file(os.path.join(outdir, "weights_ref.h5")) as out:
            add_case(out, src, "ref.ok", sha)
            add_case(out, src, "ref.bad_hash", dict(sha, head_weight="0" * 64))
            add_case(out, src, "ref.live_ok", sha, live=hashlib.sha256(enorm).hexdigest())
        with new_file(os.path.join(outdir, "bad_path.h5")) as out:
            add_case(out, src, "ref.escape", sha, ref_file="../model.safetensors")
        with new_file(os.path.join(outdir, "bad_live.h5")) as out:
            add_case(out, src, "ref.live_other", sha, live="1" * 64)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: weights_dumps.py OUTDIR")
    main(sys.argv[1])
