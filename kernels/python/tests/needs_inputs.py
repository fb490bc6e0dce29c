"""The NumPy adapter, whose supports() also requires every required input
of the call among its `tensors`: an empty batch's inputs (T = 0, no buffer)
are present and must be listed (tests/cli/empty.sh, mode adapter)."""
from mtpcheck.adapters import numpy as base

REQUIRED = {"rmsnorm": ("x", "weight"), "lm_head": ("x", "weight"),
            "hc_post": ("x", "residual", "post_mix", "comb_mix")}


def adapter(mode=None):
    a = base.adapter(mode)
    plain = a.supports

    def supports(op, attrs, tensors):
        return plain(op, attrs, tensors) and all(n in tensors for n in REQUIRED.get(op, ()))

    a.supports = supports
    return a
