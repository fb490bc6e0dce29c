"""The weights capture (docs/WEIGHTS.md): run an engine's own MTP
`load_weights` over tensors named as a checkpoint's (zeros; no real data) and
record where each checkpoint key lands, the model's parameter names and each
quantizable module's quantization prefix, in the three files
`mtpcheck audit-weights` reads (--params, --modules, --mapping).

Every parameter's `weight_loader` is replaced, for the duration of the load,
by a recorder: vLLM's loaders call `getattr(param, "weight_loader",
default_weight_loader)`, so parameters without a loader of their own are
covered too. The recorder does not copy ("dry" load: shapes need not match),
and returns True for the fused-MoE loaders that ask `return_success`. The key
in flight is the last key the loader pulled from its input iterator. A
loader that holds a key until its sibling arrives (vLLM 0.33's FP8 indexer
`wk` weight waits for its scale, deepseek_v2.py _try_load_fp8_indexer_wk)
fills the parameter while the sibling is in flight: the held key (the
`.weight` of a `.weight_scale_inv` / `.weight_scale` in flight, or the other
way round, pulled earlier and not recorded yet) is recorded too, when the
tensor handed over was computed (not the key's own). A parameter a loader
fills by a direct in-place copy instead of a weight_loader (vLLM 0.23's V4
`attn_sink`) is seen by torch's in-place write counter and recorded with
the key in flight. A KeyError on a key is recorded as that key -> the name
looked up, and the load rerun without the key (see capture)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: torch is imported where it is used
    import torch


class Capture:
    """The result: params (names), shapes (name -> shape tuple), modules
    ((name, prefix)), rows ((key, param, shard, expert)), skipped (keys),
    error (text or None)."""

    def __init__(self) -> None:
        self.params: list[str] = []
        self.modules: list[tuple[str, str]] = []
        self.rows: list[tuple[str, str, Any, Any]] = []
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.skipped: list[str] = []
        self.error: str | None = None

    def write(self, params_path: str, modules_path: str, map_path: str) -> None:
        """The three files of `mtpcheck audit-weights` (--params, --modules, --mapping)."""
        with open(params_path, "w") as f:  # NAME<TAB>shape=D0,D1 (WEIGHTS.md)
            f.writelines("{}\tshape={}\n".format(n, ",".join(map(str, self.shapes[n])))
                         if n in self.shapes else n + "\n" for n in self.params)
        with open(modules_path, "w") as f:
            f.writelines("{}\t{}\n".format(*m) for m in self.modules)
        with open(map_path, "w") as f:
            for key, param, shard, expert in self.rows:
                cols = [key, param]
                if shard is not None:
                    cols.append(f"shard={shard}")
                if expert is not None:
                    cols.append(f"expert={expert}")
                f.write("\t".join(cols) + "\n")
            for key in self.skipped:
                f.write(f"# {key}\tskipped\n")
            if self.error:
                f.write("# error: {}\n".format(self.error.replace("\n", " ")))


def _shard_expert(args, kwargs):
    shard = kwargs.get("shard_id", kwargs.get("loaded_shard_id"))
    if shard is None and len(args) >= 3 and isinstance(args[2], (int, str)):
        shard = args[2]
    expert = kwargs.get("expert_id")
    return shard, expert


def module_prefixes(model: torch.nn.Module) -> list[tuple[str, str]]:
    """(module name, quantization prefix) of every module built with a
    quantization method (vLLM's LinearBase, embeddings, fused MoE)."""
    out = []
    for name, m in model.named_modules():
        pre = getattr(m, "prefix", None)
        if isinstance(pre, str) and hasattr(m, "quant_method"):
            out.append((name, pre))
    return out


def _version(p):
    """The in-place write counter torch keeps per tensor (views share
    it): a loader that copies into a parameter directly bumps it."""
    try:
        return p._version
    except (AttributeError, RuntimeError):  # inference tensors keep none
        return None


def _computed(weight, src):
    """Whether the tensor a loader hands to a weight_loader was computed
    (not the checkpoint tensor in flight, nor a view of it)."""
    if weight is src or (weight.is_meta and src.is_meta):
        return False
    try:
        return weight.untyped_storage().data_ptr() != src.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return True


def _pair(key):
    for suffix in (".weight_scale_inv", ".weight_scale", ".weight"):
        if key.endswith(suffix):
            return key[: -len(suffix)]
    return key


def _load_once(model, tensors, cap):
    """One load_weights run, recorded into cap.rows; the exception it
    raised, or None."""
    import torch

    cur = [None, None]  # the key in flight, its tensor
    held = {}  # weight/scale pair -> its keys pulled and not recorded yet
    params = list(model.named_parameters())
    versions = {n: _version(p) for n, p in params}

    def copied():  # parameters written in place while the last key was in
        # flight (a loader's direct copy_ rather than a weight_loader call)
        for n, p in params:
            v = _version(p)
            if v != versions[n]:
                versions[n] = v
                cap.rows.append((cur[0], n, None, None))

    def tap(ws):
        for name, t in ws:
            if cur[0] is not None:
                copied()
            cur[0], cur[1] = name, t
            held.setdefault(_pair(name), []).append(name)
            yield name, t
        copied()

    saved = []
    for pname, p in params:
        had = "weight_loader" in p.__dict__
        saved.append((p, had, p.__dict__.get("weight_loader")))

        def rec(param, weight, *args, _n=pname, **kwargs):
            shard, expert = _shard_expert((param, weight) + args, kwargs)
            pending = held.pop(_pair(cur[0]), [cur[0]])
            if not _computed(weight, cur[1]):  # the key's own tensor
                pending = [cur[0]]
            for key in dict.fromkeys(pending + [cur[0]]):
                cap.rows.append((key, _n, shard, expert))
            return True if kwargs.get("return_success") else None

        p.weight_loader = rec
    try:
        with torch.no_grad():
            model.load_weights(tap(tensors))
        return None
    except Exception as e:  # noqa: BLE001 # a strict loader on a name it cannot place
        e.mtpcheck_key = cur[0]
        return e
    finally:
        for p, had, wl in saved:
            if had:
                p.weight_loader = wl
            else:
                with contextlib.suppress(AttributeError):
                    del p.weight_loader


def capture(model: torch.nn.Module, tensors: Iterable[tuple[str, torch.Tensor]]) -> Capture:
    """Runs model.load_weights over (name, tensor) pairs; returns a Capture.
    When the loader raises KeyError on a key (the name it looked up is no
    parameter: a stale remap the engine refuses at load), the key is
    recorded with that name and the load is run again without it, so that
    the rest of the checkpoint is mapped too; cap.error keeps the first
    error."""
    cap = Capture()
    cap.params = [n for n, _ in model.named_parameters()]
    cap.shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
    cap.modules = module_prefixes(model)
    tensors, refused = list(tensors), []
    while True:
        cap.rows = []
        e = _load_once(model, tensors, cap)
        if e is not None and cap.error is None:
            cap.error = f"{type(e).__name__}: {e} (key {e.mtpcheck_key})"
        if not (isinstance(e, KeyError) and e.args and isinstance(e.args[0], str)
                and e.mtpcheck_key is not None):
            break
        refused.append((e.mtpcheck_key, e.args[0], None, None))
        tensors = [(k, t) for k, t in tensors if k != e.mtpcheck_key]
    cap.rows += refused
    landed = {r[0] for r in cap.rows}
    cap.skipped = [k for k in dict.fromkeys(n for n, _ in tensors) if k not in landed]
    return cap


def computed_at_load(key: str) -> bool:
    """Keys whose values a loader computes with before any weight_loader
    (vLLM's FP8 indexer wk and its scale, dequantized at load): these get
    real zeros, as does a tensor a loader copies into a parameter itself
    (vLLM 0.23's V4 attn_sink); every other tensor may be a meta tensor (no
    memory)."""
    return ".indexer.wk." in key or key.endswith(".attn_sink")


def zeros(keys: Iterable[str], shapes: Mapping[str, tuple[int, ...]] | None = None,
          dtype: torch.dtype | None = None, dtypes: Mapping[str, torch.dtype] | None = None,
          meta: bool = False) -> list[tuple[str, torch.Tensor]]:
    """(name, zeros) for each key; shape [1] when none is known (dry load).
    dtypes (key -> torch dtype) matters where a loader branches on it (an
    FP8 indexer wk is dequantized at load only when it is FP8). meta: the
    tensors the loader only passes on are meta tensors, so a whole
    checkpoint's shapes take no memory."""
    import torch

    shapes, dtypes = shapes or {}, dtypes or {}
    return [(k, torch.zeros(shapes.get(k, (1,)), dtype=dtypes.get(k, dtype or torch.bfloat16),
                            device="meta" if meta and not computed_at_load(k) else "cpu"))
            for k in keys]


_ST_DTYPES = {"BF16": "bfloat16", "F16": "float16", "F32": "float32", "F64": "float64",
              "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "F8_E8M0": "float8_e8m0fnu",
              "I8": "int8", "U8": "uint8", "I16": "int16", "I32": "int32", "I64": "int64",
              "BOOL": "bool"}


def checkpoint_headers(folder: str) -> list[tuple[str, torch.dtype, tuple[int, ...]]]:
    """(key, torch dtype, shape) of every tensor of a checkpoint folder,
    from the safetensors headers (8-byte length + JSON; no tensor data)."""
    import glob
    import json
    import os
    import struct

    import torch

    out = []
    for path in sorted(glob.glob(os.path.join(folder, "*.safetensors"))):
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(n))
        for key, t in header.items():
            if key != "__metadata__":
                out.append((key, getattr(torch, _ST_DTYPES[t["dtype"]]), tuple(t["shape"])))
    return out


if __name__ == "__main__":
    import sys

    from .weights_cli import main

    sys.exit(main())
