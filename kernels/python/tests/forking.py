"""An adapter that forks from Python (os.fork, subprocess with and without
preexec_fn) before the harness forks too (--isolate): neither may hang."""
import os, subprocess
from mtpcheck.adapters import numpy as base
def adapter(mode=None):
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    _, st = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(st) == 7
    assert subprocess.run(["true"]).returncode == 0
    assert subprocess.run(["true"], preexec_fn=lambda: None).returncode == 0
    return base.adapter(mode)
