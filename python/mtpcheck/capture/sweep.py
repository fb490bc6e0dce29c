"""`python -m mtpcheck.capture sweep`: every MTP draft family mtpcheck can
build from the engine's own classes, captured under every proposer path the
engine's configuration selects, judged by `mtpcheck verify`.

Why: an engine ships many MTP families and more than one draft loop; a bug
lives in one (family, path) pair (docs/FINDINGS.md F1). The sweep builds each
family's tiny model (tiny_vllm: vLLM's classes, attention replaced by a linear
stand-in, the block captured as a black box), asks vLLM which proposer each
runner would build for that configuration (the V1 runner's if-chain on the
speculative config's own predicates; the V2 runner's `init_speculator`), runs
the draft loop through that path's own unpacking code, and writes
DIR/findings.json and DIR/findings.md. Nothing here declares a verdict: the
records carry what verify said, and `--check FILE` compares them with a
committed set (docs/findings/vllm-0.33.0.json)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import types
from typing import Any

K, T = 3, 4  # draft steps, token rows (row 0 at position 0: the mask is exercised)
# families with more than one MTP layer: the layer count (vLLM wants the drafted
# tokens a multiple of it: 2 layers draft 4); every other family has one layer
LAYERS = {"deepseek_v3_2layers": 2, "deepseek_v4_amd_2layers": 2, "minimax_m3_2modules": 2}

# sweep family -> (tiny model type, mtpcheck family row, the engine source)
FAMILIES = {
    "deepseek_v3": ("deepseek_v3", "deepseek_v3",
                    "vllm/model_executor/models/deepseek_mtp.py"),
    # two MTP layers: the V2 runner picks the multi-module speculator (use_multi_module_mtp)
    "deepseek_v3_2layers": ("deepseek_v3", "deepseek_v3",
                            "vllm/model_executor/models/deepseek_mtp.py"),
    "glm4_moe": ("glm4_moe", "glm", "vllm/model_executor/models/glm4_moe_mtp.py"),
    "glm4_moe_lite": ("glm4_moe_lite", "glm4_moe_lite",
                      "vllm/model_executor/models/glm4_moe_lite_mtp.py"),
    # GLM-OCR's layer is glm's row: eh_proj over [e, h], a GQA block (Glm4DecoderLayer),
    # the target's lm_head loaded as shared_head.head (glm_ocr_mtp.py load_weights)
    "glm_ocr": ("glm_ocr", "glm", "vllm/model_executor/models/glm_ocr_mtp.py"),
    # LongCat-Flash: V3's math; no position-0 mask and a fused final add (conventions)
    "longcat_flash": ("longcat_flash", "deepseek_v3",
                      "vllm/model_executor/models/longcat_flash_mtp.py"),
    # HY V3: V3's math, the final norm inside the layer (final_layernorm, unfused add)
    "hy_v3": ("hy_v3", "deepseek_v3", "vllm/model_executor/models/hy_v3_mtp.py"),
    # HY V4: HY V3's layer with the mask in the predictor and a fused final add
    "hy_v4": ("hy_v4", "deepseek_v3", "vllm/models/hy_v4/nvidia/mtp.py"),
    # Dots3Note: V3.2's layer contract (Triton input norms, run by the interpreter)
    "dots3_note": ("dots3_note", "deepseek_v3", "vllm/models/dots3_note/nvidia/mtp.py"),
    # GLM-5-Next: V3.2's glue (Triton fused_eh_norm, run by the interpreter), the layer's own tuple
    "glm5_next": ("glm5_next", "deepseek_v3", "vllm/models/glm5next/common/mtp.py"),
    # DeepSeek V3.2 and GLM-5 (`glm_moe_dsa`): the DSA model's MTP layer from the
    # CUDA module (fused Triton input norms, the final add fused into
    # shared_head.norm) and from the ROCm one (the final add unfused); the
    # registry hands a CPU deepseek_mtp.py instead (tiny_vllm.IN_PROCESS)
    "deepseek_v32": ("deepseek_v32", "deepseek_v3", "vllm/models/deepseek_v32/nvidia/mtp.py"),
    "deepseek_v32_amd": ("deepseek_v32_amd", "deepseek_v3", "vllm/models/deepseek_v32/amd/mtp.py"),
    "glm_moe_dsa": ("glm_moe_dsa", "deepseek_v3", "vllm/models/deepseek_v32/nvidia/mtp.py"),
    # OpenPangu Ultra MoE: DeepSeek V3's layer (a subclass), its own draft architecture
    "openpangu": ("pangu_ultra_moe", "deepseek_v3", "vllm/model_executor/models/openpangu_mtp.py"),
    # blocks written inline in the layer, read at its sub-modules (specs.block_taps):
    # Bailing V2.5 / V3 and MiMo-V2, V3's math with the final norm in the layer
    "bailing_v2_5": ("bailing_hybrid", "deepseek_v3", "vllm/model_executor/models/bailing_moe_mtp.py"),
    "bailing_v3": ("bailing_v3", "deepseek_v3", "vllm/model_executor/models/bailing_moe_v3_mtp.py"),
    "mimo_v2": ("mimo_v2", "deepseek_v3", "vllm/model_executor/models/mimo_v2_mtp.py"),
    # MiMo-V2-Omni: MiMo-V2's layer class under its own draft architecture
    "mimo_v2_omni": ("mimo_v2_omni", "deepseek_v3", "vllm/model_executor/models/mimo_v2_mtp.py"),
    # EXAONE: the predictor is the layer, wrapped by @support_torch_compile (hooks.wrap_forward)
    "exaone_moe": ("exaone_moe", "deepseek_v3", "vllm/model_executor/models/exaone_moe_mtp.py"),
    "exaone4_5": ("exaone4_5", "deepseek_v3", "vllm/model_executor/models/exaone4_5_mtp.py"),
    # Nemotron-H: a block of sublayers (attention, MoE), the embedding and head the target's
    "nemotron_h": ("nemotron_h", "deepseek_v3", "vllm/model_executor/models/nemotron_h_mtp.py"),
    # Qwen3-Next: fc glue, zero-centred (GemmaRMSNorm) norms: its own row
    "qwen3_next": ("qwen3_next", "qwen3_next", "vllm/model_executor/models/qwen3_next_mtp.py"),
    # Qwen3.5 as released (multimodal config), and a text-only config, which vLLM's
    # speculative config also accepts (`qwen3_5_text`)
    "qwen3_5": ("qwen3_5", "qwen3_next", "vllm/model_executor/models/qwen3_5_mtp.py"),
    "qwen3_5_text": ("qwen3_5_text", "qwen3_next", "vllm/model_executor/models/qwen3_5_mtp.py"),
    # Qwen3.5-MoE (Qwen3_5MoeMTP): the same layer over an MoE block (dense stand-in)
    "qwen3_5_moe": ("qwen3_5_moe", "qwen3_next", "vllm/model_executor/models/qwen3_5_mtp.py"),
    # InternS2-Mobius (InternS2MobiusMTP, a Qwen3_5MoeMTP subclass built on the draft config)
    "interns2_mobius": ("interns2_mobius", "qwen3_next",
                        "vllm/model_executor/models/interns2_mobius.py"),
    # Step-3.5: V3's glue, zero-centred norms, the pre-norm sum chained (its own row);
    # V1 runs its own Step3p5MTPProposer
    "step3p5": ("step3p5", "step3p5", "vllm/model_executor/models/step3p5_mtp.py"),
    # Step5: Step-3.5's shape (zero-centred norms, the pre-norm sum fed forward)
    "step5": ("step5", "step3p5", "vllm/models/step5/nvidia/mtp.py"),
    # MiMo-7B: input_proj over [hidden, embedding], hidden first (the mimo row)
    "mimo": ("mimo", "mimo", "vllm/model_executor/models/mimo_mtp.py"),
    # Kimi K3: V3.2's glue (Triton fused_mtp_input, run by the interpreter), the
    # pre-norm sum fed forward on purpose (its own row)
    "kimi_k3": ("kimi_k3", "kimi_k3", "vllm/models/kimi_k3/nvidia/mtp.py"),
    # the same layer as vLLM builds it on ROCm (its amd modules: no CUDA stream,
    # a block returning (output, residual))
    "kimi_k3_amd": ("kimi_k3_amd", "kimi_k3", "vllm/models/kimi_k3/amd/mtp.py"),
    # MiniMax M3: V3's glue (mask, enorm, hnorm, eh_proj), zero-centred norms
    # (MiniMAXGemmaRMSNorm, 1 + w), the final norm in compute_logits: the qwen3_next
    # row's norm form. nvidia: FlashInfer's norm kernels stood in (torch, their
    # math); amd: its own Triton norms (interpreter)
    "minimax_m3": ("minimax_m3", "qwen3_next", "vllm/models/minimax_m3/nvidia/mtp.py"),
    "minimax_m3_amd": ("minimax_m3_amd", "qwen3_next", "vllm/models/minimax_m3/amd/mtp.py"),
    # two MTP modules (num_mtp_modules = 2, which use_multi_module_mtp() does not read)
    "minimax_m3_2modules": ("minimax_m3", "qwen3_next", "vllm/models/minimax_m3/nvidia/mtp.py"),
    # Inkling: hidden first, two norms on the embedding (Triton, interpreter), the
    # chain norm, logits over the mup width multiplier (its own row); one depth
    "inkling": ("inkling", "inkling", "vllm/models/inkling/nvidia/mtp.py"),
    "inkling_amd": ("inkling_amd", "inkling", "vllm/models/inkling/amd/mtp.py"),
    # ERNIE 4.5: V3's glue; its contract's final norm is the target's (FastDeploy)
    "ernie": ("ernie4_5_moe", "deepseek_v3", "vllm/model_executor/models/ernie_mtp.py"),
    # DeepSeek V4: vLLM's amd module as on a gfx942 GPU (vllm_standins_v4), one
    # and two MTP layers (two: the V2 runner's multi-module speculator)
    "deepseek_v4_amd": ("deepseek_v4", "deepseek_v4", "vllm/models/deepseek_v4/amd/mtp.py"),
    "deepseek_v4_amd_2layers": ("deepseek_v4", "deepseek_v4",
                                "vllm/models/deepseek_v4/amd/mtp.py"),
}
# what the findings are compared on (wall times, paths and notes aside)
COMPARED = ("engine", "version", "family", "row", "architecture", "path", "verdict", "cases",
            "diagnoses")


class EngineError(Exception):
    """The engine's code raised inside a draft step (a finding: the path cannot
    run this family), as opposed to the sweep failing to set the step up."""


def _v1_path(vcfg):
    """The V1 runner's drafter for this config: gpu_model_runner.py picks it
    with the speculative config's own predicates, in this order."""
    spec = vcfg.speculative_config
    for predicate, name in (("use_gemma4_mtp", "Gemma4Proposer"),
                            ("use_step3p5_mtp", "Step3p5MTPProposer"),
                            ("use_eagle", "EagleProposer")):
        if getattr(spec, predicate, lambda: False)():
            return name
    return None


