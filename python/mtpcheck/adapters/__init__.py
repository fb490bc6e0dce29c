"""Adapters of mtpcheck's `python` backend (docs/PYTHON.md).

`mtpcheck run --backend python:ADAPTER[:MODE]` embeds CPython, imports ADAPTER
(a module path such as `mtpcheck.adapters.numpy`, or a `.py` file) and calls
its `adapter(mode)`, which returns an `Adapter`. The harness then calls only
the methods below; everything else is the adapter's business.

An op is a callable `fn(ins, outs, a)`: `ins` and `outs` map the op table's
tensor names (`mtpcheck list ops`) to tensors of the adapter's kind (NumPy
arrays, torch tensors) viewing the harness's buffers without a copy; an absent
optional input is None. `a` holds the attributes and the bound dimensions
(`a["eps"]`, `a["rounding"]`, `a["T"]`, `a["act"]` = "bfloat16", ...). The op
writes its outputs in place, or returns them (a dict by name, or a tuple in
the table's order) and `store` copies them in.
"""

from __future__ import annotations

import types
from typing import Any, Callable, ClassVar


class Unavailable(Exception):
    """Raised by adapter(mode) when its framework or device is missing: the
    backend is then SKIPPED (exit 125 if nothing else ran), not a usage error."""


ACT_DTYPES = ("bfloat16", "float16", "float32")
FP8_WEIGHT = "float8_e4m3fn"
FP8_SCALES = ("float32", "float8_e8m0fnu")
PROJ_QUANT = ("none", "fp8_w", "fp8_w8a8")
# SPEC.md §12.1: each convention's attribute and its default (v1) value
CONVENTION_DEFAULTS = (("add_norm_input", "residual"), ("final_add", "unfused"),
                       ("silu_mul_rounding", "once"), ("logits_dtype", "float32"),
                       ("pos0_mask", 1))


