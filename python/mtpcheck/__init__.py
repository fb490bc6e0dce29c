"""mtpcheck: dump writer and engine capture hooks for the mtpcheck harness.

Submodules: `mtpcheck.dump` (the writer), `mtpcheck.adapters` (adapters of the
`python` backend: NumPy, torch), `mtpcheck.encode` (bf16/fp16/fp8 bit
patterns), `mtpcheck.capture` (hooks for vLLM and SGLang; imports torch only
when installed), `mtpcheck.verify` (runs the C `mtpcheck verify`).

`mtpcheck.verify(path, **options)` and `mtpcheck.run(**options)` run the binary
(the wheel's own, docs/PYTHON.md) and return `mtpcheck.results.Results`;
`mtpcheck.data_path("fixtures/dumps/bugs.h5")` is a file of the wheel's data.
"""

from typing import TYPE_CHECKING

from ._bin import data_path
from .api import MtpcheckError, MtpcheckFailed, run
from .results import CaseResult, Results

if TYPE_CHECKING:  # to a type checker the callable module is the function
    from .api import verify as verify
else:
    from . import verify  # a module whose call is api.verify

__version__ = "0.2.0"

__all__ = ["CaseResult", "MtpcheckError", "MtpcheckFailed", "Results", "data_path", "run",
           "verify"]


# The writer's names load lazily: importing the package (e.g. for the python
# backend's adapters, inside a process that already holds another libhdf5)
# must not import h5py.
_LAZY = {"Dump", "DumpError", "Link", "Tensor"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from . import dump

        return getattr(dump, name)
    raise AttributeError(f"module 'mtpcheck' has no attribute {name!r}")