def v1_refusal(vcfg: Any) -> list:
    """What vLLM's V1 runner refuses for this target (VllmConfig's own
    `_get_v1_model_runner_unsupported_features`, asked with the target's model
    config, as the engine's config validation asks it: Step5): [] when none."""
    import copy

    probe = copy.copy(vcfg)
    object.__setattr__(probe, "model_config", vcfg.speculative_config.target_model_config)
    return list(probe._get_v1_model_runner_unsupported_features())


def _v2_speculator(vcfg):
    """The V2 runner's speculator class, built by vLLM's init_speculator."""
    import torch
    from vllm.v1.worker.gpu.spec_decode import init_speculator

    return type(init_speculator(vcfg, torch.device("cpu"), None))


def _v1_step(model, vcfg):
    """One draft step as llm_base_proposer.propose() runs it: the model called
    without spec_step_idx, its return unpacked by model_returns_tuple()."""
    from .tiny_vllm import proposer_returns_tuple

    returns_tuple = proposer_returns_tuple(vcfg)

    def step(ids, pos, hidden, s):  # s: not passed, as propose() passes none
        ret = model(input_ids=ids, positions=pos, hidden_states=hidden)
        return ret if returns_tuple else (ret, ret)
    # logits as propose() takes them (llm_base_proposer.py): compute_logits, no step index
    step.logits = lambda hidden, s: model.compute_logits(hidden)
    return step, returns_tuple


