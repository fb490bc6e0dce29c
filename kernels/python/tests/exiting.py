"""An adapter whose rmsnorm ends the process with os._exit(0), as a framework
that calls exit on an error might: in `mtpcheck bench` it must cost that
problem only (CRASHED), never the JSON report or the exit code."""
import os

from mtpcheck.adapters import numpy as base


def adapter(mode=None):
    a = base.adapter(mode)

    def leave(ins, outs, attrs):
        os._exit(0)

    a.ops["rmsnorm"] = leave
    return a
