"""A deliberately wrong adapter: its V3/GLM mtp_step recycles the pre-norm
hidden (hidden_pre) instead of the shared head's normed output, the bug that
the harness names PRE_NORM_RECYCLE. Every other op is the NumPy adapter's."""
from mtpcheck.adapters import numpy as base


def adapter(mode=None):
    a = base.adapter(mode)
    step = a.ops["mtp_step"]

    def wrong_step(ins, outs, attrs):
        r = step(ins, outs, attrs)
        if not attrs["mhc"]:
            r["recycled"] = r["hidden_pre"]
        return r

    a.ops["mtp_step"] = wrong_step
    return a
