"""mtpcheck: dump writer and engine capture hooks for the mtpcheck harness.

Submodules: `mtpcheck.dump` (the writer), `mtpcheck.encode` (bf16/fp16/fp8 bit
patterns), `mtpcheck.capture` (hooks for vLLM and SGLang; imports torch only
when installed), `mtpcheck.verify` (runs the C `mtpcheck verify`).
"""

__version__ = "0.2.0"

from .dump import Dump, DumpError, Link, Tensor  # noqa: E402,F401
