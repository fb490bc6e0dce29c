"""The V4.1 DSpark drafter's mHC ops as per-op cases (SPEC.md §13 Steps DS-4
and DS-5): each sublayer's `hc_pre_delayed` and the final `hc_collapse`, with
the engine's tensors as `observed/`. Used by capture/dspark.py's
DSparkCapture on a drafter whose layers carry vLLM's `MHCPreDelayedOp`
(`layer.mhc_pre_delayed`: V4.1's decoder layers, amd and nvidia) and whose
layer class has the static `_hc_collapse` (the amd module's, which its
DSpark forward calls as `DeepseekV4DecoderLayer._hc_collapse`).

What is recorded of `hc_pre_delayed`: the streams it mixed (its first
return value: with a sublayer output passed in, the previous sublayer's
hc_post is folded into the call, and the mixes are computed from the streams
after it), the weights, the carried pre-mix (`pre_mix_in`; absent at layer
0's attention, whose input is then stream 0), and the mixes, the layer input
and the new pre-mix it returned. A call given the model-entry broadcast (`x`)
or a fused norm is not written (neither happens without AITER).
"""

from __future__ import annotations

from typing import Any

from .recorder import _keep

# the positional parameters of MHCPreDelayedOp's forward (vllm/model_executor/layers/mhc.py)
PRE_ARGS = ("residual", "fn", "hc_scale", "hc_base", "rms_eps", "hc_pre_eps", "hc_sinkhorn_eps",
            "hc_post_mult_value", "sinkhorn_repeat", "pre_mix", "x", "norm_weight")


class MHCHooks:
    """Forward hooks on every layer's `mhc_pre_delayed` and a wrapper on
    the layer class's `_hc_collapse`; installed through the capture's
    handles and restore list, so that its `remove()` undoes them."""

    def __init__(self, cap: Any) -> None:
        self.rows = cap.max_tokens
        self.pre: list[dict[str, Any]] = []
        self.collapse: list[dict[str, Any]] = []
        layers = cap.inner.layers
        for layer in layers:
            op = getattr(layer, "mhc_pre_delayed", None)
            if op is not None:
                cap.handles.append(op.register_forward_hook(self._pre, with_kwargs=True))
        cls = type(layers[0]) if len(layers) else None
        if cls is not None and "_hc_collapse" in cls.__dict__:
            orig = cls.__dict__["_hc_collapse"]
            fn = orig.__func__ if isinstance(orig, staticmethod) else orig

            def collapse(x, pre_mix):
                out = fn(x, pre_mix)
                self.collapse.append({"x": _keep(x, self.rows), "pre_mix": _keep(pre_mix, self.rows),
                                      "y": _keep(out, self.rows)})
                return out

            cap.restore.append((cls, "_hc_collapse", orig))
            cls._hc_collapse = staticmethod(collapse)

    def _pre(self, module: Any, args: tuple, kwargs: dict, out: tuple) -> None:
        a = dict(zip(PRE_ARGS, args))
        a.update(kwargs)
        if a.get("x") is not None or a.get("norm_weight") is not None:
            return
        streams, post, comb, layer_input, pre = out
        k = self.rows
        rec = {"inputs": {"residual": _keep(streams, k), "fn": a["fn"].detach(),
                          "scale": a["hc_scale"].detach(), "base": a["hc_base"].detach()},
               "attrs": {"rms_eps": float(a["rms_eps"]), "pre_eps": float(a["hc_pre_eps"]),
                         "sinkhorn_eps": float(a["hc_sinkhorn_eps"]),
                         "post_mult": float(a["hc_post_mult_value"]),
                         "sinkhorn_iters": int(a["sinkhorn_repeat"])},
               "observed": {"post_mix": _keep(post.reshape(post.shape[0], -1), k),
                            "comb_mix": _keep(comb, k), "layer_input": _keep(layer_input, k),
                            "pre_mix": _keep(pre, k)}}
        if a.get("pre_mix") is not None:
            rec["inputs"]["pre_mix_in"] = _keep(a["pre_mix"], k)
        self.pre.append(rec)

    def write(self, d: Any, family: str) -> list[str]:
        """The cases, into the open Dump `d`; returns their ids."""
        ids = []
        for i, r in enumerate(self.pre):
            cid = "hc_pre_delayed.call%d" % i
            d.case(cid, op="hc_pre_delayed", family=family, attrs=r["attrs"], inputs=r["inputs"],
                   observed=r["observed"])
            ids.append(cid)
        for i, r in enumerate(self.collapse):
            cid = "hc_collapse.block%d" % i
            d.case(cid, op="hc_collapse", family=family, inputs={"x": r["x"], "pre_mix": r["pre_mix"]},
                   observed={"y": r["y"]})
            ids.append(cid)
        return ids
