"""Which `mtpcheck` binary the Python side runs, and the `mtpcheck` console script.

The wheel built from the repository root (pyproject.toml there) carries the binary
in this package's `_core/bin/`, its backend modules and data beside it; `pip install
./python` carries none.  One lookup order serves the API, the pytest plugin and
`mtpcheck.verify.find_binary()`: $MTPCHECK_BIN, the bundled binary, `mtpcheck` on
PATH, ./build/mtpcheck from the current directory.
"""

from __future__ import annotations

import os
import shutil
import sys

CORE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_core")
BUNDLED = os.path.join(CORE, "bin", "mtpcheck")
DATA = os.path.join(CORE, "share", "mtpcheck")  # cases/ and fixtures/


def bundled() -> str | None:
    """The binary inside this package, or None (a `pip install ./python`)."""
    return BUNDLED if os.access(BUNDLED, os.X_OK) else None


def data_path(rel: str = "") -> str | None:
    """A file or folder of the bundled data (e.g. "fixtures/dumps/bugs.h5",
    "cases/quick.case"), or None when this installation has no such file."""
    path = os.path.join(DATA, rel) if rel else DATA
    return path if os.path.exists(path) else None


def find_binary() -> str | None:
    """The mtpcheck binary to run, or None."""
    env = os.environ.get("MTPCHECK_BIN")
    if env:
        return env if os.access(env, os.X_OK) else None
    for found in (bundled(), shutil.which("mtpcheck")):
        if found:
            return found
    local = os.path.join("build", "mtpcheck")
    return os.path.abspath(local) if os.access(local, os.X_OK) else None


def environment(binary: str) -> dict:
    """The environment to run `binary` in: for the bundled one, its python backend
    (built against this interpreter's version: the wheel's tag says which) starts
    this interpreter, so that it sees the same site-packages (torch, Triton, this
    package); $MTP_PYTHON, when set, still wins."""
    env = dict(os.environ)
    if os.path.realpath(binary) == os.path.realpath(BUNDLED) and not env.get("MTP_PYTHON"):
        env["MTP_PYTHON"] = sys.executable
    return env


def main(argv: list[str] | None = None) -> int:
    """The `mtpcheck` console script: the bundled binary with the same arguments."""
    binary = os.environ.get("MTPCHECK_BIN") or bundled()
    if not binary:
        sys.stderr.write("mtpcheck: this installation of the mtpcheck package has no binary "
                         "(installed from ./python?): pip install the repository root, "
                         "or set MTPCHECK_BIN\n")
        return 2
    args = [binary, *(sys.argv[1:] if argv is None else argv)]
    env = environment(binary)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(binary, args, env)
    except OSError as e:
        sys.stderr.write(f"mtpcheck: cannot run {binary}: {e.strerror}\n")
    return 126


if __name__ == "__main__":
    sys.exit(main())
