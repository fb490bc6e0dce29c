"""An adapter whose rmsnorm computes the right values and then writes 8
bytes past its output y (and, with mode "before", 8 bytes before it), as an
off-by-one kernel would: the guard zones make that CRASHED, "memory
corruption: wrote 8 bytes past output y (guard zone)", never PASSED."""
import ctypes

from mtpcheck.adapters import numpy as base


def adapter(mode=None):
    a = base.adapter(None)
    right = a.ops["rmsnorm"]

    def overflow(ins, outs, attrs):
        r = right(ins, outs, attrs)
        y = outs["y"]
        at = y.ctypes.data - 8 if mode == "before" else y.ctypes.data + y.nbytes
        ctypes.memmove(at, b"\x00\x11\x22\x33\x44\x55\x66\x77", 8)
        return r

    a.ops["rmsnorm"] = overflow
    return a