def _v1_own_step(model, vcfg, cls):
    """One draft step as a model-specific V1 proposer runs it
    (`Step3p5MTPProposer.propose`, v1/spec_decode/step3p5.py): the model called
    with `spec_step_idx`, its return unpacked by the proposer's own
    `model_returns_tuple()`, the logits and greedy token by its own
    `_sample_draft_tokens_for_step`, which passes the step index on."""
    import torch

    fake = types.SimpleNamespace(
        method=vcfg.speculative_config.method, speculative_config=vcfg.speculative_config,
        draft_model_config=vcfg.speculative_config.draft_model_config, vllm_config=vcfg,
        model=model, _enable_probabilistic_draft_probs=False, use_local_argmax_reduction=False)
    returns_tuple = bool(cls.model_returns_tuple(fake))

    def step(ids, pos, hidden, s):
        ret = model(input_ids=ids, positions=pos, hidden_states=hidden, spec_step_idx=s)
        return ret if returns_tuple else (ret, ret)

    def logits(hidden, s):  # what the proposer's sampler computes, kept as logits
        out = []
        orig = model.compute_logits

        def keep(*a, **k):
            out.append(orig(*a, **k))
            return out[-1]
        model.compute_logits = keep
        try:
            cls._sample_draft_tokens_for_step(fake, hidden, types.SimpleNamespace(all_greedy=True),
                                              spec_step_idx=s)
        finally:
            del model.compute_logits
        return out[-1] if out else torch.empty(0)
    step.logits = logits
    return step, returns_tuple


