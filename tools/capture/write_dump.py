#!/usr/bin/python3
"""A minimal dump writer for engine developers: NumPy arrays -> a FORMAT.md v1
file that `mtpcheck verify` judges. Copy it into your engine's capture hook.

    from write_dump import Dump
    with Dump("step.h5", generator="my-engine 1.2 capture hook") as d:
        d.case("layer61.step0", op="mtp_step", family="deepseek_v3", seed=0,
               attrs={"eps": 1e-6, "rounding": "eager"},
               inputs={"embeds": (embeds, "bfloat16"), "positions": (pos, "int64"), ...},
               observed={"recycled": (recycled, "bfloat16"), "logits": (logits, "float32")})

bfloat16 / float16 arrays are given as float32 (or any float) values already
representable in that type (e.g. torch's tensor.float().numpy()), or as uint16
bit patterns (e.g. tensor.view(torch.int16).numpy().view(np.uint16)).

Run `python3 write_dump.py --demo demo.h5` to write a small valid dump
(an rmsnorm case whose observed output is right) and check it with
`mtpcheck verify demo.h5`.
"""
import datetime
import sys

import h5py
import numpy as np

_STORE = {"float64": "<f8", "float32": "<f4", "int64": "<i8", "int32": "<i4"}


def _bits16(values, dtype):
    """float values -> bfloat16/float16 bit patterns, round to nearest even."""
    a = np.asarray(values)
    if a.dtype == np.uint16:
        return a.astype("<u2")
    if dtype == "float16":
        return a.astype(np.float16).view(np.uint16).astype("<u2")
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(a.astype(np.float32))
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    rounded = np.where(nan, (u >> 16) | 0x40, rounded)
    return rounded.astype("<u2")


class Dump:
    def __init__(self, path, generator):
        self.f = h5py.File(path, "w")
        self.f.attrs["format"] = "mtpcheck-fixture"
        self.f.attrs["format_version"] = np.int64(1)
        self.f.attrs["generator"] = generator
        self.f.attrs["created"] = datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")
        self.cases = self.f.create_group("cases")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def _put(self, group, name, value, dtype):
        data = _bits16(value, dtype) if dtype in ("bfloat16", "float16") \
            else np.asarray(value).astype(_STORE[dtype])
        d = group.create_dataset(name, data=data)  # "layer.0/x" makes the subgroup
        d.attrs["dtype"] = dtype

    def case(self, case_id, op, family, seed, attrs, inputs, observed):
        g = self.cases.create_group(case_id)
        g.attrs["op"] = op
        g.attrs["family"] = family
        g.attrs["seed"] = np.int64(seed)
        for k, v in attrs.items():
            g.attrs[k] = v if isinstance(v, str) else (np.int64(v) if isinstance(v, int) else float(v))
        for part, tensors in (("inputs", inputs), ("observed", observed)):
            pg = g.create_group(part)
            for name, (value, dtype) in tensors.items():
                self._put(pg, name, value, dtype)


def _demo(path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    x = _bits16(x, "bfloat16")
    w = _bits16(w, "bfloat16")
    xf = (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    wf = (w.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    y = xf / np.sqrt(np.mean(xf * xf, axis=1, keepdims=True) + 1e-6) * wf  # fused RMSNorm
    with Dump(path, "write_dump.py demo") as d:
        d.case("demo.rmsnorm", op="rmsnorm", family="deepseek_v3", seed=0,
               attrs={"eps": 1e-6, "rounding": "fused"},
               inputs={"x": (x, "bfloat16"), "weight": (w, "bfloat16")},
               observed={"y": (y, "bfloat16")})


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--demo":
        _demo(sys.argv[2])
    else:
        print(__doc__)