class Adapter:
    """What the C side calls. Subclasses fill `ops` and the memory hooks."""

    name = "python"
    ops: ClassVar[dict] = {}
    # Whether the ops read FP8 projections (a float8_e4m3fn weight with its
    # block scales, SPEC.md §12.2) and the captured-block form of mtp_step
    # and draft_chain (SPEC.md §12.3, another signature); the default
    # supports() declines both unless set, so that an adapter written
    # without them is UNIMPLEMENTED there rather than wrong.
    fp8 = False
    captured_block = False
    # declared reduction orders and the tensor-parallel step (SPEC.md §2.5)
    tensor_parallel = False
    # Whether the ops honour the conventions of SPEC.md §12.1 (attributes
    # add_norm_input, final_add, silu_mul_rounding, logits_dtype,
    # pos0_mask); if not, the default supports() declines a call whose
    # attributes carry any value other than the default.
    conventions = False

    def describe(self) -> str:
        """One line for reports."""
        return self.name

    def supports(self, op: str, a: dict[str, Any], tensors: dict[str, tuple[str, str]]) -> bool:
        """Whether this call is implemented; must not touch data. `tensors`
        maps each present tensor's name (an empty one of a T = 0 batch too)
        to (dtype, class), the class one of
        act, param (mHC parameters and mixes), index, logits, token, qweight
        (a projection weight: the activation dtype, or float8 with a qscale
        beside it) and qscale (its block scales). The default: every op in
        self.ops, bf16/fp16/fp32 activations, float32 mHC parameters; float8
        weights (e4m3, with float32 or e8m0 scales) only if self.fp8, the
        captured-block form only if self.captured_block, conventions other
        than the defaults only if self.conventions."""
        if op not in self.ops or a["act"] not in ACT_DTYPES:
            return False
        if a.get("block") == "captured" and not self.captured_block:
            return False
        if (a.get("reduce_order") or a.get("tp_step")) and not self.tensor_parallel:
            return False  # a declared order or the TP step (SPEC.md §2.5, Step V3-8)
        if not self.conventions and any(a.get(n, d) != d for n, d in CONVENTION_DEFAULTS):
            return False
        for dt, cls in tensors.values():
            if cls == "param" and dt != "float32":
                return False
            if cls == "qweight" and dt not in (a["act"], FP8_WEIGHT):
                return False
            if cls == "qscale" and (not self.fp8 or dt not in FP8_SCALES
                                    or a.get("proj_quant", "fp8_w") not in PROJ_QUANT):
                return False
        return True

    # ---- memory: untyped byte buffers, typed at launch by view() ----
    def alloc(self, nbytes: int) -> Any:
        """A buffer of nbytes bytes; better not zeroed or left as found (the
        shipped adapters fill it with 0xFF bytes), so that an output an op
        forgets to write cannot pass on a stale copy of the right answer."""
        raise NotImplementedError

    def upload(self, dst: Any, src: memoryview) -> None:
        """Copy the host memoryview src into dst (not called for buffers that
        expose the buffer protocol: the C side copies those itself)."""
        raise NotImplementedError

    def download(self, dst: memoryview, src: Any) -> None:
        """Copy src into the writable host memoryview dst."""
        raise NotImplementedError

    def view(self, buf: Any, dtype: str, shape: tuple[int, ...]) -> Any:
        """A tensor of dtype name and shape over buf (no copy); buf None: an
        empty tensor (a dimension is 0, and the harness has no buffer)."""
        raise NotImplementedError

    def copy(self, dst: Any, src: Any, nbytes: int) -> None:
        """Device-to-device copy for bench's bandwidth probe."""
        raise NotImplementedError

    def synchronize(self) -> None:
        pass

    # ---- running ----
    def bind(self, op: str, ins: dict[str, Any], outs: dict[str, Any],
             a: dict[str, Any]) -> Callable[[], None]:
        """A zero-argument callable that runs op on these tensors: called once
        per distinct call, then once per launch (so per-launch work stays out
        of bench's timings)."""
        fn = self.ops[op]
        store = self.store

        def run():
            r = fn(ins, outs, a)
            if r is not None:
                store(outs, r)

        return run

    def store(self, outs: dict[str, Any], r: Any) -> None:
        """Copies an op's returned outputs into the harness's buffers."""
        if isinstance(r, dict):
            items = r.items()
        else:
            if not isinstance(r, (tuple, list)):
                r = (r,)
            if len(r) != len(outs):
                raise ValueError("op returned %d outputs, the table has %d" % (len(r), len(outs)))
            items = zip(outs.keys(), r)
        for name, value in items:
            if name not in outs:
                raise KeyError("op returned an output %r the table does not have" % name)
            self.assign(outs[name], value)

    def assign(self, dst: Any, value: Any) -> None:
        raise NotImplementedError

    # Optional: device timers (timer_begin/timer_end -> seconds) and graph
    # replay (graph(run) -> object with replay()); leave them None if absent.
    timer_begin = None
    timer_end = None
    graph = None


# The adapters of this package, by the short name --backend python:NAME
# takes for mtpcheck.adapters.NAME.
SHIPPED = ("numpy", "torch", "vllm_mhc")


def load(spec: str) -> types.ModuleType:
    """Imports an adapter module from a dotted path or a .py file. Raises
    LookupError (a usage error) when the module itself is missing."""
    import importlib
    import importlib.util
    import os

    if spec.endswith(".py"):
        if not os.path.isfile(spec):
            raise LookupError("adapter file %s does not exist" % spec)
        name = "mtpcheck_adapter_" + os.path.basename(spec)[:-3]
        loader_spec = importlib.util.spec_from_file_location(name, spec)
        mod = importlib.util.module_from_spec(loader_spec)
        loader_spec.loader.exec_module(mod)
        return mod
    if spec in SHIPPED:
        # a shipped adapter's short name (python:torch:compile); it wins
        # over a module of the same name (numpy itself is no adapter)
        spec = __name__ + "." + spec
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as e:
        # the adapter itself (or a package above it) is missing: a usage
        # error; a dependency it imports (torch) is missing: unavailable
        if e.name and (spec == e.name or spec.startswith(e.name + ".")):
            raise LookupError(
                "no adapter module '%s' (%s; shipped: %s, e.g. python:torch:compile)"
                % (spec, e, ", ".join(SHIPPED))
            ) from None
        raise Unavailable(str(e)) from None


def open_adapter(spec: str, mode: str | None) -> Adapter:
    """The C side's entry: the adapter object for spec and mode."""
    mod = load(spec)
    make = getattr(mod, "adapter", None)
    if make is None:
        raise LookupError("adapter %s has no adapter(mode) function" % spec)
    return make(mode)
