"""The NumPy adapter with a synthetic device timer, for the bench gate
(bridge.sh): every timed launch reads 1 ms (plus a fixed 0-2 % jitter), and
the timed launches numbered in NOISY_SLOW="FIRST:END" (counted from 0 in the
process, the copy probe's 12 included) read 20 % more, as a shared machine's
background load would make them. Deterministic: no clock is read."""
import os

from mtpcheck.adapters import numpy as base


def adapter(mode=None):
    a = base.adapter(mode)
    first, _, end = os.environ.get("NOISY_SLOW", "0:0").partition(":")
    slow = range(int(first), int(end or 0))
    calls = [0]

    def timer_begin():
        pass

    def timer_end():
        i = calls[0]
        calls[0] += 1
        jitter = 0.02 * ((i * 2654435761) % 1000) / 1000
        return 1e-3 * (1 + jitter) * (1.2 if i in slow else 1.0)

    a.timer_begin, a.timer_end = timer_begin, timer_end
    return a
