"""Capture hooks for vLLM's DSpark drafters (SPEC.md §13): per-op dumps of
the primitives mtpcheck judges, with the engine's own tensors as `observed/`.

What is hooked, and where it lives in vLLM 0.33:
* the combiner projection, a forward hook on `model.model.fc` (Qwen3 /
  Gemma4, `combine_hidden_states`) or `model.model.main_proj` (V4.1);
* the combiner norm: V4.1's `main_norm` module (forward hook); Qwen3 and
  Gemma4 apply `hidden_norm` inside `_project_context_kv` through
  `vllm._custom_ops.rms_norm` with the weight buffer `_hidden_norm_weight`,
  so that function is wrapped and the call on that buffer recorded;
* the Markov loop of `DSparkSpeculator._sample_sequential`: the drafter's
  `compute_draft_logits` (base logits), `markov_embed` (the previous token and
  its embedding) and the speculator's `_sample_logits` (the biased logits and
  the sampled token) are wrapped on the instances;
* the drafter's `compute_confidence` (head hidden, Markov embeddings, the
  sigmoid), wrapped;
* V4.1's mHC ops, `hc_pre_delayed` per sublayer and the final `hc_collapse`
  (capture/dspark_mhc.py), where the layers carry them.

Each op becomes one case: `main_proj_norm` per block forward, `markov_bias`
per draft position (the rows are the requests), `confidence` per block,
`hc_pre_delayed` per call and `hc_collapse` per block forward. Only
what the engine computed is written as observed; inputs are what it was fed.
"""

from __future__ import annotations

from typing import Any

from ..dump import Dump, Tensor
from .dspark_mhc import MHCHooks
from .recorder import _keep

FAMILY = "deepseek_v4"  # the DSpark ops' family row (the ops do not depend on it)


