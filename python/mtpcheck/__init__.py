"""mtpcheck: dump writer and engine capture hooks for the mtpcheck harness.

Submodules: `mtpcheck.dump` (the writer), `mtpcheck.adapters` (adapters of the
`python` backend: NumPy, torch), `mtpcheck.encode` (bf16/fp16/fp8 bit
patterns), `mtpcheck.capture` (hooks for vLLM and SGLang; imports torch only
when installed), `mtpcheck.verify` (runs the C `mtpcheck verify`).
"""

__version__ = "0.2.0"


# The writer's names load lazily: importing the package (e.g. for the python
# backend's adapters, inside a process that already holds another libhdf5)
# must not import h5py.
_LAZY = {"Dump", "DumpError", "Link", "Tensor"}


def __getattr__(name):
    if name in _LAZY:
        from . import dump

        return getattr(dump, name)
    raise AttributeError(f"module 'mtpcheck' has no attribute {name!r}")