def _v1_proposer_class(name):
    """The class of a model-specific V1 proposer the sweep runs, by name."""
    if name == "Step3p5MTPProposer":
        from vllm.v1.spec_decode.step3p5 import Step3p5MTPProposer

        return Step3p5MTPProposer
    return None


def _v2_step(model, vcfg, cls):
    """One draft step through the speculator's own `_run_model`, bound to a
    stand-in holding the buffers it reads; a `_run_model` that takes the
    module index (the multi-module speculator) gets the step, as its loop
    passes it."""
    import inspect

    import torch

    takes_idx = "spec_module_idx" in inspect.signature(cls._run_model).parameters

    def step(ids, pos, hidden, s):
        fake = types.SimpleNamespace(
            input_buffers=types.SimpleNamespace(input_ids=ids, positions=pos),
            pcp_manager=None, vllm_config=vcfg, supports_mm_inputs=False, inputs_embeds=None,
            hidden_states=hidden, model=model, prefill_cudagraph_manager=None,
            cudagraph_manager=None)
        with torch.no_grad():
            if takes_idx:
                return cls._run_model(fake, ids.shape[0], None, None, None, spec_module_idx=s)
            return cls._run_model(fake, ids.shape[0], None, None, None)

    def logits(hidden, s):  # the speculator's own compute_draft_logits (its step index)
        return cls.compute_draft_logits(types.SimpleNamespace(model=model), hidden, s)
    step.logits = logits
    return step, None


def _draft(step, vcfg, ids, pos, hidden, steps):
    """K greedy draft steps; returns whether the last return was a tuple."""
    import torch
    from vllm.config import set_current_vllm_config
    from vllm.forward_context import set_forward_context

    with set_current_vllm_config(vcfg), set_forward_context(None, vcfg), torch.no_grad():
        for s in range(steps):
            last_hidden, hidden = step(ids, pos, hidden, s)
            ids = step.logits(last_hidden, s).argmax(dim=-1)
            pos = pos + 1


def paths_of(vcfg: Any) -> list:
    """(path name, the engine file, runner) for each runner's choice (no V1
    path where vLLM's V1 runner refuses the target: v1_refusal)."""
    out = []
    v1 = None if v1_refusal(vcfg) else _v1_path(vcfg)
    if v1 is not None:
        out.append(("v1:" + v1, "vllm/v1/worker/gpu_model_runner.py", "v1"))
    cls = _v2_speculator(vcfg)
    out.append(("v2:" + cls.__name__, cls.__module__.replace(".", "/") + ".py", cls))
    return out


def target_handoff(built: tuple, family: str | None = None) -> tuple:
    """(what the tiny target hands draft step 0, None) measured from vLLM's
    own target class (tiny_vllm.target_handoff), or (None, why not)."""
    from . import tiny_vllm

    if family is not None and mhc_row(FAMILIES[family][1]):
        return None, MHC_HANDOFF
    try:
        target, tvcfg = tiny_vllm.build_target(built[1])
        # the target's final norm, for a draft layer whose contract norms with
        # it (ERNIE: VLLM_ERNIE's shared_head_norm_weight); an attribute, not
        # a registered sub-module of the draft model
        object.__setattr__(built[0], "mtpcheck_target_norm", tiny_vllm.final_norm(target)[1])
        gen = torch_generator(5)
        tids = gen_ids(gen, tiny_vllm.V)
        return tiny_vllm.target_handoff(target, tvcfg, tids, row_positions()), None
    except Exception as e:  # noqa: BLE001 (the chain is still judged, fed a random hidden)
        return None, f"{type(e).__name__}: {_line(e)}"


