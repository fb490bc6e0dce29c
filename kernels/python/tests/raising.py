"""An adapter whose rmsnorm raises, and which has no lm_head: the first is a
FAILED verdict carrying the exception's line, the second UNIMPLEMENTED."""
from mtpcheck.adapters import numpy as base


def adapter(mode=None):
    a = base.adapter(mode)

    def broken(ins, outs, attrs):
        raise ZeroDivisionError("deliberate failure in rmsnorm")

    a.ops["rmsnorm"] = broken
    del a.ops["lm_head"]
    return a