class DSparkCapture:
    """Hooks on one DSpark drafter (and, through `attach_speculator`, on the
    speculator running it). `write(path)` writes the per-op cases."""

    def __init__(self, model, max_tokens=16):
        self.model = model
        self.max_tokens = max_tokens  # rows kept of each combiner tensor (a prefill has thousands)
        self.inner = model.model
        self.handles = []
        self.restore = []
        self.combiner = []  # dicts: aux, proj_out, main_x
        self.markov = []  # dicts per step: logits_in, prev_ids, embed, logits, token
        self.conf = []  # dicts: hidden, markov_embed, confidence
        self._base = None
        self._step = None
        self.greedy, self.topk = True, False
        proj = getattr(self.inner, "fc", None) or getattr(self.inner, "main_proj", None)
        if proj is None:
            raise ValueError("%s: no combiner projection (fc / main_proj)" % type(model).__name__)
        self.handles.append(proj.register_forward_hook(self._proj))
        norm = getattr(self.inner, "main_norm", None)
        if norm is not None:  # V4.1: main_norm(main_proj(aux))
            self.norm_weight = lambda: norm.weight
            self.handles.append(norm.register_forward_hook(self._norm_module))
        else:  # Qwen3 / Gemma4: hidden_norm inside _project_context_kv
            self.norm_weight = lambda: self.inner.hidden_norm.weight
            self._wrap_ops_rms_norm()
        # V4.1's mHC ops (hc_pre_delayed, hc_collapse), where its layers carry them
        self.mhc = MHCHooks(self) if getattr(self.inner, "hc_mult", None) is not None else None
        self._wrap(model, "compute_draft_logits", self._draft_logits)
        self._wrap(model, "markov_embed", self._markov_embed)
        self._wrap(model, "compute_confidence", self._confidence)

    # ---- installing and removing ----
    def _wrap(self, obj, name, hook):
        orig = getattr(obj, name)

        def wrapped(*args, **kwargs):
            out = orig(*args, **kwargs)
            hook(args, kwargs, out)
            return out

        self.restore.append((obj, name, obj.__dict__.get(name, _ABSENT)))
        setattr(obj, name, wrapped)

    def _wrap_ops_rms_norm(self):
        from vllm import _custom_ops

        orig = _custom_ops.rms_norm
        inner = self.inner

        def rms_norm(out, x, weight, eps):
            orig(out, x, weight, eps)
            if weight is getattr(inner, "_hidden_norm_weight", None) and self.combiner:
                self._main_x(out, eps)

        self.restore.append((_custom_ops, "rms_norm", orig))
        _custom_ops.rms_norm = rms_norm

    def attach_speculator(self, spec: Any) -> None:
        """Wrap the speculator's `_sample_logits` (the biased logits of one
        draft position and the token sampled from them). The token is judged
        (as the argmax) only under greedy drafting (`draft_logits` None); the
        top-k path (`dspark_draft_topk`: the bias on k candidates, -inf
        elsewhere) is no `markov_bias`, so its steps are not written."""
        self.greedy = getattr(spec, "draft_logits", None) is None
        self.topk = getattr(spec, "_draft_topk", None) is not None
        self._wrap(spec, "_sample_logits", self._sampled)

    def remove(self) -> None:
        for h in self.handles:
            h.remove()
        for obj, name, orig in reversed(self.restore):
            if orig is _ABSENT:
                delattr(obj, name)  # the instance wrapper: the class's method shows again
            else:
                setattr(obj, name, orig)
        self.handles, self.restore = [], []

    # ---- the hooks ----
    def _proj(self, module, args, out):
        self.combiner.append({"rows": out.shape[0], "aux": _keep(args[0], self.max_tokens),
                              "proj_out": _keep(out, self.max_tokens)})

    def _main_x(self, out, eps):
        """The norm of the latest projection, when it normed all its rows (a
        norm of other rows is not this combiner's)."""
        rec = self.combiner[-1]
        if out.shape[0] == rec["rows"] and "main_x" not in rec:
            rec["main_x"] = _keep(out, self.max_tokens)
            rec["eps"] = float(eps)

    def _norm_module(self, module, args, out):
        if self.combiner:
            self._main_x(out, module.variance_epsilon)

    def _draft_logits(self, args, kwargs, out):
        self._base = out.detach().clone()
        self._step = 0

    def _markov_embed(self, args, kwargs, out):
        self.markov.append({"prev_ids": args[0].detach().clone(), "embed": out.detach().clone()})

    def _sampled(self, args, kwargs, out):
        if not self.markov or self._base is None:
            return  # a drafter's own sample_sequential ran the steps: nothing to pair
        rec = self.markov[-1]
        reqs = args[0].shape[0]
        base = self._base.view(reqs, -1, self._base.shape[-1])
        rec["logits_in"] = base[:, self._step].clone()
        rec["logits"] = args[0].detach().clone()
        rec["token"] = out.detach().clone()
        self._step += 1

    def _confidence(self, args, kwargs, out):
        self.conf.append({"hidden": args[0].detach().clone(), "markov_embed": args[1].detach().clone(),
                          "confidence": out.detach().clone()})

    # ---- writing ----
    def write(self, path: str, generator: str = "mtpcheck capture (vLLM DSpark)",
              description: str | None = None) -> list[str]:
        """Writes every complete record as one case; returns the case ids."""
        m = self.inner
        ids = []
        with Dump(path, generator=generator, description=description) as d:
            for i, c in enumerate(self.combiner):
                if "main_x" not in c:
                    continue
                w = (getattr(m, "fc", None) or m.main_proj).weight
                t, hp = c["aux"].shape
                h = w.shape[0]
                cid = "main_proj_norm.block%d" % i
                d.case(cid, op="main_proj_norm", family=FAMILY,
                       attrs={"eps": c["eps"], "rounding": "eager"},
                       inputs={"aux": c["aux"].view(t, hp // h, h), "main_proj_weight": w.detach(),
                               "main_norm_weight": self.norm_weight().detach()},
                       observed={"main_proj_out": c["proj_out"], "main_x": c["main_x"]})
                ids.append(cid)
            w1, w2 = m.markov_head.markov_w1.weight, m.markov_head.markov_w2.weight
            scale = float(getattr(self.model.logits_processor, "scale", 1.0))
            markov_attrs = {"logit_scale": scale} if scale != 1.0 else {}  # Step DS-6
            for k, s in enumerate(self.markov):
                if "logits" not in s or self.topk or w1.shape != w2.shape:  # top-k; d2t
                    continue
                observed = {"markov_embed": s["embed"], "logits": s["logits"]}
                if self.greedy:
                    observed["token"] = s["token"].long()
                cid = "markov_bias.step%d" % k
                d.case(cid, op="markov_bias", family=FAMILY, attrs=markov_attrs,
                       inputs={"logits_in": s["logits_in"], "prev_ids": s["prev_ids"].long(),
                               "markov_w1": w1.detach(), "markov_w2": w2.detach()},
                       observed=observed)
                ids.append(cid)
            if self.mhc is not None:
                ids += self.mhc.write(d, FAMILY)
            head = m.confidence_head
            for i, c in enumerate(self.conf):
                inputs = {"hidden": c["hidden"], "weight": head.proj.weight.detach()}
                emb = c["markov_embed"] if head.with_markov else c["markov_embed"][:, :0]
                inputs["markov_embed"] = emb
                if head.proj.bias is not None:
                    inputs["bias"] = head.proj.bias.detach()
                cid = "confidence.block%d" % i
                d.case(cid, op="confidence", family=FAMILY, inputs=inputs,
                       observed={"confidence": Tensor(c["confidence"].float())})
                ids.append(cid)
        return ids


_ABSENT = object()
