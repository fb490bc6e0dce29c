#!/usr/bin/python3
"""Superseded by the package in python/ (`pip install ./python`): the dump
writer is `mtpcheck.dump`, the capture hooks `mtpcheck.capture`
(docs/DUMPS.md). This wrapper keeps the old entry point:

    python3 tools/capture/write_dump.py --demo demo.h5 && mtpcheck verify demo.h5
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from mtpcheck.dump import Dump  # re-exported for old imports
from mtpcheck.encode import bf16_bits, bf16_values


def _demo(path):
    """A fused-rounding rmsnorm case whose observed output is right."""
    rng = np.random.default_rng(0)
    x = bf16_bits(rng.standard_normal((4, 64)))
    w = bf16_bits(rng.uniform(0.5, 1.5, 64))
    xf, wf = bf16_values(x).astype(np.float64), bf16_values(w).astype(np.float64)
    y = xf / np.sqrt(np.mean(xf * xf, axis=1, keepdims=True) + 1e-6) * wf
    with Dump(path, "write_dump.py demo") as d:
        d.case("demo.rmsnorm", op="rmsnorm", family="deepseek_v3", seed=0,
               attrs={"eps": 1e-6, "rounding": "fused"},
               inputs={"x": (x, "bfloat16"), "weight": (w, "bfloat16")},
               observed={"y": (y.astype(np.float32), "bfloat16")})


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--demo":
        _demo(sys.argv[2])
    else:
        print(__doc__)
