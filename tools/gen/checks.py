"""What the check_*_dumps.py scripts share: running mtpcheck on a generated
file, and the one report line (each failure printed, then exit 1)."""

import subprocess
import sys


def mtpcheck(binary, *args):
    """(exit code, stdout and stderr) of `binary ARGS...`."""
    p = subprocess.run([binary] + list(args), check=False, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=300)
    return p.returncode, p.stdout.decode()


def finish(fails, what, ok):
    """Prints each failure and exits 1 naming `what`, or prints `ok`."""
    for f in fails:
        print(f)
    if fails:
        sys.exit("%s: %d checks failed" % (what, len(fails)))
    print(ok)