MHC_HANDOFF = ("an mHC target hands step 0 its pre-hc_head streams, which the "
               "target_handoff op does not judge (SPEC.md §5.5)")


def mhc_row(row: str) -> bool:
    """Whether a family row's hidden is mHC streams (DeepSeek V4's)."""
    from ..dump import FAMILY_MHC

    return bool(FAMILY_MHC[row])


def hidden_width(family: str, vcfg: Any) -> int:
    """The width of the hidden a draft step is fed: H, or the M·H streams of
    an mHC row (DeepSeek V4: the target's pre-hc_head streams, flattened)."""
    from . import tiny_vllm

    if not mhc_row(FAMILIES[family][1]):
        return tiny_vllm.H
    return tiny_vllm.H * vcfg.speculative_config.draft_model_config.hf_config.hc_mult


def torch_generator(seed: int) -> Any:
    import torch

    return torch.Generator().manual_seed(seed)


def gen_ids(gen: Any, vocab: int) -> Any:
    """T token ids in [2, vocab)."""
    import torch

    return torch.randint(2, vocab, (T,), generator=gen)


def row_positions() -> Any:
    """The rows' positions: row 0 at position 0, so the mask is exercised."""
    import torch

    return torch.tensor([0, 7, 8, 20])


def step0_hidden(cap: Any, handoff: Any, gen: Any, hidden_size: int) -> Any:
    """What draft step 0 is fed: the target's measured hand-off (recorded in
    the dump as the `handoff` case), or a random hidden when none was measured."""
    import torch

    rand = torch.randn(T, hidden_size, generator=gen).to(torch.bfloat16)
    if handoff is None:
        return rand
    cap.record_handoff(handoff["hidden"], handoff["residual"], handoff["norm_weight"],
                       handoff["handoff"], handoff["eps"], handoff["source"],
                       handoff.get("rounding", "eager"))
    return handoff["handoff"]


def _capture_one(family, built, path_name, runner, outdir, handoff=None):
    """Drafts K steps of the built (model, vcfg) under one path with the
    capture hooks on and writes the dump; returns its path."""
    import torch

    from .. import capture
    from . import tiny_vllm

    model, vcfg = built
    k = _steps(family)
    if runner == "v1" and path_name == "v1:EagleProposer":
        step, rule = _v1_step(model, vcfg)
    elif runner == "v1":
        own = _v1_proposer_class(path_name.split(":", 1)[1])
        if own is None:
            raise RuntimeError("%s: a model-specific proposer, not run by the sweep" % path_name)
        step, rule = _v1_own_step(model, vcfg, own)
    else:
        step, rule = _v2_step(model, vcfg, runner)
    tag = path_name.split(":")[0]
    path = os.path.join(outdir, "%s.%s.h5" % (family, tag))
    if rule is None:  # V2: isinstance(ret, tuple) decides, on what the model returns
        try:  # probed before the hooks go on
            rule = _returns_tuple_now(model, vcfg, hidden_width(family, vcfg))
        except Exception as e:
            raise EngineError("%s: %s" % (type(e).__name__, _line(e))) from e
    cap = capture.install(engine="vllm", path=path, steps=k, model=model)
    cap.engine_info["notes"].append("proposer path %s" % path_name)
    cap.engine_info["returns_tuple"] = rule
    gen = torch.Generator().manual_seed(11)
    ids = gen_ids(gen, tiny_vllm.V)
    pos = row_positions()
    hidden = step0_hidden(cap, handoff, gen, hidden_width(family, vcfg))
    try:
        try:
            _draft(step, vcfg, ids, pos, hidden, k)
        except Exception as e:  # the engine's own draft step raised: a finding, not a setup error
            raise EngineError("%s: %s" % (type(e).__name__, _line(e))) from e
        cap.write()
    finally:
        cap.remove()
    return path


def _returns_tuple_now(model, vcfg, width):
    """What the V2 speculator's `isinstance(ret, tuple)` sees: one probe call."""
    import torch
    from vllm.config import set_current_vllm_config
    from vllm.forward_context import set_forward_context

    with set_current_vllm_config(vcfg), set_forward_context(None, vcfg), torch.no_grad():
        ret = model(input_ids=torch.tensor([3]), positions=torch.tensor([1]),
                    hidden_states=torch.zeros(1, width, dtype=torch.bfloat16))
    return isinstance(ret, tuple)


