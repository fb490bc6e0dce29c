"""`mtpcheck.verify(path, **options)` and `mtpcheck.run(**options)`: the binary's
`verify` and `run` commands from Python, their JSON results as dataclasses
(mtpcheck.results; docs/PYTHON.md, "The pip package").

Options are the command's long options with `_` for `-`: `filter="v3.*"` is
`--filter v3.*`, `full_logits=True` is `--full-logits`, a list is joined with commas
(`backend=["ref", "cpu"]`), `fixtures=[a, b]` repeats the option; False and None
leave an option out.  The binary is the one `mtpcheck._bin.find_binary()` picks
(the wheel's own first, after $MTPCHECK_BIN), or `binary=`.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Sequence
from typing import Any, Union

from . import _bin
from .results import Results, ResultsError

PathLike = Union[str, "os.PathLike[str]"]
REPEATED = {"fixtures"}  # options the binary takes once per value


class MtpcheckError(RuntimeError):
    """The binary could not judge: bad input or usage (exit 2), interrupted, no
    results written.  `returncode` and `output` (its console text) say why."""

    def __init__(self, message: str, returncode: int = 2, output: str = ""):
        super().__init__(message)
        self.returncode = returncode
        self.output = output


class MtpcheckFailed(AssertionError):
    """Raised by `check=True` when a case failed: the message lists each failure with
    its diagnosis and repro line; `results` holds the whole run."""

    def __init__(self, results: Results):
        failed = results.failures or [r for r in results.results if not r.passed]
        super().__init__("\n".join([str(results).splitlines()[0]] + [r.describe() for r in failed]))
        self.results = results


def options_to_argv(options: dict) -> list[str]:
    """`{"filter": "a*", "full_logits": True}` -> ["--filter", "a*", "--full-logits"]."""
    argv: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, (list, tuple)):
            if key in REPEATED:
                for v in value:
                    argv += [flag, os.fspath(v)]
            else:
                argv += [flag, ",".join(os.fspath(v) for v in value)]
        else:
            argv += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return argv


def _first_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[0] if lines else "(no output)"


def _invoke(command: Sequence[str], options: dict, binary: str | None,
            timeout: float | None, check: bool) -> Results:
    binary = binary or _bin.find_binary()
    if binary is None:
        raise FileNotFoundError("no mtpcheck binary: install the wheel (pip install . from the "
                                "repository root), set MTPCHECK_BIN, or put mtpcheck on PATH")
    for reserved in ("quiet", "verbose", "q", "v"):
        if reserved in options:
            raise TypeError(f"option {reserved!r}: the console text is Results.console as the "
                            "binary prints it by default")
    with tempfile.TemporaryDirectory(prefix="mtpcheck-") as tmp:
        out = os.fspath(options.pop("json", None) or os.path.join(tmp, "results.json"))
        argv = [binary, *command, *options_to_argv(options), "--json", out]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=timeout, env=_bin.environment(binary),
                           check=False)
        if p.returncode not in (0, 1, 125):
            raise MtpcheckError(f"mtpcheck {command[0]}: exit {p.returncode:d}: "
                                f"{_first_line(p.stdout)}", p.returncode, p.stdout)
        try:
            with open(out, encoding="utf-8") as f:
                results = Results.from_json(f.read())
        except (OSError, ValueError, ResultsError) as e:
            raise MtpcheckError(f"mtpcheck {command[0]}: exit {p.returncode:d}, no results read "
                                f"from {out}: {e}", p.returncode, p.stdout) from e
    results.console = p.stdout
    if check and not results.passed:
        raise MtpcheckFailed(results)
    return results


def verify(path: PathLike, *, binary: str | None = None, timeout: float | None = None,
           check: bool = False, **options: Any) -> Results:
    """`mtpcheck verify PATH`: judges the observed/ tensors of a dump (docs/DUMPS.md).

    Options as `mtpcheck verify --help` lists them (`filter`, `weights`,
    `weights_only`, `full_logits`, `max_bytes`, `mem_limit`, `html`, `junit`,
    `json`).  Returns the Results (exit 0, 1 or 125); raises MtpcheckError on bad
    input (exit 2) and, with `check=True`, MtpcheckFailed when a case failed."""
    return _invoke(["verify", os.fspath(path)], dict(options), binary, timeout, check)


def run(*, backend: str | Sequence[str] = "ref", binary: str | None = None,
        timeout: float | None = None, check: bool = False, **options: Any) -> Results:
    """`mtpcheck run --backend BACKEND`: the default suite (cases/quick.case) or the
    one given by `cases=`, `fixtures=`, `filter=`, `op=`, `tags=`, `shard=` ... as
    `mtpcheck run --help` lists them.  Returns and raises as `verify`."""
    return _invoke(["run"], dict(options, backend=backend), binary, timeout, check)
