"""Running the C harness on a dump: `mtpcheck verify FILE`.

The binary is $MTPCHECK_BIN, else the one bundled in the wheel, else `mtpcheck`
on PATH, else ./build/mtpcheck from the current directory (mtpcheck._bin).
`run()` returns a Verdict: the exit code, the console text, and the diagnoses
and case verdicts parsed from it.  The module itself is callable:
`mtpcheck.verify(path, **options)` is mtpcheck.api.verify, the structured
results of `--json` (docs/PYTHON.md).
"""

from __future__ import annotations

import re
import subprocess
import sys
import types
from collections.abc import Sequence
from typing import Any

from . import _bin

VERDICTS = ("PASSED", "FAILED", "MISTRUSTED", "UNIMPLEMENTED", "SKIPPED", "CRASHED", "TIMEOUT",
            "INVALID")


def find_binary() -> str | None:
    """The path of the mtpcheck binary, or None."""
    return _bin.find_binary()


class Verdict:
    """What `mtpcheck verify -v` said: its exit code, its text, the diagnoses
    and each case's verdict."""

    def __init__(self, returncode: int, text: str) -> None:
        self.returncode = returncode
        self.text = text
        self.diagnoses = re.findall(r"diagnosis: ([A-Z0-9_]+)", text)
        self.cases: dict[str, str] = {}
        # each case's draft agreement, as printed: "3/3, 3/3, 1/3 (the
        # reference's top-1 margin on a missed token: up to 0.106)"
        self.agreement: dict[str, str] = {}
        # "[  1/2] FAILED        dump       FILE:case  ..."
        pat = re.compile(r"^\[\s*\d+/\d+\]\s+({})\s+\S+\s+(\S+)".format("|".join(VERDICTS)))
        case = None
        for line in text.splitlines():
            m = pat.match(line.strip())
            if m and ":" in m.group(2):
                case = m.group(2).rsplit(":", 1)[1]
                self.cases[case] = m.group(1)
            elif case and line.strip().startswith("draft agreement by step: "):
                self.agreement[case] = line.strip()[len("draft agreement by step: "):]

    def diagnoses_of(self, case: str) -> list[str]:
        """The diagnoses printed under one case's verdict line."""
        out, current = [], None
        pat = re.compile(r"^\[\s*\d+/\d+\]\s+\S+\s+\S+\s+(\S+)")
        for line in self.text.splitlines():
            m = pat.match(line.strip())
            if m:
                current = m.group(1).rsplit(":", 1)[-1]
            elif current == case:
                out += re.findall(r"diagnosis: ([A-Z0-9_]+)", line)
        return out

    @property
    def version_unsupported(self) -> bool:
        """True when this binary cannot read the file's format version yet."""
        return self.returncode == 2 and "format_version" in self.text and "not supported" in self.text

    def __repr__(self) -> str:
        return f"Verdict(rc={self.returncode:d}, cases={self.cases!r}, diagnoses={self.diagnoses!r})"


def run(path: str, binary: str | None = None, extra: Sequence[str] = (),
        timeout: float = 600) -> Verdict:
    """`mtpcheck verify PATH -v` run by binary (find_binary()), as a Verdict."""
    binary = binary or find_binary()
    if binary is None:
        raise FileNotFoundError("no mtpcheck binary: set MTPCHECK_BIN or build ./build/mtpcheck")
    p = subprocess.run([binary, "verify", path, "-v", *extra], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout,
                       env=_bin.environment(binary), check=False)
    return Verdict(p.returncode, p.stdout)


class _CallableModule(types.ModuleType):
    """`mtpcheck.verify(path, **options)` calls mtpcheck.api.verify, while
    `mtpcheck.verify.run` and `.find_binary` stay what they were."""

    def __call__(self, path: Any, **options: Any) -> Any:
        from .api import verify

        return verify(path, **options)


sys.modules[__name__].__class__ = _CallableModule