def _line(e):
    """An exception as one line of at most 200 characters (a table cell)."""
    return " ".join(str(e).split())[:200]


def _steps(family):
    return K if LAYERS.get(family, 1) == 1 else 2 * LAYERS[family]


def _version():
    import vllm

    return getattr(vllm, "__version__", "?")


def judge_one(family: str, built: tuple, path_name: str, runner: Any, outdir: str,
              binary: str, handoff: tuple = (None, "not measured")) -> dict:
    row = FAMILIES[family][1]
    rec = {"engine": "vllm", "version": _version(), "family": family, "row": row,
           "path": path_name, "path_source": runner if isinstance(runner, str) else None,
           "source": FAMILIES[family][2],
           "repro": "python -m mtpcheck.capture sweep --engine vllm --family %s --out DIR"
                    % family}
    vcfg = built[1]
    spec = vcfg.speculative_config
    rec["architecture"] = (spec.draft_model_config.hf_config.architectures or ["?"])[0]
    rec["handoff"] = handoff_note(handoff)
    try:
        dump = _capture_one(family, built, path_name, runner, outdir, handoff[0])
    except EngineError as e:
        rec.update(verdict="ENGINE_ERROR", cases={}, diagnoses=[], why=str(e))
        return rec
    except Exception as e:  # noqa: BLE001 -- a step that raises is a NOT_RUN record, not an abort
        rec.update(verdict="NOT_RUN", cases={}, diagnoses=[], why="%s: %s" % (type(e).__name__, _line(e)))
        return rec
    rec.update(verdict_of(dump, binary))
    return rec


def handoff_note(handoff: tuple) -> str:
    """The record's word on the step-0 hand-off: where it was measured, or why not."""
    measured, why = handoff
    return "measured: " + measured["source"] if measured is not None else "not measured: " + why


def verdict_of(dump: str, binary: str) -> dict:
    """What `mtpcheck verify` says of a captured dump, as a findings record's
    fields: the dump, each case's verdict, the diagnoses, each case's draft
    agreement by step, and the overall verdict (the exit code's)."""
    from .. import verify

    v = verify.run(dump, binary)
    rec = {"dump": os.path.basename(dump), "cases": dict(sorted(v.cases.items())),
           "diagnoses": sorted(set(v.diagnoses)), "agreement": dict(sorted(v.agreement.items())),
           "verdict": {0: "PASSED", 1: "FAILED"}.get(v.returncode, "ERROR (exit %d)" % v.returncode)}
    if v.returncode not in (0, 1):
        rec["why"] = v.text.strip().splitlines()[:1]
    return rec


def sweep(families: list, outdir: str, binary: str) -> list:
    from . import tiny_vllm

    os.makedirs(outdir, exist_ok=True)
    records = []
    for family in families:
        with tiny_vllm.run_scope(FAMILIES[family][0]):
            records.extend(_sweep_family(family, outdir, binary))
    return records


def _sweep_family(family: str, outdir: str, binary: str) -> list:
    """The records of one family: built, its paths asked of vLLM, its target's
    hand-off measured, each path drafted and judged."""
    from . import tiny_vllm

    records = []
    try:
        built = tiny_vllm.build(FAMILIES[family][0], os.path.join(outdir, "models"),
                                K=_steps(family), mtp_layers=LAYERS.get(family, 1))
        paths = paths_of(built[1])
        handoff = target_handoff(built, family)
    except Exception as e:  # noqa: BLE001 -- a family that does not build is a record, not an abort
        return [{"engine": "vllm", "version": _version(), "family": family,
                 "row": FAMILIES[family][1], "architecture": None, "path": "-",
                 "verdict": "NOT_RUN", "cases": {}, "diagnoses": [],
                 "why": "not built: %s: %s" % (type(e).__name__, _line(e)),
                 "source": FAMILIES[family][2]}]
    refused = v1_refusal(built[1])
    if refused:  # a record, so that the V1 path's absence is said
        records.append({"engine": "vllm", "version": _version(), "family": family,
                        "row": FAMILIES[family][1], "path": "v1", "verdict": "NOT_RUN",
                        "architecture": built[1].speculative_config.draft_model_config
                        .hf_config.architectures[0], "cases": {}, "diagnoses": [],
                        "why": "vLLM's V1 runner refuses this target (VllmConfig."
                               "_validate_v1_model_runner): %s" % ", ".join(refused),
                        "source": FAMILIES[family][2]})
    for path_name, source, runner in paths:
        rec = judge_one(family, built, path_name, runner, outdir, binary, handoff)
        rec["path_source"] = source
        records.append(rec)
    return records


