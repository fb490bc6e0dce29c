"""The NumPy adapter dressed as a device adapter: timers and graph replay in
Python (the host clock, a replay that calls the bound op), so that the C
paths of device timers and `bench --graph` run where there is no GPU."""
import time

from mtpcheck.adapters import numpy as base


class Replay:
    replays = 0

    def __init__(self, run):
        self.run = run

    def replay(self):
        Replay.replays += 1
        self.run()


def adapter(mode=None):
    a = base.adapter(mode)
    t0 = [0.0]

    def timer_begin():
        t0[0] = time.perf_counter()

    def timer_end():
        return time.perf_counter() - t0[0]

    a.timer_begin, a.timer_end, a.graph = timer_begin, timer_end, Replay
    a.describe = lambda: "fake device (NumPy, host timers, replayed %d times)" % Replay.replays
    return a
