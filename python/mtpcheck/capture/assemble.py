"""From recorded chains to a captured-block dump (FORMAT.md v2): one
`draft_chain` case per chain (when its steps line up: same rows, positions
advancing by one) and one `mtp_step` case per step.  Weights are written once
and linked from every case that uses them.

A chain whose head or embedding table is too large for the bound (every real
vocabulary) is not written as a `draft_chain`: the harness judges row subsets
on `mtp_step` cases only.  Its steps are then the judged cases, each with the
`prev_hidden` the engine fed it and, as `observed/recycled`, what the engine
fed the next step; they say so in their `split_from` and `description`
attributes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..dump import FAMILY_MHC, Dump, Tensor, set_attr

if TYPE_CHECKING:
    import torch

    from . import Capture
    from .recorder import Step
    from .specs import LayerSpec

V3_BLOCK = ("block_in", "block_out", "block_residual")
V4_BLOCK = ("block_in", "block_out", "block_residual", "post_mix", "comb_mix")


def _np_int(t):
    return t.to("cpu").long().numpy()


def _subset(param, rows):
    """Rows of a [V,H] weight (FORMAT.md v2 rules 1, 2): the dataset, full_rows
    on it, and the companion `<p>_rows`. live_sha256 is left out (on a subset it
    is informational, and hashing the whole table would copy it)."""
    idx = torch_rows(rows, param.device)
    return Tensor(param.detach()[idx], full_rows=int(param.shape[0])), Tensor(rows, "int64")


def torch_rows(rows: np.ndarray, device: torch.device | str) -> torch.Tensor:
    import torch

    return torch.as_tensor(rows, dtype=torch.long, device=device)


def layer_weights(spec: LayerSpec, layer: torch.nn.Module, root: torch.nn.Module,
                  head_rows: np.ndarray | None = None) -> dict[str, Tensor]:
    """dump name -> Tensor of the layer's parameters (live_sha256 = what the
    engine held), skipping the ones this layer does not have; the head as a
    row subset when `head_rows` is given."""
    out = {}
    for name, dotted in spec.weights.items():
        if dotted.startswith(".."):
            param = spec.weight(root, dotted[2:])
        else:
            param = spec.weight(layer, dotted)
        if param is None or not hasattr(param, "detach"):
            continue
        if name == "head_weight" and head_rows is not None:
            out["head_weight"], out["head_rows"] = _subset(param, head_rows)
            continue
        t = Tensor(param.detach())
        t.attrs["live_sha256"] = t.sha256()
        out[name] = t
    return out


def case_attrs(capture: Capture, step: Step, family: str) -> dict[str, Any]:
    attrs = dict(step.spec.extra_attrs(step.module))
    attrs.update(step.spec.conventions_of(step.module))
    attrs["block"] = "captured"
    logits = step.tensors.get("logits")
    if (logits is not None and attrs.get("logits_dtype") == "bfloat16"
            and str(logits.dtype) == "torch.float32"
            and bool((logits.bfloat16().float() == logits).all())):
        # a spec that declares bf16 logits an engine hands over as float32:
        # stored as the bf16 they are (exactly; otherwise the stored dtype
        # decides and verify names the mismatch)
        logits = step.tensors["logits"] = logits.bfloat16()
    if logits is not None:
        tag = str(logits.dtype).replace("torch.", "")
        if tag in ("bfloat16", "float32"):
            attrs["logits_dtype"] = tag
    attrs.update(capture.engine_conventions(step))
    if not FAMILY_MHC[family]:
        for key in ("hc_mult", "hc_eps", "sinkhorn_iters", "block_contract", "post_mult",
                    "hc_head_variant"):
            attrs.pop(key, None)
    return attrs


def _block_tensors(step, family):
    names = V4_BLOCK if FAMILY_MHC[family] else V3_BLOCK
    out = {}
    for name in names:
        t = step.tensors.get(name)
        if t is None:
            continue
        if name == "post_mix" and t.dim() == 3 and t.shape[-1] == 1:
            t = t[..., 0]
        out[name] = t
    return out


def _observed(capture, chain, s, family, head_rows=None):
    step = chain[s]
    obs = {}
    nxt = chain[s + 1] if s + 1 < len(chain) else None
    rows = step.tensors["prev_hidden"].shape[0] if "prev_hidden" in step.tensors else None
    if nxt is not None and "prev_hidden" in nxt.tensors and nxt.tensors["prev_hidden"].shape[0] == rows:
        if capture.recycles:
            obs["recycled"] = nxt.tensors["prev_hidden"]  # what the engine fed to the next step
        if "input_ids" in nxt.tensors:
            obs["token"] = Tensor(_np_int(nxt.tensors["input_ids"]), "int64")
    elif capture.recycles:
        recycled = capture.recycled_of(step)
        if recycled is not None:
            obs["recycled"] = recycled
    if "logits" in step.tensors and step.tensors["logits"].shape[0] == rows:
        obs["logits"] = step.tensors["logits"]
        if head_rows is not None:
            obs["logits"] = obs["logits"][:, torch_rows(head_rows, "cpu")]
            obs["logits_rows"] = Tensor(head_rows, "int64")
        if not FAMILY_MHC[family] and "hidden_post" in step.tensors:
            obs["hidden_post"] = step.tensors["hidden_post"]
    return obs


def _chain_layout(chain):
    """(max_position or None, problem or None): do the steps line up as a
    draft_chain (FIXTURES: ids_s = next_tokens[s-1], positions + s)?"""
    need = ("input_ids", "positions", "prev_hidden", "block_in")
    for st in chain:
        missing = [n for n in need if n not in st.tensors]
        if missing:
            return None, "step %d lacks %s" % (st.index, ", ".join(missing))
    rows = {st.tensors["positions"].shape[0] for st in chain}
    if len(rows) != 1:
        return None, "the steps have different token counts %s" % sorted(rows)
    p0 = _np_int(chain[0].tensors["positions"])
    clamp = None
    for st in chain[1:]:
        p = _np_int(st.tensors["positions"])
        want = p0 + st.index
        if np.array_equal(p, want):
            continue
        top = int(p.max())
        if np.array_equal(p, np.minimum(want, top)) and clamp in (None, top):
            clamp = top
            continue
        return None, "step %d positions are not step 0's + %d" % (st.index, st.index)
    return clamp, None


def _ids_used(chains):
    ids = [_np_int(st.tensors[n]) for ch in chains for st in ch for n in ("input_ids",)
           if n in st.tensors]
    return np.unique(np.concatenate(ids)) if ids else np.zeros(0, dtype=np.int64)


def _too_big(param, max_bytes):
    return param is not None and param.numel() * param.element_size() > max_bytes // 8


def head_subset(capture: Capture, max_bytes: int, top: int = 16) -> np.ndarray | None:
    """Rows of the head to keep when the head is large: the top logits of every
    captured row and every token the engine fed on (rule 6: the token must be
    listed). None: the head is written whole."""
    spec = capture.recorder.chains[0][0].spec
    dotted = spec.weights["head_weight"]
    layer = capture.layer_modules[0]
    owner = capture.root_of(layer) if dotted.startswith("..") else layer
    param = spec.weight(owner, dotted.lstrip("."))
    if not _too_big(param, max_bytes):
        return None
    rows = [_ids_used(capture.recorder.chains)]
    for chain in capture.recorder.chains:
        for st in chain:
            if "logits" in st.tensors:
                k = min(top, st.tensors["logits"].shape[-1])
                rows.append(st.tensors["logits"].float().topk(k, dim=-1).indices.numpy().ravel())
    return np.unique(np.concatenate(rows)).astype(np.int64)


def split_reason(capture: Capture, head_rows: np.ndarray | None, max_bytes: int) -> str | None:
    """Why the chains cannot be draft_chain cases (None: they can): a draft
    chain would carry a row subset of the head or of the embedding table,
    which the harness does not judge on a chain."""
    table = capture.embed_table()
    big = (["the head"] if head_rows is not None else []) + \
        (["the embedding table"] if _too_big(table, max_bytes) else [])
    if not big:
        return None
    return ("%s exceed%s max_bytes/8 and would be row subsets, which the harness judges on "
            "mtp_step cases only" % (" and ".join(big), "" if len(big) == 2 else "s"))


def _split_attrs(c, s, n, why):
    return {"split_from": "chain%d" % c,
            "description": "draft step %d of %d of chain%d, written as its own mtp_step instead "
                           "of a draft_chain case: %s; prev_hidden is what the engine fed this "
                           "step, observed/recycled what it fed the next" % (s, n, c, why)}


def write(capture: Capture, path: str, generator: str,
          max_bytes: int) -> tuple[list[str], list[str]]:
    """Writes the dump; returns (case ids, notes)."""
    cases, notes = [], list(capture.recorder.notes)
    head_rows = head_subset(capture, max_bytes)
    if head_rows is not None:
        notes.append("head written as %d rows (top logits and tokens); logits judged there" %
                     len(head_rows))
    split = split_reason(capture, head_rows, max_bytes)
    with Dump(path, generator, description=capture.describe(), max_bytes=max_bytes) as d:
        for c, chain in enumerate(capture.recorder.chains):
            family = chain0_family(chain)
            weights = {l: layer_weights(chain[0].spec, m, capture.root_of(m), head_rows)
                       for l, m in enumerate(capture.layer_modules)}
            clamp, problem = _chain_layout(chain)
            if problem is None and split is None:
                cases.append(_write_chain(d, capture, c, chain, family, weights, clamp))
            elif problem is None:
                notes.append("chain %d: written as its %d steps (mtp_step cases), not as a "
                             "draft_chain: %s" % (c, len(chain), split))
            else:
                notes.append("chain %d: no draft_chain case: %s" % (c, problem))
            for s, step in enumerate(chain):
                cid = "chain%d.step%d.layer%d" % (c, s, step.layer)
                inputs = {k: step.tensors[k] for k in ("embeds", "positions", "prev_hidden")
                          if k in step.tensors}
                if "positions" in inputs:
                    inputs["positions"] = Tensor(_np_int(inputs["positions"]), "int64")
                inputs.update(weights[step.layer])
                inputs.update(_block_tensors(step, family))
                attrs = case_attrs(capture, step, family)
                if split is not None and problem is None:
                    attrs.update(_split_attrs(c, s, len(chain), split))
                d.case(cid, op="mtp_step", family=family, attrs=attrs,
                       inputs=inputs, observed=_observed(capture, chain, s, family, head_rows))
                cases.append(cid)
        if capture.handoff is not None and capture.recorder.chains:
            cases.append(_write_handoff(d, capture.handoff,
                                        chain0_family(capture.recorder.chains[0])))
        if notes:
            set_attr(d.f, "description", capture.describe() + "; " + "; ".join(notes))
    return cases, notes


def chain0_family(chain: list[Any]) -> str:
    return chain[0].spec.family_of(chain[0].module)


def _write_handoff(d, handoff, family):
    """The target's hand-off to step 0 as a `target_handoff` case (SPEC.md
    §5.5): the engine's own tensors; the hidden step 0 received is observed.
    Eager rounding: the engines' torch-native RMSNorm (add_norm_input is left
    to the judge to resolve), unless the hand-off names its own (a
    GemmaRMSNorm rounds once, SPEC.md §2.6)."""
    if FAMILY_MHC[family]:
        raise ValueError("target_handoff: an mHC target's hand-off has no op yet")
    inputs = {k: Tensor(handoff[k]) for k in ("target_hidden", "target_residual",
                                               "target_norm_weight")}
    attrs = {"eps": handoff["eps"], "rounding": handoff.get("rounding", "eager"),
             "description": "the target's last decoder layer and final norm, run by the "
                            f"engine: {handoff['source']}"}
    d.case("handoff", op="target_handoff", family=family, attrs=attrs, inputs=inputs,
           observed={"handoff": Tensor(handoff["handoff"])})
    return "handoff"


def _write_chain(d, capture, c, chain, family, weights, clamp):
    s0 = chain[0]
    L = len(capture.layer_modules)
    # The contract, not what ran (SPEC.md §5.4): a model of L >= 2 MTP layers picks
    # layer spec_step_idx % L in its own forward, so step s is meant to run layer
    # s % L; a path that drops spec_step_idx runs layer 0 at every step, which the
    # judge then names SPEC_STEP_LAYER_REUSE. Each step's own case says what ran.
    pass_idx = 1 if L > 1 else 0
    for st in chain[1:]:  # every step's logits stored as the first's (case_attrs)
        case_attrs(capture, st, family)
    attrs = case_attrs(capture, s0, family)
    attrs.update(num_steps=len(chain), num_layers=L, pass_step_idx=pass_idx)
    if clamp is not None:
        attrs["max_position"] = clamp
    inputs = {"input_ids": Tensor(_np_int(s0.tensors["input_ids"]), "int64"),
              "positions": Tensor(_np_int(s0.tensors["positions"]), "int64"),
              "prev_hidden": s0.tensors["prev_hidden"]}
    table = capture.embed_table()  # whole: a table too large splits the chain (split_reason)
    if table is not None:
        inputs["embed_table"] = Tensor(table.detach())
    if len(chain) > 1:
        nt = np.stack([_np_int(st.tensors["input_ids"]) for st in chain[1:]])
        inputs["next_tokens"] = Tensor(nt, "int64")
    for l, w in weights.items():
        for name, t in w.items():
            inputs["layer.%d/%s" % (l, name)] = t
    observed = {}
    for s, st in enumerate(chain):
        for name, t in _block_tensors(st, family).items():
            inputs["step.%d/%s" % (s, name)] = t
        for name, t in _observed(capture, chain, s, family).items():
            observed["step.%d/%s" % (s, name)] = t
    cid = "chain%d" % c
    d.case(cid, op="draft_chain", family=family, attrs=attrs, inputs=inputs, observed=observed)
    return cid