def markdown(records: list) -> str:
    lines = ["| family | row | architecture | proposer path | verdict | diagnoses |",
             "|---|---|---|---|---|---|"]
    for r in records:
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            r["family"], r["row"], r.get("architecture") or "-", r["path"], r["verdict"],
            ", ".join(r["diagnoses"]) or r.get("why", "-") if r["verdict"] != "PASSED" else "-"))
    return "\n".join(lines) + "\n"


def compare(records: list, expected_path: str) -> list:
    """Differences between a fresh sweep and a committed one, one line each."""
    with open(expected_path) as f:
        expected = json.load(f)["records"]
    key = lambda r: (r["family"], r["path"])
    have = {key(r): r for r in records}
    diffs = []
    for e in expected:
        r = have.pop(key(e), None)
        if r is None:
            diffs.append("%s %s: in %s, not in this sweep" % (key(e) + (expected_path,)))
            continue
        for field in COMPARED:
            if r.get(field) != e.get(field):
                diffs.append("%s %s: %s is %r, %s says %r" % (key(e) + (field, r.get(field),
                                                                         expected_path,
                                                                         e.get(field))))
    for k in have:  # a family or path added to the sweep is committed with its findings
        diffs.append("%s %s: new in this sweep, not in %s" % (k + (expected_path,)))
    return diffs


def main(argv: list | None = None) -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--engine", choices=("vllm", "sglang"), default="vllm")
    if pre.parse_known_args(argv)[0].engine == "sglang":  # its own families and loop
        from .sweep_sglang import main as sglang_main

        return sglang_main(argv)
    p = argparse.ArgumentParser(prog="python -m mtpcheck.capture sweep", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", choices=("vllm", "sglang"), default="vllm",
                   help="sglang: sweep_sglang.py (SGLang's NextN/MTP families)")
    p.add_argument("--family", action="append", choices=sorted(FAMILIES),
                   help="one family (repeatable; default: all of %s)" % ", ".join(FAMILIES))
    p.add_argument("--out", help="folder for the dumps, findings.json, findings.md (required)")
    p.add_argument("--check", default=None,
                   help="compare with this committed findings file; exit 1 on a difference")
    p.add_argument("--list", action="store_true", help="print the families and exit")
    a = p.parse_args(argv)
    if a.list:
        for name, (mt, row, src) in FAMILIES.items():
            print("%-14s row %-14s model_type %-14s %s" % (name, row, mt, src))
        return 0
    if a.out is None:
        p.error("--out DIR is required")
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    # the Triton kernels of Dots3Note, GLM-5-Next and DeepSeek V4 run on a CPU only
    # under Triton's interpreter, chosen before vLLM imports Triton (and with no
    # visible GPU, or vLLM turns Triton off): vllm_standins.triton_interpreter_rounding
    os.environ.setdefault("TRITON_INTERPRET", "1")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    if os.environ["TRITON_INTERPRET"] == "1":  # every dump then says the same of its stores
        from .vllm_standins import triton_interpreter_rounding

        triton_interpreter_rounding()
    from .. import verify

    binary = verify.find_binary()
    if binary is None:
        print("mtpcheck.capture sweep: no mtpcheck binary (set MTPCHECK_BIN)", file=sys.stderr)
        return 2
    records = sweep(a.family or list(FAMILIES), a.out, binary)
    return write_findings(a.out, {"engine": "vllm", "version": _version(), "steps": K},
                          records, a.check)


def write_findings(outdir: str, head: dict, records: list, check: str | None) -> int:
    """DIR/findings.json (head's fields and the records) and findings.md,
    the table also on stdout; with check, the exit code of comparing the
    records with that committed file (1 on a difference, each on stderr)."""
    with open(os.path.join(outdir, "findings.json"), "w") as f:
        json.dump(dict(head, records=records), f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(outdir, "findings.md"), "w") as f:
        f.write(markdown(records))
    sys.stdout.write(markdown(records))
    if check is None:
        return 0
    diffs = compare(records, check)
    for d in diffs:
        print("sweep differs: " + d, file=sys.stderr)
    return 1 if diffs else 0
